/**
 * Fund codes (C15, C18): what a code may be, and the one order every list uses.
 */

export const MAX_CODE_LENGTH = 32;

/**
 * C15: 1 to 32 characters, none of them a control character. A code failing this
 * cannot exist, so it is a 422 at the edge rather than a 404.
 */
export function isPossibleCode(code: string): boolean {
  if (code.length === 0 || code.length > MAX_CODE_LENGTH) return false;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return false;
  }
  return true;
}

/**
 * Byte order of the UTF-8 encodings (C18). For strings without surrogate pairs or
 * characters at or above U+E000, UTF-16 code-unit order is the same; the slow path
 * only runs for such strings.
 */
export function compareCodes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    return Buffer.compare(Buffer.from(a.slice(i), 'utf8'), Buffer.from(b.slice(i), 'utf8'));
  }
  return a.length - b.length;
}
