/**
 * Request validation with FastAPI / Pydantic v2 error semantics (C20). Request
 * bodies go through ajv validators compiled once from `schemas/`; their errors are
 * mapped to Pydantic's types, messages and `loc`s. Query and path values arrive as
 * strings and are coerced the way Pydantic's lax mode coerces them (`" 5 "` and
 * `"5.0"` are 5, `"5.5"` is `int_parsing`), so scalar fields use small hand-written
 * coercers (server/pydantic/) that share their bounds with the schemas. On success no work happens
 * beyond the checks themselves.
 *
 * This module checks query and path parameters and is the one place callers import
 * from; validation-body.ts checks request bodies, validation-issues.ts words the 422.
 */
import {
  type CalendarParams,
  type FundParams,
  LIMIT_DEFAULT,
  LIMIT_MAX,
  type ListQuery,
  MARKET_US,
  Q_MAX_LENGTH,
  type RiskParams,
  type TrailingParams,
  YEAR_MAX,
  YEAR_MIN,
} from '../../schemas/index.js';
import {
  FUND_TYPE_EXPECTED,
  geIssue,
  intIssue,
  type Loc,
  leIssue,
  literalError,
  stringTooLong,
  type ValidationIssue,
  valueError,
} from '../pydantic/messages.js';
import { codePointLength, parsePydanticInt, pydanticStrip } from '../pydantic/scalars.js';
import { decodeCursor } from './cursor.js';

import { codeIssue, dateIssue, NO_ISSUES, type Validated } from './validation-issues.js';

export type { Loc, ValidationIssue } from '../pydantic/messages.js';
export {
  isJsonContentType,
  validateCalendarBatchBody,
  validateRiskBatchBody,
  validateTrailingBatchBody,
} from './validation-body.js';
export {
  echoable,
  type Validated,
  validationErrorBody,
  validationErrorJson,
} from './validation-issues.js';

const PATH_CODE: Loc = ['path', 'code'];
const QUERY_AS_OF: Loc = ['query', 'as_of'];
const QUERY_YEAR: Loc = ['query', 'year'];

/** C15: a path code that cannot exist is a 422, not a 404. */
export function validateCode(code: string, loc: Loc = PATH_CODE): ValidationIssue[] {
  const issue = codeIssue(code, loc);
  return issue === undefined ? NO_ISSUES : [issue];
}

/** `as_of` query parameter: absent → null; else a Pydantic lax date. */
export function validateAsOf(raw: string | undefined, loc: Loc = QUERY_AS_OF): Validated<string | null> {
  if (raw === undefined) return { ok: true, value: null };
  const r = dateIssue(loc, raw);
  return typeof r === 'string' ? { ok: true, value: r } : { ok: false, issues: [r] };
}

/** `year` query parameter (C13): absent → null; else an integer 1900..2100. */
export function validateYear(raw: string | undefined, loc: Loc = QUERY_YEAR): Validated<number | null> {
  if (raw === undefined) return { ok: true, value: null };
  const n = parsePydanticInt(raw);
  if (typeof n !== 'number') return { ok: false, issues: [intIssue(loc, raw, n)] };
  if (n < YEAR_MIN) return { ok: false, issues: [geIssue(loc, raw, YEAR_MIN)] };
  if (n > YEAR_MAX) return { ok: false, issues: [leIssue(loc, raw, YEAR_MAX)] };
  return { ok: true, value: n };
}

// ---------------------------------------------------------------------------
// Cursor (C18): see cursor.ts for the format.

const CURSOR_ERROR = 'cursor is not a next_cursor value of this API';

// ---------------------------------------------------------------------------
// Query and path parameters

type Params = Record<string, string | undefined>;

/** GET /v1/funds (C18, C19). Issues in declaration order: q, type, country, exchange, cursor, limit. */
export function validateListQuery(params: Params): Validated<ListQuery> {
  let issues: ValidationIssue[] | undefined;
  const add = (i: ValidationIssue) => {
    if (issues === undefined) issues = [i];
    else issues.push(i);
  };

  let q: string | null = null;
  const rawQ = params.q;
  if (rawQ !== undefined) {
    // Pydantic's strip (str_strip_whitespace), not JavaScript's trim: the two differ on U+0085 and U+FEFF.
    const t = pydanticStrip(rawQ);
    if (t.length > Q_MAX_LENGTH && codePointLength(t) > Q_MAX_LENGTH) {
      add(stringTooLong(['query', 'q'], rawQ, Q_MAX_LENGTH));
    } else if (t !== '') q = t;
  }

  let type: ListQuery['type'] = null;
  const rawType = params.type;
  if (rawType !== undefined) {
    if (rawType === 'ETF' || rawType === 'FUND') type = rawType;
    else {
      add(literalError(['query', 'type'], rawType, FUND_TYPE_EXPECTED));
    }
  }

  let after: string | null = null;
  const cursor = params.cursor ?? null;
  if (cursor !== null) {
    const code = decodeCursor(cursor);
    if (code === null) {
      add(valueError(['query', 'cursor'], cursor, CURSOR_ERROR));
    } else after = code;
  }

  let limit = LIMIT_DEFAULT;
  const rawLimit = params.limit;
  if (rawLimit !== undefined) {
    const n = parsePydanticInt(rawLimit);
    if (typeof n !== 'number') add(intIssue(['query', 'limit'], rawLimit, n));
    else if (n < 1) add(geIssue(['query', 'limit'], rawLimit, 1));
    else limit = Math.min(n, LIMIT_MAX);
  }

  if (issues !== undefined) return { ok: false, issues };
  return {
    ok: true,
    value: {
      q,
      type,
      country: params.country ?? null,
      exchange: params.exchange ?? null,
      cursor,
      after,
      limit,
    },
  };
}

/** GET /v1/funds/{code}. */
export function validateFundParams(code: string, query: Params): Validated<FundParams> {
  const issue = codeIssue(code, PATH_CODE);
  if (issue !== undefined) return { ok: false, issues: [issue] };
  return { ok: true, value: { code, market: query.market ?? MARKET_US } };
}

/** GET /v1/funds/{code}/trailing-returns: path issues first, then query (FastAPI's order). */
export function validateTrailingParams(code: string, query: Params): Validated<TrailingParams> {
  const issue = codeIssue(code, PATH_CODE);
  const asOf = validateAsOf(query.as_of);
  if (issue === undefined && asOf.ok) {
    return { ok: true, value: { code, market: query.market ?? MARKET_US, as_of: asOf.value } };
  }
  const issues = issue === undefined ? [] : [issue];
  if (!asOf.ok) issues.push(...asOf.issues);
  return { ok: false, issues };
}

/** GET /v1/funds/{code}/calendar-returns (C13). */
export function validateCalendarParams(code: string, query: Params): Validated<CalendarParams> {
  const issue = codeIssue(code, PATH_CODE);
  const year = validateYear(query.year);
  if (issue === undefined && year.ok) {
    return { ok: true, value: { code, market: query.market ?? MARKET_US, year: year.value } };
  }
  const issues = issue === undefined ? [] : [issue];
  if (!year.ok) issues.push(...year.issues);
  return { ok: false, issues };
}

// ---------------------------------------------------------------------------
// JSON bodies

/** GET /v1/funds/{code}/risk: path issues first, then as_of, then benchmark. */
export function validateRiskParams(code: string, query: Params): Validated<RiskParams> {
  const issues: ValidationIssue[] = [];
  const issue = codeIssue(code, PATH_CODE);
  if (issue !== undefined) issues.push(issue);
  const asOf = validateAsOf(query.as_of);
  if (!asOf.ok) issues.push(...asOf.issues);
  const benchmark = query.benchmark ?? null;
  const bIssue = benchmark === null ? undefined : codeIssue(benchmark, ['query', 'benchmark']);
  if (bIssue !== undefined) issues.push(bIssue);
  if (issues.length > 0 || !asOf.ok) return { ok: false, issues };
  return { ok: true, value: { code, market: query.market ?? MARKET_US, as_of: asOf.value, benchmark } };
}

/** C45: a benchmark that is not a fund of the universe is a 422 naming it. */
export function unknownBenchmark(loc: Loc, code: string): ValidationIssue {
  return valueError(loc, code, `benchmark ${code} is not a fund of this universe`);
}
