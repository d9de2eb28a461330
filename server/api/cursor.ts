/**
 * `next_cursor` of GET /v1/funds (C18): an opaque keyset cursor holding only the last
 * code returned. Because the next page is "strictly after this code in byte order",
 * a cursor needs no snapshot id or offset and stays valid across data refreshes and
 * filter changes.
 *
 * Wire form: base64url without padding of [version byte, UTF-8 of the code]. The
 * version byte lets a later format (say, a second sort key) reject old cursors
 * cleanly instead of misreading them.
 */
import { CODE_MAX_LENGTH, isPossibleCode } from '../../core/codes.js';

const VERSION = 1;

/** A code has at most 32 UTF-16 units, each at most 3 UTF-8 bytes (a surrogate pair: 4 bytes for 2 units). */
const MAX_PAYLOAD_BYTES = 1 + CODE_MAX_LENGTH * 3;
const MAX_CURSOR_CHARS = Math.ceil((MAX_PAYLOAD_BYTES * 4) / 3);

const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;
// fatal: a cursor with invalid UTF-8 was not issued by us. ignoreBOM: a code may
// legally start with U+FEFF, and the default decoder would silently drop it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function encodeCursor(lastCode: string): string {
  const b = new Uint8Array(cursorLength(lastCode));
  const end = writeCursor(b, 0, lastCode);
  return Buffer.from(b.buffer, 0, end).toString('latin1');
}

const BASE64URL = Uint8Array.from(
  Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1'),
);
const utf8Encoder = new TextEncoder();
/** The payload being encoded (version byte, UTF-8 of the code), reused. */
let payload = new Uint8Array(1 + MAX_PAYLOAD_BYTES);

/** The most characters `writeCursor` writes for this code. */
export function cursorLength(lastCode: string): number {
  return Math.ceil(((1 + lastCode.length * 3) * 4) / 3);
}

/**
 * The cursor for `lastCode` written as ASCII at b[at] (room: cursorLength); returns
 * the end. A list page writes it straight into its answer's bytes.
 */
export function writeCursor(b: Uint8Array, at: number, lastCode: string): number {
  if (payload.length < 1 + lastCode.length * 3) payload = new Uint8Array(1 + lastCode.length * 3);
  const p = payload;
  p[0] = VERSION;
  let n = 1;
  for (; n <= lastCode.length; n++) {
    const c = lastCode.charCodeAt(n - 1);
    if (c >= 0x80) break;
    p[n] = c;
  }
  // Past the ASCII prefix (most codes have none): the encoder's UTF-8.
  if (n <= lastCode.length) n += utf8Encoder.encodeInto(lastCode.slice(n - 1), p.subarray(n)).written;
  let o = at;
  let i = 0;
  for (; i + 3 <= n; i += 3) {
    const v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    b[o++] = BASE64URL[v >>> 18];
    b[o++] = BASE64URL[(v >>> 12) & 63];
    b[o++] = BASE64URL[(v >>> 6) & 63];
    b[o++] = BASE64URL[v & 63];
  }
  if (n - i === 1) {
    const v = p[i] << 16;
    b[o++] = BASE64URL[v >>> 18];
    b[o++] = BASE64URL[(v >>> 12) & 63];
  } else if (n - i === 2) {
    const v = (p[i] << 16) | (p[i + 1] << 8);
    b[o++] = BASE64URL[v >>> 18];
    b[o++] = BASE64URL[(v >>> 12) & 63];
    b[o++] = BASE64URL[(v >>> 6) & 63];
  }
  return o;
}

/** The code a cursor encodes, or null when it is not a cursor this server could have issued. */
export function decodeCursor(s: string): string | null {
  // The length cap comes first so a huge query string costs nothing to reject.
  if (s.length < 3 || s.length > MAX_CURSOR_CHARS || !BASE64URL_RE.test(s)) return null;
  const bytes = Buffer.from(s, 'base64url');
  // Buffer's decoder tolerates stray trailing bits and odd lengths; only the one
  // canonical spelling of a payload counts, so a cursor has exactly one form.
  if (bytes.toString('base64url') !== s) return null;
  if (bytes[0] !== VERSION) return null;
  let code: string;
  try {
    code = utf8.decode(bytes.subarray(1));
  } catch {
    return null;
  }
  return isPossibleCode(code) ? code : null;
}

/** Version byte of a screen cursor (C52): it carries the sort and the last row's sort value. */
const SCREEN_VERSION = 2;

/** Where a screen page ended: the sort it was issued for (`-return_5y`, '' for code order), the value, the code. */
export interface ScreenCursor {
  readonly sort: string;
  /** The last row's sort value as served; NaN when it had none (or the sort is by code). */
  readonly key: number;
  readonly code: string;
}

/**
 * A screen's `next_cursor`: base64url of [2, sort length, sort (ASCII), 8 bytes of the
 * value (float64, big-endian), the code in UTF-8]. Off the per-row path (one per
 * page), so it is built plainly.
 */
export function encodeScreenCursor(c: ScreenCursor): string {
  const sort = Buffer.from(c.sort, 'latin1');
  const code = Buffer.from(c.code, 'utf8');
  const b = Buffer.alloc(2 + sort.length + 8 + code.length);
  b[0] = SCREEN_VERSION;
  b[1] = sort.length;
  sort.copy(b, 2);
  b.writeDoubleBE(c.key, 2 + sort.length);
  code.copy(b, 10 + sort.length);
  return b.toString('base64url');
}

const SORT_RE = /^-?[a-z0-9_]*$/;

/** The screen cursor a string encodes, or null when this server could not have issued it. */
export function decodeScreenCursor(s: string): ScreenCursor | null {
  if (s.length < 3 || s.length > 512 || !BASE64URL_RE.test(s)) return null;
  const b = Buffer.from(s, 'base64url');
  if (b.toString('base64url') !== s || b[0] !== SCREEN_VERSION || b.length < 2) return null;
  const sortEnd = 2 + b[1];
  if (b.length < sortEnd + 8) return null;
  const sort = b.toString('latin1', 2, sortEnd);
  if (!SORT_RE.test(sort)) return null;
  const key = b.readDoubleBE(sortEnd);
  let code: string;
  try {
    code = utf8.decode(b.subarray(sortEnd + 8));
  } catch {
    return null;
  }
  return isPossibleCode(code) ? { sort, key, code } : null;
}
