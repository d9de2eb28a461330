/**
 * What a failed check produces (C20): the issues, the 422 body that lists them with
 * their inputs echoed safely, and the checks of a date and a code shared by the query,
 * path and body validators.
 */
import { CODE_MAX_LENGTH, CODE_MIN_LENGTH, NO_CONTROL_CHARS_PATTERN } from '../../core/codes.js';
import { parseDay } from '../../core/dates.js';
import { type DateResult, parsePydanticDate } from '../pydantic/date.js';
import { PyNumber, stringifyWithPyNumbers } from '../pydantic/json-numbers.js';
import {
  type Loc,
  patternMismatch,
  stringTooLong,
  stringTooShort,
  type ValidationIssue,
} from '../pydantic/messages.js';
import { codePointLength } from '../pydantic/scalars.js';

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
// Scalars: Pydantic's readings (server/pydantic/) turned into issues

export function dateOrIssue(loc: Loc, input: unknown, r: DateResult): ValidationIssue | string {
  if (r.ok) return r.value;
  const issue: ValidationIssue = { type: r.type, loc, msg: r.msg, input };
  if (r.ctx !== undefined) issue.ctx = r.ctx;
  return issue;
}

/** A date written as text (a query value, a JSON string): the canonical form needs only the calendar check. */
export function dateIssue(loc: Loc, raw: string): ValidationIssue | string {
  return parseDay(raw) !== null ? raw : dateOrIssue(loc, raw, parsePydanticDate(raw));
}

const CONTROL_RE = new RegExp(NO_CONTROL_CHARS_PATTERN, 'u');

/**
 * C15 checks of one code, in Pydantic's order (min length, max length, pattern): at
 * most one issue per value, as Pydantic stops at the first failed constraint.
 */
export function codeIssue(code: string, loc: Loc): ValidationIssue | undefined {
  const n = code.length > CODE_MAX_LENGTH ? codePointLength(code) : code.length;
  if (n < CODE_MIN_LENGTH) return stringTooShort(loc, code, CODE_MIN_LENGTH);
  if (n > CODE_MAX_LENGTH) return stringTooLong(loc, code, CODE_MAX_LENGTH);
  if (!CONTROL_RE.test(code)) return patternMismatch(loc, code, NO_CONTROL_CHARS_PATTERN);
  return undefined;
}

export const NO_ISSUES: ValidationIssue[] = [];
Object.freeze(NO_ISSUES);
