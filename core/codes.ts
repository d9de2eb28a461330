/**
 * Fund codes (C15, C18): what a code may be, and the one order every list uses.
 */

export const MAX_CODE_LENGTH = 32;

/**
 * Why `code` cannot be a fund code, or null when it can (C15): 1 to 32 characters
 * (code points, as JSON Schema's maxLength and Python count them), none of them a
 * control character (C0, DEL, C1). Such a code is a 422 at the edge, not a 404.
 */
export function codeProblem(code: string): string | null {
  if (code.length === 0) return 'empty code';
  let n = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return 'control character in code';
    // A surrogate pair is one character.
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n > MAX_CODE_LENGTH ? `code longer than ${MAX_CODE_LENGTH} characters` : null;
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
