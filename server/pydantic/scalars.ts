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

const INT_RE = /^[+-]?\d+$/;
const INT_DECIMAL_ZEROS_RE = /^([+-]?\d+)\.0*$/;

/**
 * Pydantic's lax str → int (`str_as_int`): surrounding whitespace ignored, a sign,
 * ASCII digits, trailing `.000` allowed, single underscores between digits allowed.
 * Returns undefined when Pydantic reports `int_parsing`.
 */
export function parsePydanticInt(raw: string): number | undefined {
  const s = raw.trim();
  if (INT_RE.test(s)) return Number(s);
  const dz = INT_DECIMAL_ZEROS_RE.exec(s);
  if (dz) return Number(dz[1]);
  if (s.includes('.') || s.startsWith('_') || s.endsWith('_') || !s.includes('_') || s.includes('__')) {
    return undefined;
  }
  const stripped = s.replaceAll('_', '');
  return INT_RE.test(stripped) ? Number(stripped) : undefined;
}
