/**
 * The MCP tools (SPEC 4 "MCP endpoint", and the screen, compare and growth tools), transport-free: their definitions as
 * `tools/list` shows them and `callTool`, which answers one `tools/call` from a
 * snapshot. Every tool calls the same answer functions as the REST routes
 * (server/api/answers.ts), so an agent gets exactly the REST figures and errors.
 *
 * Schemas come from `schemas/` (the one source): inputs are MCP_TOOL_INPUT_SCHEMAS,
 * outputs the REST response schemas. MCP wants `structuredContent` to be an object,
 * so the two batch tools wrap the REST array as `{ rows: [...] }`.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import {
  BATCH_MAX_CODES,
  type CalendarReturn,
  CalendarReturnListSchema,
  CalendarReturnSchema,
  COMPARE_MAX_CODES,
  type FigureRow,
  FigureRowListSchema,
  type Fund,
  type FundList,
  FundListSchema,
  FundSchema,
  type Growth,
  GrowthSchema,
  LIMIT_MAX,
  MCP_TOOL_INPUT_SCHEMAS,
  type McpToolName,
  mcpOutputSchema,
  type RiskFigures,
  RiskFiguresListSchema,
  SCREEN_LIMIT_MAX,
  type ScreenPage,
  ScreenPageSchema,
  type TrailingReturns,
  TrailingReturnsListSchema,
  TrailingReturnsSchema,
} from '../../schemas/index.js';
import { ajv } from '../api/ajv.js';
import type { Answer, Params } from '../api/answers.js';
import { TOOL_BINDINGS } from '../api/route-bindings.js';
import { echoable, type ValidationIssue } from '../api/validation.js';
import { NO_DATA_DETAIL } from '../http/fixed-answers.js';
import { parsePydanticDate, parsePydanticDateNumber } from '../pydantic/date.js';
import { parsePydanticInt, pydanticStrip } from '../pydantic/scalars.js';
import type { ServingSnapshot } from '../snapshot/serving.js';

const UNITS =
  'Returns are percent as decimal strings with 4 decimals ("12.3456" means +12.3456 %, C1). Periods under 2 ' +
  'years (1D, 1W, 1M, 3M, 6M, YTD, 1Y, MTD, QTD) are cumulative; 2 years and longer are annualized (CAGR). A ' +
  'figure is null when the fund has too little history for the period or the data has a gap there; keys are never ' +
  'omitted.';
const NOT_ADVICE = 'Informational data only, not investment advice.';
const CODES =
  'Funds are identified by `code`, the bare US ticker (case-sensitive, no exchange suffix, e.g. "VTI").';

const ABOUT = [
  'Fund Returns: trailing and calendar-year total returns plus metadata for US mutual funds and ETFs, ' +
    'built from adjusted end-of-day prices and refreshed daily on trading days.',
  CODES,
  'When you only know a name, call searchFunds first to find the code. For one fund use getTrailingReturns or ' +
    'getCalendarReturns; for several funds use batchTrailingReturns or batchCalendarReturns (up to ' +
    `${BATCH_MAX_CODES} codes in one call) instead of calling a single-fund tool repeatedly. getFund gives ` +
    'metadata (name, type, exchange, ISIN, active or not, the date range with data).',
  UNITS,
];

/** Over HTTP (/mcp), where the API key's plan limits apply (C30). */
export const SERVER_INSTRUCTIONS = [
  ...ABOUT,
  "Every HTTP request to this server counts one request against the API key's plan limits, like a REST call " +
    '(one tool call, or one JSON-RPC batch; connecting costs two: initialize and its notification).',
  NOT_ADVICE,
].join('\n\n');

/** Over stdio (`fundreturns mcp --stdio`): a local snapshot, no key and no limits. */
export const STDIO_SERVER_INSTRUCTIONS = [...ABOUT, NOT_ADVICE].join('\n\n');

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** structuredContent of the batch tools: the REST array under `rows`. */
const rowsOf = (list: { description: string; items: object }) => ({
  type: 'object',
  required: ['rows'],
  additionalProperties: false,
  properties: { rows: { type: 'array', items: list.items, description: list.description } },
});

// The SDK's Tool type wants JSON Schema as loose objects; ours are deeply readonly consts.
const schema = (s: object) => s as Tool['inputSchema'];

export const TOOLS: Tool[] = [
  {
    name: 'searchFunds',
    title: 'Search funds',
    description:
      'Find US mutual funds and ETFs by ticker or name (case-insensitive substring), optionally filtered by type ' +
      '(ETF or FUND), country or exchange. Returns metadata only (no returns), in ascending code order, ' +
      `up to \`limit\` funds (default 100, max ${LIMIT_MAX}); pass \`next_cursor\` back as \`cursor\` for the next ` +
      'page. Use it first when you know a fund by name but not its ticker, then pass the codes to the returns ' +
      `tools. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.searchFunds),
    outputSchema: schema(mcpOutputSchema(FundListSchema)),
    annotations: { title: 'Search funds', ...READ_ONLY },
  },
  {
    name: 'getFund',
    title: 'Fund metadata',
    description:
      'Metadata of one fund by its code: name, type (ETF or FUND), exchange, currency, ISIN, whether it is ' +
      'inactive, and the first and last dates with return data. Fields other than code, market, type and ' +
      `is_inactive may be null. An unknown code is an error result; use searchFunds to find codes. ${CODES}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getFund),
    outputSchema: schema(mcpOutputSchema(FundSchema)),
    annotations: { title: 'Fund metadata', ...READ_ONLY },
  },
  {
    name: 'getTrailingReturns',
    title: 'Trailing returns of one fund',
    description:
      'Trailing total returns of one fund: 1D, 1W, 1M, 3M, 6M, YTD, 1Y, 2Y–20Y, since inception, and in ' +
      'extra_returns MTD, QTD, 25Y, 30Y. Latest by default, or as of a date (a non-trading day snaps back to the ' +
      `fund's previous observation; as_of_date in the result is the date used). ${UNITS} For more than one fund use ` +
      `batchTrailingReturns. An unknown code is an error result. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getTrailingReturns),
    outputSchema: schema(mcpOutputSchema(TrailingReturnsSchema)),
    annotations: { title: 'Trailing returns of one fund', ...READ_ONLY },
  },
  {
    name: 'batchTrailingReturns',
    title: 'Trailing returns of many funds',
    description:
      `Trailing total returns of 1 to ${BATCH_MAX_CODES} funds in one call (one request against the rate limit), ` +
      'latest or as of one date for all. Result: `rows`, one per code that has data, in the order asked; unknown ' +
      `codes are left out (the text lists them), never an error. ${UNITS} ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.batchTrailingReturns),
    outputSchema: schema(mcpOutputSchema(rowsOf(TrailingReturnsListSchema))),
    annotations: { title: 'Trailing returns of many funds', ...READ_ONLY },
  },
  {
    name: 'getCalendarReturns',
    title: 'Calendar-year return of one fund',
    description:
      'Total return of one fund over one calendar year (cumulative, percent with 4 decimals, C1), with the base ' +
      "and end dates and is_partial (inception year, the running year, or a fund that stopped). Without `year`: the fund's " +
      'latest complete year. A year without data or an unknown code is an error result. For more than one fund use ' +
      `batchCalendarReturns. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getCalendarReturns),
    outputSchema: schema(mcpOutputSchema(CalendarReturnSchema)),
    annotations: { title: 'Calendar-year return of one fund', ...READ_ONLY },
  },
  {
    name: 'batchCalendarReturns',
    title: 'Calendar-year returns of many funds',
    description:
      `Calendar-year total returns of 1 to ${BATCH_MAX_CODES} funds for one year (or each fund's latest complete ` +
      'year) in one call. Result: `rows`, in the order asked; codes without a row are left out (the text lists ' +
      `them), never an error. Percent strings with 4 decimals, cumulative; null when not computable. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.batchCalendarReturns),
    outputSchema: schema(mcpOutputSchema(rowsOf(CalendarReturnListSchema))),
    annotations: { title: 'Calendar-year returns of many funds', ...READ_ONLY },
  },
  {
    name: 'getRiskFigures',
    title: 'Risk figures of one or many funds',
    description:
      `Risk figures of one fund (\`code\`) or of 1 to ${BATCH_MAX_CODES} funds (\`codes\`) over windows of 1, 3, 5 ` +
      'and 10 years of month-end returns: annualized volatility (%), Sharpe and Sortino ratios (against the ' +
      '3-month T-bill), maximum drawdown (%) with peak, trough and recovery dates, best and worst month (%), share ' +
      'of positive months (%), and beta and correlation against `benchmark` (a fund code; else the server default, ' +
      'if any). Latest, or as of a date. Result: `rows`, in the order asked; codes without data are left out (the ' +
      'text lists them). Figures are 4-decimal strings; null when the window is incomplete or the figure undefined. ' +
      `An unknown benchmark is an error. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getRiskFigures),
    outputSchema: schema(mcpOutputSchema(rowsOf(RiskFiguresListSchema))),
    annotations: { title: 'Risk figures of one or many funds', ...READ_ONLY },
  },
  {
    name: 'screenFunds',
    title: 'Screen and rank funds',
    description:
      'Find funds by their figures: bounds such as `return_5y_min: 8`, `history_years_min: 10` or ' +
      '`volatility_3y_max: 15` (inclusive; a fund without the figure is left out), the searchFunds filters (q, ' +
      'type, country, exchange) and `inactive`, sorted by `sort` (a figure name, `-` first for descending; funds ' +
      `without it last, ties by code). Up to ${SCREEN_LIMIT_MAX} rows a page (\`limit\`), each code, name, type and ` +
      'the `fields` asked for (default the 1, 3, 5 and 10-year returns plus the sorted and filtered figures); pass ' +
      `\`next_cursor\` back as \`cursor\` with the same sort. Latest data only. ${UNITS} ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.screenFunds),
    outputSchema: schema(mcpOutputSchema(ScreenPageSchema)),
    annotations: { title: 'Screen and rank funds', ...READ_ONLY },
  },
  {
    name: 'compareFunds',
    title: 'Compare funds side by side',
    description:
      `The same figures for 1 to ${COMPARE_MAX_CODES} funds in one call, as one compact table (a header line, ` +
      'one line per fund): `fields` lists the figures wanted in order (trailing returns such as return_1y, ' +
      'history_years, and risk figures such as volatility_3y when the server has them; default the 1, 3, 5 and ' +
      '10-year returns). Full rows in structuredContent `rows`, in the order asked; unknown codes are left out ' +
      `(the text lists them). ${UNITS} ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.compareFunds),
    outputSchema: schema(mcpOutputSchema(rowsOf(FigureRowListSchema))),
    annotations: { title: 'Compare funds side by side', ...READ_ONLY },
  },
  {
    name: 'getGrowth',
    title: 'Growth of 10,000',
    description:
      "The value of 10,000 invested at the fund's first observation on or after `from`, at the end of each " +
      'day, week or month (`interval`, default month) up to `to`: a chart series with dividends reinvested. At ' +
      `most 5000 points; a longer series is an error asking for a longer interval. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getGrowth),
    outputSchema: schema(mcpOutputSchema(GrowthSchema)),
    annotations: { title: 'Growth of 10,000', ...READ_ONLY },
  },
];

/** The `tools/list` result, built once. */
export const LIST_TOOLS_RESULT = { tools: TOOLS };

// ---------------------------------------------------------------------------
// Argument validation: ajv validators compiled once from the tool input schemas, on the
// instance REST's body validation uses (ajv.ts).

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
function issueProblems(issues: readonly ValidationIssue[]): string[] {
  return issues.map((i) => {
    const field = i.loc
      .slice(1)
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '');
    return `${field || '(arguments)'}: ${i.msg}`;
  });
}

// ---------------------------------------------------------------------------
// Calls

type Args = Record<string, unknown>;

/**
 * A tools/call result as JSON text, which the HTTP endpoint sends as it is (rpc.ts),
 * and whether it is an error (metrics). Built as text, not as an object to serialize:
 * the row's JSON from the REST answer goes into it as it is.
 */
export interface ToolResultJson {
  json: string;
  isError: boolean;
}

function errorResult(message: string): ToolResultJson {
  return {
    json: `{"content":[{"type":"text","text":${JSON.stringify(message)}}],"isError":true}`,
    isError: true,
  };
}

function invalidArgs(tool: string, problems: string[]): ToolResultJson {
  return errorResult(`Invalid arguments for ${tool}: ${problems.join('; ')}.`);
}

/**
 * An argument as REST's query would carry it. A whole number is written in plain digits:
 * String(1e21) is "1e+21", which REST would read as no integer at all.
 */
const str = (v: unknown): string | undefined =>
  v === undefined || v === null
    ? undefined
    : typeof v === 'number' && Number.isInteger(v)
      ? BigInt(v).toString()
      : String(v);

const textOfBody = (body: Uint8Array | string): string =>
  typeof body === 'string'
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

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
 * The answer of the tool's REST route (server/api/route-bindings.ts), from the same function: a
 * GET route's code and query (each argument as its query text), or a batch's body.
 */
function answerOf(snap: ServingSnapshot, name: McpToolName, args: Args): Answer {
  const route = TOOL_BINDINGS[name];
  if (route.kind === 'post') return route.answer(snap, JSON.stringify(args), 'application/json');
  if (route.kind !== 'get') throw new Error(`MCP tool ${name} is bound to a ${route.kind} route`);
  const params: Params = {};
  for (const [k, v] of Object.entries(args)) if (k !== 'code') params[k] = str(v);
  return route.answer(snap, typeof args.code === 'string' ? args.code : null, params);
}

/**
 * Answer one `tools/call` for a known tool. Bad arguments, an unknown fund and a
 * missing row are tool results with `isError` (MCP 2025-11-25: the model can
 * correct itself); a snapshot of null is C24's "No data loaded".
 */
export function callTool(
  snap: ServingSnapshot | null,
  name: McpToolName,
  rawArgs: Args | undefined,
): CallToolResult {
  return JSON.parse(callToolJson(snap, name, rawArgs).json) as CallToolResult;
}

/** `callTool`'s result as JSON text. */
export function callToolJson(
  snap: ServingSnapshot | null,
  name: McpToolName,
  rawArgs: Args | undefined,
): ToolResultJson {
  let args = laxArguments(name, rawArgs ?? {});
  // C19: q is trimmed before its length counts, as REST does (validateListQuery); the
  // schema's maxLength would otherwise refuse padding REST accepts.
  if (name === 'searchFunds' && typeof args.q === 'string') args = { ...args, q: pydanticStrip(args.q) };
  if (name === 'getRiskFigures' && (args.code === undefined) === (args.codes === undefined))
    return invalidArgs(name, ['give `code` (one fund) or `codes` (up to 100 funds), one of the two']);
  const check = CHECKS[name];
  if (!check(args)) return invalidArgs(name, ajvProblems(name, check.errors ?? []));
  if (name === 'getRiskFigures' && typeof args.code === 'string') {
    const { code, ...rest } = args;
    args = { ...rest, codes: [code] };
  }
  // C24; over HTTP the whole POST is a 503 instead (http.ts).
  if (snap === null)
    return errorResult(`${NO_DATA_DETAIL}: the server has no snapshot yet; try again shortly.`);
  const a = answerOf(snap, name, args);
  if (a.status === 422) return invalidArgs(name, issueProblems(a.issues));
  if (a.status === 404) {
    const hint = a.detail.startsWith('No fund with code')
      ? ' Use searchFunds to find a fund code by name.'
      : '';
    return errorResult(`${a.detail}.${hint}`);
  }
  const body = textOfBody(a.body);
  const value: unknown = JSON.parse(body);
  switch (name) {
    case 'searchFunds':
      return result(body, renderFundList(value as FundList));
    case 'getFund':
      return result(body, renderFund(value as Fund));
    case 'getTrailingReturns':
      return result(body, `${TRAILING_HEADER}\n${renderTrailing(value as TrailingReturns)}`);
    case 'getCalendarReturns':
      return result(body, renderCalendar(value as CalendarReturn));
    case 'batchTrailingReturns': {
      const rows = value as TrailingReturns[];
      const lines = [TRAILING_HEADER, ...rows.map(renderTrailing), missingLine(args.codes, rows)];
      return result(`{"rows":${body}}`, lines.filter((l) => l !== '').join('\n'));
    }
    case 'batchCalendarReturns': {
      const rows = value as CalendarReturn[];
      const lines = [
        rows.length === 0 ? 'No calendar-year rows.' : '',
        ...rows.map(renderCalendar),
        missingLine(args.codes, rows),
      ];
      return result(`{"rows":${body}}`, lines.filter((l) => l !== '').join('\n'));
    }
    case 'getRiskFigures': {
      const rows = value as RiskFigures[];
      const lines = [
        rows.length === 0 ? 'No risk rows.' : RISK_HEADER,
        ...rows.flatMap(renderRisk),
        missingLine(args.codes, rows),
      ];
      return result(`{"rows":${body}}`, lines.filter((l) => l !== '').join('\n'));
    }
    case 'screenFunds': {
      const page = value as ScreenPage;
      const more =
        page.next_cursor === null
          ? `${page.data.length} funds; no more pages.`
          : `${page.data.length} funds shown; more match: pass cursor "${page.next_cursor}" with the same sort.`;
      return result(body, `${figureTable(page.data)}\n${more}`);
    }
    case 'compareFunds': {
      const rows = value as FigureRow[];
      const lines = [figureTable(rows), missingLine(args.codes, rows)];
      // The table alone: the rows are in structuredContent, and repeating them as JSON
      // would triple what a model reads.
      const table = JSON.stringify(lines.filter((l) => l !== '').join('\n'));
      return {
        json: `{"content":[{"type":"text","text":${table}}],"structuredContent":{"rows":${body}}}`,
        isError: false,
      };
    }
    case 'getGrowth': {
      const g = value as Growth;
      const last = g.points[g.points.length - 1];
      return result(
        body,
        `${g.code}: 10,000 invested on ${g.start_date} was worth ${last.value} on ${g.end_date} ` +
          `(${g.points.length} ${g.interval} points, dividends reinvested).`,
      );
    }
  }
}

const RISK_HEADER =
  'Risk per window (volatility, drawdown, best/worst month and positive months in percent; Sharpe, Sortino, beta ' +
  'and correlation as ratios; n/a = not computable):';

function renderRisk(r: RiskFigures): string[] {
  const n = (v: string | null) => v ?? 'n/a';
  const head = `${r.code} as of ${r.as_of_date}${r.benchmark === null ? '' : ` (benchmark ${r.benchmark})`}:`;
  return [
    head,
    ...Object.entries(r.windows).map(
      ([k, w]) =>
        `  ${k} ${w.start_month}..${w.end_month}: volatility ${pct(w.volatility)}, Sharpe ${n(w.sharpe)}, ` +
        `Sortino ${n(w.sortino)}, max drawdown ${pct(w.max_drawdown)}` +
        (w.trough_date === null
          ? ''
          : ` (peak ${w.peak_date}, trough ${w.trough_date}, recovered ${n(w.recovery_date)})`) +
        `, best month ${pct(w.best_month)}${w.best_month_date === null ? '' : ` ${w.best_month_date}`}` +
        `, worst month ${pct(w.worst_month)}${w.worst_month_date === null ? '' : ` ${w.worst_month_date}`}` +
        `, positive months ${pct(w.positive_months)}, beta ${n(w.beta)}, correlation ${n(w.correlation)}`,
    ),
  ];
}

/** Figure rows as one tab-separated table: a header line, then a line per fund (n/a = no figure). */
function figureTable(rows: readonly FigureRow[]): string {
  if (rows.length === 0) return 'No funds match.';
  const figures = Object.keys(rows[0]).filter((k) => k !== 'code' && k !== 'name' && k !== 'type');
  const short = (n: string | null) => (n === null ? '' : n.length > 28 ? `${n.slice(0, 27)}…` : n);
  const lines = [['code', 'name', ...figures].join('\t')];
  for (const r of rows) lines.push([r.code, short(r.name), ...figures.map((f) => r[f] ?? 'n/a')].join('\t'));
  return lines.join('\n');
}

/**
 * A tool's answer: `structuredContent` (the REST answer's JSON as it is), the same
 * serialized as the first text block (MCP 2025-06-18: a tool returning structured
 * content SHOULD, for clients that read only `content`), then the compact rendering
 * with units that a model reads best.
 */
function result(structured: string, rendered: string): ToolResultJson {
  return {
    json: `{"content":[{"type":"text","text":${JSON.stringify(structured)}},{"type":"text","text":${JSON.stringify(rendered)}}],"structuredContent":${structured}}`,
    isError: false,
  };
}

// ---------------------------------------------------------------------------
// Text renderings: compact, with units, the same figures as structuredContent.

const TRAILING_HEADER =
  'Trailing total returns in percent (under 2Y cumulative, 2Y and longer annualized; n/a = not computable):';

const TRAILING_LABELS: Array<[keyof TrailingReturns, string]> = [
  ['return_1d', '1D'],
  ['return_1w', '1W'],
  ['return_1m', '1M'],
  ['return_3m', '3M'],
  ['return_6m', '6M'],
  ['return_ytd', 'YTD'],
  ['return_1y', '1Y'],
  ['return_2y', '2Y'],
  ['return_3y', '3Y'],
  ['return_4y', '4Y'],
  ['return_5y', '5Y'],
  ['return_7y', '7Y'],
  ['return_10y', '10Y'],
  ['return_15y', '15Y'],
  ['return_20y', '20Y'],
  ['return_earliest_available', 'since inception'],
];
const EXTRA_LABELS: Array<[keyof TrailingReturns['extra_returns'], string]> = [
  ['return_mtd', 'MTD'],
  ['return_qtd', 'QTD'],
  ['return_25y', '25Y'],
  ['return_30y', '30Y'],
];

const pct = (v: string | null) => (v === null ? 'n/a' : `${v}%`);

function renderTrailing(r: TrailingReturns): string {
  const parts: string[] = [];
  for (const [k, label] of TRAILING_LABELS) parts.push(`${label} ${pct(r[k] as string | null)}`);
  for (const [k, label] of EXTRA_LABELS) parts.push(`${label} ${pct(r.extra_returns[k])}`);
  return `${r.code} as of ${r.as_of_date}: ${parts.join(', ')}`;
}

function renderCalendar(r: CalendarReturn): string {
  const kind = r.is_partial ? 'partial year' : 'full year';
  return `${r.code} ${r.year} total return ${pct(r.total_return)} (cumulative, ${r.start_date} to ${r.end_date}, ${kind})`;
}

function renderFund(f: Fund): string {
  const facts = [
    f.type,
    f.exchange,
    f.currency,
    f.country && `domicile ${f.country}`,
    f.isin && `ISIN ${f.isin}`,
  ]
    .filter((x) => x)
    .join(', ');
  const status = f.is_inactive ? `inactive${f.inactive_date ? ` since ${f.inactive_date}` : ''}` : 'active';
  const range =
    f.min_return_date && f.max_return_date
      ? `return data ${f.min_return_date} to ${f.max_return_date}`
      : 'no return data';
  return `${f.code}: ${f.name ?? '(no name)'} (${facts}); ${status}; ${range}.`;
}

function renderFundList(l: FundList): string {
  if (l.data.length === 0) return 'No funds match.';
  const lines = l.data.map(
    (f) =>
      `${f.code}\t${f.name ?? '(no name)'}\t${f.type}${f.exchange ? `, ${f.exchange}` : ''}` +
      (f.is_inactive ? ', inactive' : ''),
  );
  lines.push(
    l.next_cursor === null
      ? `${l.data.length} funds; no more pages.`
      : `${l.data.length} funds shown; more match: pass cursor "${l.next_cursor}" for the next page.`,
  );
  return lines.join('\n');
}

/** Batch misses are silent in REST (SPEC); an agent is told which codes gave no row. */
function missingLine(codes: unknown, rows: ReadonlyArray<{ code: string }>): string {
  const got = new Set(rows.map((r) => r.code));
  const missing = [...new Set(codes as string[])].filter((c) => !got.has(c));
  return missing.length === 0 ? '' : `No row (unknown code or no data): ${missing.join(', ')}`;
}
