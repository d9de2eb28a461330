/**
 * Request bodies (SPEC 4, C14) and the path/query parameters of every endpoint
 * (C13, C15, C18, C19). Parameter schemas describe parameters as their typed
 * values (limit an integer); server/api/validation.ts coerces the query strings the
 * way FastAPI does before these rules apply.
 */
import { CODE_RULE_TEXT } from '../core/codes.js';
import {
  BATCH_MAX_CODES,
  CodeSchema,
  CURSOR_EXAMPLE,
  type FUND_TYPES,
  FundTypeSchema,
  LIMIT_DEFAULT,
  LIMIT_MAX,
  MarketParamSchema,
  Q_MAX_LENGTH,
  YEAR_MAX,
  YEAR_MIN,
} from './common.js';

/** `fields` of a single endpoint (C51): comma-separated names of the row's own figures. */
const fieldsParam = (names: string, example: string) =>
  ({
    type: 'string',
    description:
      `The figures to return, comma-separated, in the order wanted (C51): any of ${names}. The row then holds ` +
      'the keys naming it and those figures only, `extra_returns` flattened; an unknown name is a 422 at ' +
      '`fields` listing the valid ones. Absent: the whole row.',
    examples: [example],
  }) as const;

const TRAILING_NAMES = 'the `return_…` keys of the row (`return_1y`, `return_mtd`, …)';
const CALENDAR_NAMES = '`total_return`, `start_date`, `end_date`, `is_partial`';

/** `fields` in a batch body: the same names as a list. */
const fieldsBody = (names: string, example: string[]) =>
  ({
    type: ['array', 'null'],
    items: { type: 'string' },
    description:
      `The figures to return for every row, in the order wanted (C51): any of ${names}. Each row then holds the ` +
      'keys naming it and those figures only; an unknown name is a 422 at `fields` listing the valid ones.',
    examples: [example],
  }) as const;

/** `market` in a batch body: the query parameter's rules, its default said in words only. */
const { default: _marketDefault, ...marketBody } = MarketParamSchema;
export const MarketBodySchema = marketBody;

export const CodesSchema = {
  type: 'array',
  minItems: 1,
  maxItems: BATCH_MAX_CODES,
  items: CodeSchema,
  description:
    `Fund codes, 1 to ${BATCH_MAX_CODES} of them (more is a 422). Each is a bare ticker, ${CODE_RULE_TEXT} ` +
    '(C15). Unknown codes are silently left out of the result; duplicates count once (C16).',
  examples: [['VTI', 'VFIAX', 'QQQ']],
} as const;

/*
 * The optional fields of the batch bodies carry no `default` keyword: code generators
 * (openapi-typescript) read a property with a default as one the type always has, so
 * a typed client could not send `{codes}` alone. Their descriptions say the default.
 */
export const AsOfSchema = {
  type: ['string', 'null'],
  format: 'date',
  description:
    "As-of date, `YYYY-MM-DD`. Each fund's row is anchored on its last observation on or before this date, so a " +
    'non-trading day snaps back to the nearest prior trading day; a date after the last observation gives the ' +
    'latest row; a date before the first observation gives no row (C3). Omit or null for the latest row.',
  examples: ['2024-03-28'],
} as const;

const YearSchema = {
  type: ['integer', 'null'],
  minimum: YEAR_MIN,
  maximum: YEAR_MAX,
  description:
    `Calendar year, an integer from ${YEAR_MIN} to ${YEAR_MAX} (else 422, C13). Omit or null for each fund's latest ` +
    'complete year: its latest row with `is_partial` false and a non-null `total_return`, or its latest row when it ' +
    'has none (C12).',
  examples: [2023],
} as const;

export const TrailingBatchRequestSchema = {
  title: 'TrailingBatchRequest',
  type: 'object',
  description: 'Body of POST /v1/trailing-returns/batch. Unknown fields are ignored.',
  required: ['codes'],
  properties: {
    codes: CodesSchema,
    market: MarketBodySchema,
    as_of: AsOfSchema,
    fields: fieldsBody(TRAILING_NAMES, ['return_1y', 'return_5y']),
  },
  examples: [{ codes: ['VTI', 'VFIAX'], as_of: '2024-03-28' }],
} as const;

export const CalendarBatchRequestSchema = {
  title: 'CalendarBatchRequest',
  type: 'object',
  description: 'Body of POST /v1/calendar-returns/batch (C14). Unknown fields are ignored.',
  required: ['codes'],
  properties: {
    codes: CodesSchema,
    market: MarketBodySchema,
    year: YearSchema,
    fields: fieldsBody(CALENDAR_NAMES, ['total_return']),
  },
  examples: [{ codes: ['VTI', 'VFIAX'], year: 2023 }],
} as const;

/** Query of GET /v1/funds (SPEC 4, C18, C19). Unknown parameters are ignored. */
export const ListFundsQuerySchema = {
  title: 'ListFundsQuery',
  type: 'object',
  properties: {
    q: {
      type: 'string',
      maxLength: Q_MAX_LENGTH,
      description:
        `Case-insensitive substring match on ticker or fund name (Unicode lower-casing). Trimmed first; empty means ` +
        `no filter; longer than ${Q_MAX_LENGTH} characters after trimming is a 422 (C19).`,
      examples: ['vanguard'],
    },
    type: { ...FundTypeSchema, description: 'Only funds of this type: `ETF` or `FUND`. Exact match.' },
    country: { type: 'string', description: 'Domicile country as stored. Exact match.', examples: ['USA'] },
    exchange: {
      type: 'string',
      description: 'Listing exchange as stored. Exact match.',
      examples: ['NYSE ARCA'],
    },
    cursor: {
      type: 'string',
      description:
        'The `next_cursor` of the previous page (opaque, base64url). The page continues strictly after the code ' +
        'it encodes, whatever the filters. One that does not decode is a 422 at `["query","cursor"]` (C18).',
      // A real cursor: version byte 1, then `VTI` (server/api/cursor.ts; held to it by cursor.test.ts).
      examples: [CURSOR_EXAMPLE],
    },
    limit: {
      type: 'integer',
      minimum: 1,
      default: LIMIT_DEFAULT,
      description:
        `Page size. Default ${LIMIT_DEFAULT}. Below 1 or not an integer: 422. Values above ${LIMIT_MAX} are capped ` +
        `at ${LIMIT_MAX}, not rejected (SPEC 8, C19).`,
      examples: [LIMIT_DEFAULT],
    },
  },
} as const;

/** Query of GET /v1/funds/{code}. */
export const FundQuerySchema = {
  title: 'FundQuery',
  type: 'object',
  properties: {
    market: MarketParamSchema,
    fields: fieldsParam(
      '`name`, `country`, `exchange`, `currency`, `type`, `isin`, `is_inactive`, `inactive_date`, `min_return_date`, `max_return_date`',
      'name,type',
    ),
  },
} as const;

/** Query of GET /v1/funds/{code}/trailing-returns. */
export const TrailingQuerySchema = {
  title: 'TrailingQuery',
  type: 'object',
  properties: {
    as_of: {
      type: 'string',
      format: 'date',
      description: AsOfSchema.description.replace(' Omit or null', ' Omit'),
      examples: AsOfSchema.examples,
    },
    market: MarketParamSchema,
    fields: fieldsParam(TRAILING_NAMES, 'return_1y,return_3y,return_5y'),
  },
} as const;

/** Query of GET /v1/funds/{code}/calendar-returns (C13). */
export const CalendarQuerySchema = {
  title: 'CalendarQuery',
  type: 'object',
  properties: {
    year: {
      type: 'integer',
      minimum: YEAR_MIN,
      maximum: YEAR_MAX,
      description: YearSchema.description.replace(' Omit or null', ' Omit'),
      examples: YearSchema.examples,
    },
    market: MarketParamSchema,
    fields: fieldsParam(CALENDAR_NAMES, 'total_return'),
  },
} as const;

export interface TrailingBatchRequest {
  codes: string[];
  /** Always `US`-compatible; defaults to `US` (C34). */
  market: string;
  /** `YYYY-MM-DD`, or null for each fund's latest row. */
  as_of: string | null;
  /** The figures to return (C51), as sent; checked by the answer. */
  fields?: unknown;
}

export interface CalendarBatchRequest {
  codes: string[];
  market: string;
  /** 1900..2100, or null for each fund's default row (C12). */
  year: number | null;
  fields?: unknown;
}

/** GET /v1/funds after validation and coercion. */
export interface ListQuery {
  /** Trimmed search text; null when absent or empty (C19). */
  q: string | null;
  type: (typeof FUND_TYPES)[number] | null;
  country: string | null;
  exchange: string | null;
  /** The cursor as given; null when absent. */
  cursor: string | null;
  /** The code the cursor encodes: the page starts strictly after it (C18). */
  after: string | null;
  /** 1..1000; values above 1000 already capped. */
  limit: number;
}

export interface FundParams {
  code: string;
  market: string;
}

export interface TrailingParams extends FundParams {
  as_of: string | null;
}

export interface CalendarParams extends FundParams {
  year: number | null;
}
