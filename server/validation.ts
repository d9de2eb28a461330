/**
 * Request validation with FastAPI / Pydantic v2 error semantics (C20). Request
 * bodies go through ajv validators compiled once from `schemas/`; their errors are
 * mapped to Pydantic's types, messages and `loc`s. Query and path values arrive as
 * strings and are coerced the way Pydantic's lax mode coerces them (`" 5 "` and
 * `"5.0"` are 5, `"5.5"` is `int_parsing`), so scalar fields use small hand-written
 * coercers (server/pydantic/) that share their bounds with the schemas. On success no work happens
 * beyond the checks themselves.
 */

import { isUtf8 } from 'node:buffer';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { isPossibleCode } from '../core/codes.js';
import { parseDay } from '../core/dates.js';
import {
  BATCH_MAX_CODES,
  type CalendarBatchRequest,
  CalendarBatchRequestSchema,
  type CalendarParams,
  CODE_MAX_LENGTH,
  CODE_MIN_LENGTH,
  type FundParams,
  LIMIT_DEFAULT,
  LIMIT_MAX,
  type ListQuery,
  MARKET_US,
  NO_CONTROL_CHARS_PATTERN,
  Q_MAX_LENGTH,
  type TrailingBatchRequest,
  TrailingBatchRequestSchema,
  type TrailingParams,
  YEAR_MAX,
  YEAR_MIN,
} from '../schemas/index.js';
import { ajv } from './ajv.js';
import { decodeCursor } from './cursor.js';
import { type DateResult, parsePydanticDate, parsePydanticDateNumber } from './pydantic/date.js';
import { pythonJsonError } from './pydantic/json-error.js';
import { PyNumber, parsePythonJson, stringifyWithPyNumbers } from './pydantic/json-numbers.js';
import {
  DATE_TYPE,
  FINITE_NUMBER,
  FUND_TYPE_EXPECTED,
  geIssue,
  INT_FROM_FLOAT,
  INT_PARSING_SIZE,
  INT_TYPE,
  intIssue,
  JSON_INVALID,
  LIST_TYPE,
  type Loc,
  leIssue,
  listLength,
  literalError,
  MODEL_ATTRIBUTES_TYPE,
  missing,
  patternMismatch,
  STRING_TYPE,
  stringTooLong,
  stringTooShort,
  type ValidationIssue,
  valueError,
} from './pydantic/messages.js';
import { codePointLength, parsePydanticInt, pydanticStrip } from './pydantic/scalars.js';

export type { Loc, ValidationIssue } from './pydantic/messages.js';

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** The 422 body for a list of issues (C20). */
export function validationErrorBody(issues: ValidationIssue[]): { detail: ValidationIssue[] } {
  return {
    detail: issues.map((i) =>
      i.input !== undefined && needsCopy(i.input, 0) ? { ...i, input: clip(i.input, 0) } : i,
    ),
  };
}

/** The 422 body as JSON, numbers from a body echoed as Python writes them (pydantic/json-numbers.ts). */
export function validationErrorJson(issues: ValidationIssue[]): string {
  return stringifyWithPyNumbers(validationErrorBody(issues));
}

/**
 * How deep an echoed `input` may nest (C20 echoes what was sent). JSON.stringify and
 * MessagePack recurse, so a body of 20,000 nested arrays, which JSON.parse reads
 * happily, would overflow the stack while its 422 is written; deeper levels are
 * echoed as CLIPPED instead. No valid request nests more than two levels.
 */
export const ECHO_DEPTH_MAX = 32;
export const CLIPPED = '(nested too deep to echo)';

/**
 * True when `v` cannot be echoed as it is: it nests too deep, or holds a number JSON
 * has no form for (JSON.parse reads 1e400 as Infinity, which JSON.stringify would
 * print as null; it is echoed as the string "Infinity").
 */
/** `v` as it may be echoed or serialized: clipped at ECHO_DEPTH_MAX levels, no infinite numbers. */
export function echoable(v: unknown): unknown {
  return needsCopy(v, 0) ? clip(v, 0) : v;
}

function needsCopy(v: unknown, depth: number): boolean {
  if (typeof v === 'number') return !Number.isFinite(v);
  if (v === null || typeof v !== 'object' || v instanceof PyNumber) return false;
  if (depth >= ECHO_DEPTH_MAX) return true;
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (needsCopy(x, depth + 1)) return true;
  return false;
}

function clip(v: unknown, depth: number): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v === null || typeof v !== 'object' || v instanceof PyNumber) return v;
  if (depth >= ECHO_DEPTH_MAX) return CLIPPED;
  if (Array.isArray(v)) return v.map((x) => clip(x, depth + 1));
  // No prototype: a key "__proto__" (JSON.parse makes it an own key) stays a key.
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, x] of Object.entries(v)) out[k] = clip(x, depth + 1);
  return out;
}

// ---------------------------------------------------------------------------
// ajv, compiled once (the instance the MCP tools use too)

const checkTrailingBatch: ValidateFunction = ajv.compile(TrailingBatchRequestSchema);
const checkCalendarBatch: ValidateFunction = ajv.compile(CalendarBatchRequestSchema);

// ---------------------------------------------------------------------------
// Scalars: Pydantic's readings (server/pydantic/) turned into issues

function dateOrIssue(loc: Loc, input: unknown, r: DateResult): ValidationIssue | string {
  if (r.ok) return r.value;
  const issue: ValidationIssue = { type: r.type, loc, msg: r.msg, input };
  if (r.ctx !== undefined) issue.ctx = r.ctx;
  return issue;
}

/** A date written as text (a query value, a JSON string): the canonical form needs only the calendar check. */
function dateIssue(loc: Loc, raw: string): ValidationIssue | string {
  return parseDay(raw) !== null ? raw : dateOrIssue(loc, raw, parsePydanticDate(raw));
}

const CONTROL_RE = new RegExp(NO_CONTROL_CHARS_PATTERN, 'u');

/**
 * C15 checks of one code, in Pydantic's order (min length, max length, pattern): at
 * most one issue per value, as Pydantic stops at the first failed constraint.
 */
function codeIssue(code: string, loc: Loc): ValidationIssue | undefined {
  const n = code.length > CODE_MAX_LENGTH ? codePointLength(code) : code.length;
  if (n < CODE_MIN_LENGTH) return stringTooShort(loc, code, CODE_MIN_LENGTH);
  if (n > CODE_MAX_LENGTH) return stringTooLong(loc, code, CODE_MAX_LENGTH);
  if (!CONTROL_RE.test(code)) return patternMismatch(loc, code, NO_CONTROL_CHARS_PATTERN);
  return undefined;
}

const NO_ISSUES: ValidationIssue[] = [];
Object.freeze(NO_ISSUES);

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

/**
 * FastAPI parses the body as JSON only when its Content-Type is `application/json`
 * or `application/*+json`; anything else, a missing or empty Content-Type included
 * (FastAPI's `strict_content_type`, the default since 0.132), reaches the model as
 * raw text and fails as `model_attributes_type` (C21). An HTTP request without the
 * header passes `''`; `undefined` is for callers with no header at all (JSON).
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  const semi = contentType.indexOf(';');
  const mt = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (mt === 'application/json') return true;
  return mt.startsWith('application/') && mt.endsWith('+json');
}

const utf8Lenient = new TextDecoder('utf-8');

type BodyParse =
  | { ok: true; body: Record<string, unknown>; text: string }
  | { ok: false; issues: ValidationIssue[] };

const BODY: Loc = ['body'];

function parseBody(raw: Uint8Array | string, contentType: string | undefined): BodyParse {
  if (raw.length === 0) return { ok: false, issues: [missing(BODY, null)] };
  if (!isJsonContentType(contentType)) {
    const text = typeof raw === 'string' ? raw : utf8Lenient.decode(raw);
    return {
      ok: false,
      issues: [{ type: 'model_attributes_type', loc: BODY, msg: MODEL_ATTRIBUTES_TYPE, input: text }],
    };
  }
  let text: string;
  if (typeof raw === 'string') text = raw;
  else {
    try {
      // isUtf8 is a native scan; decoding through Buffer then skips TextDecoder's fatal mode.
      if (!isUtf8(raw)) throw new Error('invalid UTF-8');
      text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
      // A UTF-8 BOM is skipped, as Python's json.loads does for bytes (utf-8-sig), so FastAPI.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    } catch {
      // Python's json.loads raises UnicodeDecodeError here (FastAPI: 400); a 422 at
      // the body is the closer fit to C21's "a JSON body that does not parse".
      return {
        ok: false,
        issues: [
          {
            type: 'json_invalid',
            loc: ['body', 0],
            msg: JSON_INVALID,
            input: {},
            ctx: { error: 'Invalid UTF-8' },
          },
        ],
      };
    }
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const { pos, msg } = pythonJsonError(text);
    return {
      ok: false,
      issues: [
        { type: 'json_invalid', loc: ['body', pos], msg: JSON_INVALID, input: {}, ctx: { error: msg } },
      ],
    };
  }
  // FastAPI treats a JSON null body like an absent one.
  if (body === null) return { ok: false, issues: [missing(BODY, null)] };
  if (typeof body !== 'object' || Array.isArray(body)) {
    const issues = [{ type: 'model_attributes_type', loc: BODY, msg: MODEL_ATTRIBUTES_TYPE, input: body }];
    return { ok: false, issues: withPythonNumbers(issues, text) };
  }
  return { ok: true, body: body as Record<string, unknown>, text };
}

function holdsNumber(v: unknown, depth = 0): boolean {
  if (typeof v === 'number') return true;
  if (v === null || typeof v !== 'object' || depth > ECHO_DEPTH_MAX) return false;
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (holdsNumber(x, depth + 1)) return true;
  return false;
}

/** The body as Python's json.loads reads it (numbers kept as written), read once and only when needed. */
function pythonReading(text: string): () => unknown {
  let v: unknown;
  let read = false;
  return () => {
    if (!read) {
      v = parsePythonJson(text, ECHO_DEPTH_MAX, CLIPPED);
      read = true;
    }
    return v;
  };
}

function at(v: unknown, path: Loc): unknown {
  let cur = v;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || cur instanceof PyNumber) return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/**
 * Issues whose echoed input holds a number take it from Python's reading of the body
 * (C20: FastAPI echoes `1899.0`, `-0.0`, `1e+16` and every digit of a big integer,
 * where JSON.parse keeps only a double). A `missing` issue echoes the object the field
 * is missing from.
 */
function withPythonNumbers(
  issues: ValidationIssue[],
  text: string,
  python: () => unknown = pythonReading(text),
): ValidationIssue[] {
  for (const i of issues) {
    if (!holdsNumber(i.input)) continue;
    const v = at(python(), i.type === 'missing' ? i.loc.slice(1, -1) : i.loc.slice(1));
    if (v !== undefined) i.input = v;
  }
  return issues;
}

/**
 * The schema's rule for `codes` (1..100 strings, each a possible code, C15) checked
 * by hand: the common valid batch skips ajv; anything else goes to ajv for the
 * exact error list.
 */
function codesValidFast(codes: unknown): boolean {
  if (!Array.isArray(codes) || codes.length < 1 || codes.length > BATCH_MAX_CODES) return false;
  for (let k = 0; k < codes.length; k++) {
    const c = codes[k];
    if (typeof c !== 'string' || !isPossibleCode(c)) return false;
  }
  return true;
}

/** Pydantic's order of str constraint checks; one issue per value. */
const ITEM_KEYWORD_RANK: Record<string, number> = { type: 0, minLength: 1, maxLength: 2, pattern: 3 };

/**
 * `codes` issues from ajv's errors, with Pydantic's list semantics: over the maximum
 * length only `too_long` is reported (the item loop stops there); otherwise item
 * errors; `too_short` only when every item passed.
 */
function codesIssues(errors: ErrorObject[], body: Record<string, unknown>): ValidationIssue[] {
  const codes = body.codes;
  if (codes === undefined) return [missing(['body', 'codes'], body)];
  if (!Array.isArray(codes))
    return [{ type: 'list_type', loc: ['body', 'codes'], msg: LIST_TYPE, input: codes }];
  if (codes.length > BATCH_MAX_CODES) {
    return [listLength(['body', 'codes'], codes, 'max', BATCH_MAX_CODES)];
  }
  const worst = new Map<number, ErrorObject>();
  for (const e of errors) {
    if (!e.instancePath.startsWith('/codes/')) continue;
    const index = Number(e.instancePath.slice(7));
    const prev = worst.get(index);
    if (prev === undefined || ITEM_KEYWORD_RANK[e.keyword] < ITEM_KEYWORD_RANK[prev.keyword])
      worst.set(index, e);
  }
  if (worst.size > 0) {
    const issues: ValidationIssue[] = [];
    for (const index of [...worst.keys()].sort((a, b) => a - b)) {
      const loc: Loc = ['body', 'codes', index];
      const item = codes[index];
      const issue =
        typeof item === 'string'
          ? codeIssue(item, loc)
          : { type: 'string_type', loc, msg: STRING_TYPE, input: item };
      if (issue !== undefined) issues.push(issue);
    }
    return issues;
  }
  if (codes.length < 1) {
    return [listLength(['body', 'codes'], codes, 'min', 1)];
  }
  return NO_ISSUES;
}

function marketOf(body: Record<string, unknown>, issues: ValidationIssue[]): string {
  const m = body.market;
  if (m === undefined) return MARKET_US;
  if (typeof m === 'string') return m;
  issues.push({ type: 'string_type', loc: ['body', 'market'], msg: STRING_TYPE, input: m });
  return MARKET_US;
}

function bodyAsOf(body: Record<string, unknown>, issues: ValidationIssue[]): string | null {
  const v = body.as_of;
  if (v === undefined || v === null) return null;
  const loc: Loc = ['body', 'as_of'];
  // Lax mode reads a JSON number as a Unix timestamp.
  if (typeof v === 'string' || typeof v === 'number') {
    const r = typeof v === 'string' ? dateIssue(loc, v) : dateOrIssue(loc, v, parsePydanticDateNumber(v));
    if (typeof r === 'string') return r;
    issues.push(r);
    return null;
  }
  issues.push({ type: 'date_type', loc, msg: DATE_TYPE, input: v });
  return null;
}

function bodyYear(
  body: Record<string, unknown>,
  issues: ValidationIssue[],
  python: () => unknown,
): number | null {
  const v = body.year;
  if (v === undefined || v === null) return null;
  const loc: Loc = ['body', 'year'];
  let n: number;
  if (typeof v === 'number' && !(Math.abs(v) < 2 ** 63)) {
    // Past i64 what Pydantic says depends on how the number was written: an integer
    // (even one of 400 digits, Infinity to JSON.parse) is simply out of range; a float
    // cannot become an int (int_parsing_size), or is not finite (1e400).
    const lit = at(python(), ['year']);
    if (lit instanceof PyNumber && lit.isInt) {
      issues.push(v > 0 ? leIssue(loc, lit, YEAR_MAX) : geIssue(loc, lit, YEAR_MIN));
      return null;
    }
    if (Number.isFinite(v)) {
      issues.push({ type: 'int_parsing_size', loc, msg: INT_PARSING_SIZE, input: lit ?? v });
      return null;
    }
  }
  if (typeof v === 'number') {
    // JSON.parse reads 1e400 as Infinity, which JSON would echo as null.
    if (!Number.isFinite(v)) {
      issues.push({ type: 'finite_number', loc, msg: FINITE_NUMBER, input: String(v) });
      return null;
    }
    if (!Number.isInteger(v)) {
      issues.push({ type: 'int_from_float', loc, msg: INT_FROM_FLOAT, input: v });
      return null;
    }
    n = v;
  } else if (typeof v === 'string') {
    const p = parsePydanticInt(v);
    if (typeof p !== 'number') {
      issues.push(intIssue(loc, v, p));
      return null;
    }
    n = p;
  } else if (typeof v === 'boolean') {
    // Pydantic's lax int accepts booleans as 0 and 1 (then fails the range check).
    n = v ? 1 : 0;
  } else {
    issues.push({ type: 'int_type', loc, msg: INT_TYPE, input: v });
    return null;
  }
  if (n < YEAR_MIN) issues.push(geIssue(loc, v, YEAR_MIN));
  else if (n > YEAR_MAX) issues.push(leIssue(loc, v, YEAR_MAX));
  else return n;
  return null;
}

/**
 * POST /v1/trailing-returns/batch body. Parses the JSON itself (C21: `json_invalid`,
 * `model_attributes_type`); unknown fields are ignored, as FastAPI does.
 */
export function validateTrailingBatchBody(
  raw: Uint8Array | string,
  contentType: string | undefined,
): Validated<TrailingBatchRequest> {
  const parsed = parseBody(raw, contentType);
  if (!parsed.ok) return parsed;
  const body = parsed.body;
  const valid = codesValidFast(body.codes) || checkTrailingBatch(body);
  const issues = valid ? [] : [...codesIssues(checkTrailingBatch.errors ?? [], body)];
  const market = marketOf(body, issues);
  const as_of = bodyAsOf(body, issues);
  if (issues.length > 0) return { ok: false, issues: withPythonNumbers(issues, parsed.text) };
  const value: TrailingBatchRequest = { codes: body.codes as string[], market, as_of };
  // `fields` is read by the answer (server/fields.ts), against the row's own figure names.
  if (body.fields !== undefined) value.fields = body.fields;
  return { ok: true, value };
}

/** POST /v1/calendar-returns/batch body (C14). */
export function validateCalendarBatchBody(
  raw: Uint8Array | string,
  contentType: string | undefined,
): Validated<CalendarBatchRequest> {
  const parsed = parseBody(raw, contentType);
  if (!parsed.ok) return parsed;
  const body = parsed.body;
  const valid = codesValidFast(body.codes) || checkCalendarBatch(body);
  const issues = valid ? [] : [...codesIssues(checkCalendarBatch.errors ?? [], body)];
  const market = marketOf(body, issues);
  const python = pythonReading(parsed.text);
  const year = bodyYear(body, issues, python);
  if (issues.length > 0) return { ok: false, issues: withPythonNumbers(issues, parsed.text, python) };
  const value: CalendarBatchRequest = { codes: body.codes as string[], market, year };
  if (body.fields !== undefined) value.fields = body.fields;
  return { ok: true, value };
}
