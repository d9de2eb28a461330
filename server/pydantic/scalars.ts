/**
 * Python's and Pydantic's reading of scalar inputs where JavaScript's differs: a
 * string's length in code points (`len()`, what Pydantic's string constraints
 * count) and Pydantic's lax string → int.
 */

/** Python `len()`: code points, not UTF-16 units. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * Rust's `str::trim` (Unicode White_Space), which Pydantic uses to strip strings:
 * unlike JavaScript's `trim` it strips U+0085 and keeps U+FEFF; unlike Python's
 * `str.strip` it keeps U+001C–U+001F.
 */
const RUST_SPACE =
  '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const RUST_TRIM_RE = new RegExp(`^${RUST_SPACE}+|${RUST_SPACE}+$`, 'g');
const RUST_SPACE_EDGE_RE = new RegExp(`^${RUST_SPACE}|${RUST_SPACE}$`);

export function pydanticStrip(s: string): string {
  return RUST_SPACE_EDGE_RE.test(s) ? s.replace(RUST_TRIM_RE, '') : s;
}

/** What Pydantic's lax int reports for a string it cannot read. */
export type IntParsingError = 'int_parsing' | 'int_parsing_size';

/** An integer as Pydantic reads one: a sign, then ASCII digits with single underscores between them. */
const INT_RE = /^[+-]?\d+(?:_\d+)*$/;
const DECIMAL_ZEROS_RE = /^(.+)\.0+$/;
/** The most digits Pydantic reads (Python's int/str conversion limit), leading zeros aside. */
const INT_DIGITS_MAX = 4300;
/** A sign and more digits than that, leading zeros aside: too big, whatever follows. */
const TOO_MANY_DIGITS_RE = new RegExp(`^[+-]?0*[1-9]\\d{${INT_DIGITS_MAX},}`);
const SIGNED_TOO_MANY_DIGITS_RE = new RegExp(`^[+-]0*[1-9]\\d{${INT_DIGITS_MAX - 1},}$`);

/**
 * Pydantic's lax str → int (pydantic-core `str_as_int`): stripped of white space
 * (pydanticStrip); a sign and ASCII digits, single underscores between digits and a
 * `.0…` tail allowed; more than 4,300 characters of number (sign included, leading
 * zeros not) is `int_parsing_size`. Beyond 2^53 the number is inexact, which the
 * callers' bounds (limit capped at 1,000, year at most 2100) make harmless.
 */
export function parsePydanticInt(raw: string): number | IntParsingError {
  const s = pydanticStrip(raw);
  let text: string | null = null;
  if (INT_RE.test(s)) text = s;
  else {
    const dz = DECIMAL_ZEROS_RE.exec(s);
    if (dz !== null && INT_RE.test(dz[1])) text = dz[1];
  }
  if (text === null) return TOO_MANY_DIGITS_RE.test(s) ? 'int_parsing_size' : 'int_parsing';
  const digits = text.includes('_') ? text.replaceAll('_', '') : text;
  if (
    digits.length > INT_DIGITS_MAX &&
    (TOO_MANY_DIGITS_RE.test(digits) || SIGNED_TOO_MANY_DIGITS_RE.test(digits))
  )
    return 'int_parsing_size';
  return Number(digits) + 0; // "-0" is 0, as in Python
}
