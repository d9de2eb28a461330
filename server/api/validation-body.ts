/**
 * Request bodies of the batch routes (C16, C20, C21): the content type, the JSON read as
 * Pydantic reads it, then ajv's checks, compiled once from `schemas/`, mapped to
 * Pydantic's issues.
 */
import { isUtf8 } from 'node:buffer';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { isPossibleCode } from '../../core/codes.js';
import {
  BATCH_MAX_CODES,
  type CalendarBatchRequest,
  CalendarBatchRequestSchema,
  MARKET_US,
  type RiskBatchRequest,
  RiskBatchRequestSchema,
  type TrailingBatchRequest,
  TrailingBatchRequestSchema,
  YEAR_MAX,
  YEAR_MIN,
} from '../../schemas/index.js';
import { parsePydanticDateNumber } from '../pydantic/date.js';
import { pythonJsonError } from '../pydantic/json-error.js';
import { PyNumber, parsePythonJson } from '../pydantic/json-numbers.js';
import {
  DATE_TYPE,
  FINITE_NUMBER,
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
  MODEL_ATTRIBUTES_TYPE,
  missing,
  STRING_TYPE,
  type ValidationIssue,
} from '../pydantic/messages.js';
import { parsePydanticInt } from '../pydantic/scalars.js';
import { ajv } from './ajv.js';

import {
  CLIPPED,
  codeIssue,
  dateIssue,
  dateOrIssue,
  ECHO_DEPTH_MAX,
  NO_ISSUES,
  type Validated,
} from './validation-issues.js';

// ---------------------------------------------------------------------------
// ajv, compiled once (the instance the MCP tools use too)

const checkTrailingBatch: ValidateFunction = ajv.compile(TrailingBatchRequestSchema);
const checkCalendarBatch: ValidateFunction = ajv.compile(CalendarBatchRequestSchema);
const checkRiskBatch: ValidateFunction = ajv.compile(RiskBatchRequestSchema);

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
 * The schema's rule for `codes` (1..BATCH_MAX_CODES strings, each a possible code, C15) checked
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
  // `fields` is read by the answer (server/api/fields.ts), against the row's own figure names.
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

// ---------------------------------------------------------------------------
// Risk figures (C46): whether a benchmark is a fund of the universe is the answer's
// check (it needs the snapshot); here only its form (C15).

/** POST /v1/risk/batch body. */
export function validateRiskBatchBody(
  raw: Uint8Array | string,
  contentType: string | undefined,
): Validated<RiskBatchRequest> {
  const parsed = parseBody(raw, contentType);
  if (!parsed.ok) return parsed;
  const body = parsed.body;
  const valid = codesValidFast(body.codes) || checkRiskBatch(body);
  const issues = valid ? [] : [...codesIssues(checkRiskBatch.errors ?? [], body)];
  const market = marketOf(body, issues);
  const as_of = bodyAsOf(body, issues);
  let benchmark: string | null = null;
  const b = body.benchmark;
  if (typeof b === 'string') {
    const issue = codeIssue(b, ['body', 'benchmark']);
    if (issue === undefined) benchmark = b;
    else issues.push(issue);
  } else if (b !== undefined && b !== null) {
    issues.push({ type: 'string_type', loc: ['body', 'benchmark'], msg: STRING_TYPE, input: b });
  }
  if (issues.length > 0) return { ok: false, issues: withPythonNumbers(issues, parsed.text) };
  return { ok: true, value: { codes: body.codes as string[], market, as_of, benchmark } };
}
