/**
 * Pydantic v2's error messages and the issues (C20's `{type, loc, msg, input, ctx}`)
 * validation.ts builds from them: the wording FastAPI clients see, kept in one
 * place and checked against recorded Pydantic output (pydantic-cases.json).
 */
import type { IntParsingError } from './scalars.js';

export type Loc = (string | number)[];

export type ValidationIssue = {
  type: string;
  loc: Loc;
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
};

const FIELD_REQUIRED = 'Field required';
const INT_PARSING = 'Input should be a valid integer, unable to parse string as an integer';
export const INT_PARSING_SIZE = 'Unable to parse input string as an integer, exceeded maximum size';
export const INT_TYPE = 'Input should be a valid integer';
export const INT_FROM_FLOAT = 'Input should be a valid integer, got a number with a fractional part';
export const FINITE_NUMBER = 'Input should be a finite number';
export const STRING_TYPE = 'Input should be a valid string';
export const LIST_TYPE = 'Input should be a valid list';
export const DATE_TYPE = 'Input should be a valid date';
export const MODEL_ATTRIBUTES_TYPE = 'Input should be a valid dictionary or object to extract fields from';
export const JSON_INVALID = 'JSON decode error';
export const FUND_TYPE_EXPECTED = "'ETF' or 'FUND'";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** An issue in FastAPI's key order (type, loc, msg, input, ctx), as clients read it. */
const issue = (
  type: string,
  loc: Loc,
  msg: string,
  input: unknown,
  ctx: Record<string, unknown>,
): ValidationIssue => ({ type, loc, msg, input, ctx });

export const geIssue = (loc: Loc, input: unknown, ge: number): ValidationIssue =>
  issue('greater_than_equal', loc, `Input should be greater than or equal to ${ge}`, input, { ge });

export const leIssue = (loc: Loc, input: unknown, le: number): ValidationIssue =>
  issue('less_than_equal', loc, `Input should be less than or equal to ${le}`, input, { le });

export const stringTooShort = (loc: Loc, input: unknown, min: number): ValidationIssue =>
  issue('string_too_short', loc, `String should have at least ${plural(min, 'character')}`, input, {
    min_length: min,
  });

export const stringTooLong = (loc: Loc, input: unknown, max: number): ValidationIssue =>
  issue('string_too_long', loc, `String should have at most ${plural(max, 'character')}`, input, {
    max_length: max,
  });

export const patternMismatch = (loc: Loc, input: unknown, pattern: string): ValidationIssue =>
  issue('string_pattern_mismatch', loc, `String should match pattern '${pattern}'`, input, { pattern });

export const literalError = (loc: Loc, input: unknown, expected: string): ValidationIssue =>
  issue('literal_error', loc, `Input should be ${expected}`, input, { expected });

/** A check of our own (an `AfterValidator` raising ValueError, in Pydantic's terms). */
export const valueError = (loc: Loc, input: unknown, error: string): ValidationIssue =>
  issue('value_error', loc, `Value error, ${error}`, input, { error });

/** A list of the wrong length: `too_long` over a `max_length`, `too_short` under a `min_length`. */
export function listLength(loc: Loc, input: unknown[], bound: 'max' | 'min', n: number): ValidationIssue {
  const over = bound === 'max';
  return issue(
    over ? 'too_long' : 'too_short',
    loc,
    `List should have ${over ? 'at most' : 'at least'} ${plural(n, 'item')} after validation, not ${input.length}`,
    input,
    { field_type: 'List', [over ? 'max_length' : 'min_length']: n, actual_length: input.length },
  );
}

export const missing = (loc: Loc, input: unknown): ValidationIssue => ({
  type: 'missing',
  loc,
  msg: FIELD_REQUIRED,
  input,
});

export function intIssue(loc: Loc, raw: string, error: IntParsingError): ValidationIssue {
  return error === 'int_parsing_size'
    ? { type: 'int_parsing_size', loc, msg: INT_PARSING_SIZE, input: raw }
    : { type: 'int_parsing', loc, msg: INT_PARSING, input: raw };
}
