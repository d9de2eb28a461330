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
import { isPossibleCode, MAX_CODE_LENGTH } from '../core/codes.js';

const VERSION = 1;

/** A code has at most 32 UTF-16 units, each at most 3 UTF-8 bytes (a surrogate pair: 4 bytes for 2 units). */
const MAX_PAYLOAD_BYTES = 1 + MAX_CODE_LENGTH * 3;
const MAX_CURSOR_CHARS = Math.ceil((MAX_PAYLOAD_BYTES * 4) / 3);

const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;
// fatal: a cursor with invalid UTF-8 was not issued by us. ignoreBOM: a code may
// legally start with U+FEFF, and the default decoder would silently drop it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function encodeCursor(lastCode: string): string {
  const code = Buffer.from(lastCode, 'utf8');
  const payload = Buffer.allocUnsafe(code.length + 1);
  payload[0] = VERSION;
  code.copy(payload, 1);
  return payload.toString('base64url');
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
