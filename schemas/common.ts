/**
 * Building blocks shared by every schema in this folder. Schemas are JSON Schema
 * draft 2020-12 documents written as plain `const` objects so the same values feed
 * ajv (server/api/validation.ts), the OpenAPI document (schemas/openapi.ts) and the MCP
 * tool definitions without a conversion step.
 */

/*
 * The schemas here are JSON Schema draft 2020-12 using no keyword outside it, so they
 * read the same under OpenAPI 3.1's default dialect (2020-12 plus OpenAPI's
 * vocabulary): the document leaves `jsonSchemaDialect` out, which Swagger UI flags as
 * unsupported at the top of /docs.
 */

import { CODE_MAX_LENGTH, CODE_MIN_LENGTH, CODE_RULE_TEXT, NO_CONTROL_CHARS_PATTERN } from '../core/codes.js';

/** SPEC 2: the textual-decimal shape every return figure must have. */
export const SPEC_DECIMAL_PATTERN = '^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$';

/** C1: percent with exactly four decimals, no plus sign (negative zero prints as 0.0000). */
export const PERCENT_4DP_PATTERN = '^-?\\d+\\.\\d{4}$';

/** SPEC 8 rule 3: codes per batch call. */
export const BATCH_MAX_CODES = 100;

/** C21: the largest request body; a larger one is a 413. */
export const MAX_BODY_BYTES = 1 << 20;

/** MAX_BODY_BYTES as the API's texts say it. */
export const MAX_BODY_TEXT = `${MAX_BODY_BYTES / (1 << 20)} MiB`;

/** The 413's detail (C21). */
export const TOO_LARGE_DETAIL = `Request body too large: the limit is ${MAX_BODY_TEXT}`;

/** C13 / C14: the accepted calendar years. */
export const YEAR_MIN = 1900;
export const YEAR_MAX = 2100;

/** SPEC 4 / C19: page size bounds of GET /v1/funds. */
export const LIMIT_DEFAULT = 100;
export const LIMIT_MAX = 1000;

/** C19: longest accepted search string, after trimming. */
export const Q_MAX_LENGTH = 100;

/** `next_cursor` after the page ending with `VTI` (server/api/cursor.ts: version byte 1, then the code). */
export const CURSOR_EXAMPLE = 'AVZUSQ';

/** C34: the only market there is. */
export const MARKET_US = 'US';

export const FUND_TYPES = ['ETF', 'FUND'] as const;

export const DateSchema = {
  type: 'string',
  format: 'date',
  description: 'Calendar date, ISO 8601 `YYYY-MM-DD`.',
  examples: ['2024-03-28'],
} as const;

export const NullableDateSchema = {
  type: ['string', 'null'],
  format: 'date',
  description: 'Calendar date, ISO 8601 `YYYY-MM-DD`, or null.',
  examples: ['2024-03-28', null],
} as const;

export const CodeSchema = {
  type: 'string',
  minLength: CODE_MIN_LENGTH,
  maxLength: CODE_MAX_LENGTH,
  pattern: NO_CONTROL_CHARS_PATTERN,
  description:
    'Fund code: the bare ticker, case-sensitive and matched exactly (no exchange suffix). ' +
    `${CODE_RULE_TEXT} (C15); anything else is a 422, not a 404.`,
  examples: ['VTI', 'VFIAX'],
} as const;

export const MarketResponseSchema = {
  type: 'string',
  enum: [MARKET_US],
  description: 'Market code. Always `US` for now (C34); reserved for future multi-market support.',
  examples: [MARKET_US],
} as const;

export const MarketParamSchema = {
  type: 'string',
  default: MARKET_US,
  description:
    'Market code. Default `US`. Accepted for forward compatibility, echoed as `US` and ignored by ' +
    'lookups (C34): any string is allowed.',
  examples: [MARKET_US],
} as const;

export const FundTypeSchema = {
  type: 'string',
  enum: FUND_TYPES,
  description: 'Security type: `ETF`, or `FUND` for a mutual fund. Exact, case-sensitive.',
  examples: ['ETF'],
} as const;

/** What every return figure's description ends with: the unit, format and null rules. */
export const RETURN_FIGURE_BASE =
  'Total return in percent (C1): a decimal string with exactly 4 decimal places, "12.3456" is ' +
  '+12.3456 %, rounded half away from zero, negative zero printed as "0.0000". It also matches ' +
  "SPEC's decimal pattern. JSON null when the figure cannot be computed (history too short, C4; a base " +
  'observation more than 7 calendar days before its start date, C4b); the key is never omitted.';

/**
 * One return figure. Both patterns apply: the SPEC one (what every client may rely
 * on) and C1's stricter one (what this service actually emits).
 */
export function returnFigure(description: string) {
  return {
    type: ['string', 'null'],
    allOf: [{ pattern: SPEC_DECIMAL_PATTERN }, { pattern: PERCENT_4DP_PATTERN }],
    description: `${description} ${RETURN_FIGURE_BASE}`,
    examples: ['12.3456', '-3.2100', null],
  } as const;
}
