/**
 * A tool's arguments checked as REST checks the same request: ajv validators compiled
 * once from the tool input schemas (on the instance REST's body validation uses,
 * ajv.ts), values read as REST reads the same text (Pydantic's lax mode), and every
 * refusal written as `field: rule` lines an agent can act on.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { MCP_TOOL_INPUT_SCHEMAS, type McpToolName } from '../../schemas/index.js';
import { ajv } from '../api/ajv.js';
import { echoable, type ValidationIssue } from '../api/validation.js';
import { parsePydanticDate, parsePydanticDateNumber } from '../pydantic/date.js';
import { parsePydanticInt, pydanticStrip } from '../pydantic/scalars.js';

export type Args = Record<string, unknown>;

const CHECKS = Object.fromEntries(
  Object.entries(MCP_TOOL_INPUT_SCHEMAS).map(([name, s]) => [name, ajv.compile(s)]),
) as Record<McpToolName, ValidateFunction>;

export function isToolName(name: string): name is McpToolName {
  return Object.hasOwn(CHECKS, name);
}

/** `codes/3` → `codes[3]`: the field an agent wrote. */
function fieldOf(e: ErrorObject): string {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return path === '' ? missing : `${path}.${missing}`;
  }
  return path === '' ? '(arguments)' : path;
}

function ajvProblems(tool: McpToolName, errors: ErrorObject[]): string[] {
  const out: string[] = [];
  for (const e of errors) {
    // allOf/anyOf wrappers repeat what their branches already said.
    if (e.keyword === 'allOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const line =
      e.keyword === 'additionalProperties'
        ? unknownArgument(tool, (e.params as { additionalProperty: string }).additionalProperty)
        : `${fieldOf(e)}: ${ruleOf(e)}${e.keyword === 'required' || e.keyword === 'maxItems' ? '' : ` (got ${quote(e.data)})`}`;
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

/** The rule an argument broke, in words an agent can act on (ajv's own for the rest). */
function ruleOf(e: ErrorObject): string {
  if (e.keyword === 'required') return 'is required';
  if (e.keyword === 'format' && e.params.format === 'date') {
    // The reason REST's 422 gives for the same text (Pydantic's), e.g. "day value is outside expected range".
    const r = typeof e.data === 'string' ? parsePydanticDate(e.data) : null;
    const why = r !== null && !r.ok ? (r.ctx?.error ?? r.msg) : null;
    return `must be a calendar date YYYY-MM-DD${why === null ? '' : `: ${why}`}`;
  }
  if (e.keyword === 'enum')
    return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'type') {
    const types = String((e.params as { type: string | string[] }).type).split(',');
    return `must be ${types.map((t) => TYPE_WORDS[t] ?? t).join(' or ')}`;
  }
  if (e.keyword === 'maxItems') return `must have at most ${(e.params as { limit: number }).limit} items`;
  if (e.keyword === 'minItems') return `must have at least ${(e.params as { limit: number }).limit} item(s)`;
  return e.message ?? e.keyword;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/** `"asof": not an argument of getTrailingReturns (it takes code, as_of, market)`. */
function unknownArgument(tool: McpToolName, name: string): string {
  const known = Object.keys(MCP_TOOL_INPUT_SCHEMAS[tool].properties);
  return `${quote(name)}: not an argument of ${tool} (it takes ${known.join(', ')})`;
}

function quote(v: unknown): string {
  // Clipped first: JSON.stringify recurses, and 20,000 nested arrays would overflow the stack.
  const s = JSON.stringify(echoable(v)) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** REST's 422 issues (C20) in the same `field: rule` form; `loc` starts with body, query or path. */
export function issueProblems(issues: readonly ValidationIssue[]): string[] {
  return issues.map((i) => {
    const field = i.loc
      .slice(1)
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '');
    return `${field || '(arguments)'}: ${i.msg}`;
  });
}

type PropertySchema = { type?: string | readonly string[]; format?: string };

/** Each tool's arguments whose schema matches `pick`, read from its input schema. */
const argsWhere = (pick: (p: PropertySchema) => boolean) =>
  Object.fromEntries(
    Object.entries(MCP_TOOL_INPUT_SCHEMAS).map(([name, s]) => [
      name,
      Object.entries(s.properties as Record<string, PropertySchema>)
        .filter(([, p]) => pick(p))
        .map(([k]) => k),
    ]),
  ) as Record<McpToolName, string[]>;

/** `limit`, `year`. */
const INTEGER_ARGS = argsWhere(
  (p) => p.type === 'integer' || (Array.isArray(p.type) && p.type.includes('integer')),
);
/** `as_of`. */
const DATE_ARGS = argsWhere((p) => p.format === 'date');

/**
 * Arguments read as REST reads the same text (Pydantic's lax mode), instead of costing
 * the agent a refused, metered call: an integer written as a string (`"limit": "10"`,
 * `"year": "2023"`, as models often write them; parsePydanticInt), and a date written
 * as a midnight datetime or a Unix timestamp (`"2024-03-28T00:00:00Z"`, 1711584000;
 * parsePydanticDate).
 * Anything else is left for the schema to refuse.
 */
function laxArguments(name: McpToolName, args: Args): Args {
  let out = args;
  for (const k of INTEGER_ARGS[name]) {
    const v = args[k];
    if (typeof v !== 'string') continue;
    // Beyond 2^53 the number is inexact, but then it is capped (limit) or refused (year) anyway.
    const n = parsePydanticInt(v);
    if (typeof n === 'number') out = { ...out, [k]: n };
  }
  for (const k of DATE_ARGS[name]) {
    const v = args[k];
    // A JSON number is a Unix timestamp to Pydantic, as REST's batch body reads it.
    const d =
      typeof v === 'string'
        ? parsePydanticDate(v)
        : typeof v === 'number'
          ? parsePydanticDateNumber(v)
          : null;
    if (d?.ok) out = { ...out, [k]: d.value };
  }
  return out;
}

/**
 * The arguments as the tool's REST route takes them, or the problems that refuse them.
 * `q` is trimmed before its length counts, as REST does (validateListQuery, C19): the
 * schema's maxLength would otherwise refuse padding REST accepts. getRiskFigures takes
 * `code` or `codes`, and its route only `codes`.
 */
export function checkArguments(name: McpToolName, rawArgs: Args | undefined): Args | string[] {
  let args = laxArguments(name, rawArgs ?? {});
  if (name === 'searchFunds' && typeof args.q === 'string') args = { ...args, q: pydanticStrip(args.q) };
  if (name === 'getRiskFigures' && (args.code === undefined) === (args.codes === undefined))
    return ['give `code` (one fund) or `codes` (up to 100 funds), one of the two'];
  const check = CHECKS[name];
  if (!check(args)) return ajvProblems(name, check.errors ?? []);
  if (name === 'getRiskFigures' && typeof args.code === 'string') {
    const { code, ...rest } = args;
    args = { ...rest, codes: [code] };
  }
  return args;
}
