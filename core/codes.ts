/**
 * Fund codes (C15, C18): what a code may be, and the one order every list uses.
 */

/** C15: a code's length bounds, in characters (code points, as JSON Schema's maxLength and Python count them). */
export const CODE_MIN_LENGTH = 1;
export const CODE_MAX_LENGTH = 32;

/**
 * C15: the characters no code holds, the control characters (Unicode category Cc:
 * C0, DEL, C1), spelled with \u escapes so the schema pattern built from it is plain
 * ASCII in the OpenAPI document.
 */
const CONTROL_CHARS = '\\u0000-\\u001F\\u007F-\\u009F';

/** C15 as a JSON Schema pattern: the schemas and the request validation use it. */
export const NO_CONTROL_CHARS_PATTERN = `^[^${CONTROL_CHARS}]*$`;

const CONTROL_CHAR = new RegExp(`[${CONTROL_CHARS}]`);

/** C15 in words, for the schemas' descriptions. */
export const CODE_RULE_TEXT = `${CODE_MIN_LENGTH} to ${CODE_MAX_LENGTH} characters without control characters`;

/**
 * Why `code` cannot be a fund code, or null when it can (C15). Such a code is a 422 at
 * the edge, not a 404.
 */
export function codeProblem(code: string): string | null {
  if (code.length < CODE_MIN_LENGTH) return 'empty code';
  if (CONTROL_CHAR.test(code)) return 'control character in code';
  if (code.length <= CODE_MAX_LENGTH) return null;
  let n = 0;
  // A surrogate pair is one character.
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n > CODE_MAX_LENGTH ? `code longer than ${CODE_MAX_LENGTH} characters` : null;
}

/**
 * C21's sentence for an unknown code, said alike by the API's 404 and `fundreturns
 * query`. Codes are case-sensitive (C15), so a code that exists in another case is
 * named: the commonest mistake gets its answer.
 */
export function unknownCodeDetail(code: string, exists: (code: string) => boolean): string {
  for (const other of [code.toUpperCase(), code.toLowerCase()]) {
    if (other !== code && exists(other))
      return `No fund with code ${code} (codes are case-sensitive: ${other} exists)`;
  }
  return `No fund with code ${code}`;
}

export function isPossibleCode(code: string): boolean {
  return codeProblem(code) === null;
}

/**
 * Orders strings as their UTF-8 bytes would compare (= code point order, C18), which
 * is not JS `<`: UTF-16 puts U+E000–U+FFFF after astral characters' surrogates.
 */
export function compareCodes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates stand for code points above U+FFFF, so they must sort after U+E000–U+FFFF.
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x - y;
  }
  return a.length - b.length;
}
