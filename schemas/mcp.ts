/**
 * Input schemas of the MCP tools (SPEC 4). Arguments arrive as JSON, so they are the
 * typed forms of the REST parameters: the same rules, the same descriptions.
 *
 * Unlike REST's query (C19), an argument a tool does not take is refused: an agent
 * that writes `asof` for `as_of` or `yr` for `year` would otherwise get the latest
 * figures as if they were the ones it asked for, with nothing to tell it so.
 */
import { CodeSchema, MarketParamSchema, RETURN_FIGURE_BASE } from './common.js';
import {
  CalendarBatchRequestSchema,
  CalendarQuerySchema,
  ListFundsQuerySchema,
  TrailingBatchRequestSchema,
  TrailingQuerySchema,
} from './requests.js';
import { RiskBatchRequestSchema } from './risk.js';
import { COMPARE_MAX_CODES, CompareQuerySchema, GrowthQuerySchema, ScreenQuerySchema } from './screen.js';

/**
 * A schema's properties without `fields`: the single and batch tools answer whole
 * rows (their outputSchema); an agent compares chosen figures with compareFunds.
 */
function noFields<P extends { fields?: unknown }>(properties: P): Omit<P, 'fields'> {
  const { fields: _fields, ...rest } = properties;
  return rest;
}

const withCode = <P extends object>(properties: P) =>
  ({
    type: 'object',
    required: ['code'],
    properties: { code: CodeSchema, ...properties },
    additionalProperties: false,
  }) as const;

/** `fields` as an agent writes it: a list of figure names. */
const FIGURE_NAMES = {
  type: 'array',
  items: { type: 'string' },
  description: ScreenQuerySchema.properties.fields.description.replace('Comma-separated figure', 'Figure'),
  examples: [['return_1y', 'return_5y']],
} as const;

export const MCP_TOOL_INPUT_SCHEMAS = {
  searchFunds: { type: 'object', properties: ListFundsQuerySchema.properties, additionalProperties: false },
  getFund: withCode({ market: MarketParamSchema }),
  getTrailingReturns: withCode(noFields(TrailingQuerySchema.properties)),
  batchTrailingReturns: {
    type: 'object',
    required: TrailingBatchRequestSchema.required,
    properties: noFields(TrailingBatchRequestSchema.properties),
    additionalProperties: false,
  },
  getCalendarReturns: withCode(noFields(CalendarQuerySchema.properties)),
  batchCalendarReturns: {
    type: 'object',
    required: CalendarBatchRequestSchema.required,
    properties: noFields(CalendarBatchRequestSchema.properties),
    additionalProperties: false,
  },
  /** One fund (`code`) or up to 100 (`codes`): the batch route's answer either way. */
  getRiskFigures: {
    type: 'object',
    properties: {
      code: { ...CodeSchema, description: `${CodeSchema.description} One fund; or give \`codes\`.` },
      ...RiskBatchRequestSchema.properties,
    },
    anyOf: [
      { properties: { code: CodeSchema }, required: ['code'] },
      { properties: { codes: RiskBatchRequestSchema.properties.codes }, required: ['codes'] },
    ],
    additionalProperties: false,
  },
  screenFunds: {
    type: 'object',
    properties: {
      ...ScreenQuerySchema.properties,
      fields: FIGURE_NAMES,
      limit: { ...ScreenQuerySchema.properties.limit, examples: [10] },
    },
    patternProperties: {
      '^[a-z0-9_]+_(min|max)$': {
        type: 'number',
        description:
          'A bound on a figure, inclusive: `return_5y_min: 8` keeps funds whose 5-year return is at least 8 %; a ' +
          'fund without the figure never passes (C50).',
      },
    },
    additionalProperties: false,
  },
  compareFunds: {
    type: 'object',
    required: ['codes'],
    properties: {
      codes: {
        type: 'array',
        minItems: 1,
        maxItems: COMPARE_MAX_CODES,
        items: CodeSchema,
        description: CompareQuerySchema.properties.codes.description.replace('Comma-separated fund', 'Fund'),
      },
      fields: FIGURE_NAMES,
    },
    additionalProperties: false,
  },
  getGrowth: withCode(GrowthQuerySchema.properties),
} as const;

export type McpToolName = keyof typeof MCP_TOOL_INPUT_SCHEMAS;

/** What a figure says in an MCP output schema instead of RETURN_FIGURE_BASE. */
const BRIEF_FIGURE = 'Percent, 4 decimals, or null.';

/**
 * A REST response schema as an MCP tool's output schema: the same keywords, so it
 * validates the same `structuredContent`, but each of a trailing row's 20 figures
 * states what it measures without repeating the unit, rounding and null rules and
 * examples that every figure shares (the row's and the tool's descriptions say
 * them once). `tools/list`, which clients fetch on every connection, goes from 54 to
 * 38 KB.
 */
export function mcpOutputSchema<T>(schema: T): T {
  return brief(schema) as T;
}

function brief(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(brief);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = brief(x);
  const d = out.description;
  if (typeof d === 'string' && d.endsWith(RETURN_FIGURE_BASE)) {
    out.description = `${d.slice(0, -RETURN_FIGURE_BASE.length)}${BRIEF_FIGURE}`;
    delete out.examples;
  }
  return out;
}
