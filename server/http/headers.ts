/**
 * Response headers as bytes, assembled once per response into a per-thread buffer
 * and handed to uWS in one call: the status text followed by every header line,
 * given to `writeStatus` (uWS writes "HTTP/1.1 ", the bytes, CRLF).
 *
 * Both halves were measured in the server (bench/reports/http.md):
 * - every `writeHeader` is a call into C++; five separate calls ran at 67 % of a
 *   one-header answer, the same bytes in one call at 93 %; folding that one call
 *   into `writeStatus` saves another call and its Content-Type argument (0.1 µs of
 *   server CPU per request in an alternating A/B);
 * - a header string built per request (a plan's policy plus the RateLimit numbers)
 *   must be flattened and converted to UTF-8 by the binding, about 0.5 µs a
 *   request; copying pre-encoded bytes and writing the digits in place costs
 *   almost nothing.
 *
 * The fixed parts (the snapshot's X-Data-As-Of, a plan's RateLimit-Policy, Allow,
 * Retry-After) are encoded once as `HeaderBlock`s. Only the server's own values go
 * into a block, never request input, and `headerBlock` refuses anything but
 * printable ASCII, so no value can split a line.
 */
import { copyInto } from '../../core/bytes.js';
import { writeUint } from '../../core/format.js';

export type Header = readonly [string, string];

/** Pre-encoded header lines, each "\r\nName: value"; empty is none. */
export type HeaderBlock = Uint8Array;

export const NO_HEADERS: HeaderBlock = new Uint8Array(0);

/** Headers that are written per response (they hold per-request numbers). */
export interface HeaderSource {
  writeHeaders(w: HeaderWriter): void;
}

const PRINTABLE = /^[\x20-\x7e]*$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Encode headers once, off the hot path. Throws on a name that is not a token or a value with a control or non-ASCII character. */
export function headerBlock(headers: readonly Header[]): HeaderBlock {
  let text = '';
  for (const [name, value] of headers) {
    if (!TOKEN.test(name) || !PRINTABLE.test(value))
      throw new Error(
        `header ${JSON.stringify(name)} cannot be sent: bad name or a control character in its value`,
      );
    text += `\r\n${name}: ${value}`;
  }
  return ascii(text);
}

/** A fixed header block as a HeaderSource (a refusal's WWW-Authenticate). */
export function staticHeaders(block: HeaderBlock): HeaderSource {
  return { writeHeaders: (w) => w.bytes(block) };
}

/** ASCII text as bytes (one byte per character). */
export function ascii(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, 'latin1'));
}

/**
 * One response's header bytes. A thread answers one request at a time, so one
 * writer per thread is reused: `start`, append, then `view` for uWS, which copies
 * the bytes before `writeStatus` returns.
 */
export class HeaderWriter {
  #buf = new Uint8Array(4096);
  #n = 0;
  /** A view of `buf` per length, made on first use: a response's `view` allocates nothing. */
  #views: Array<Uint8Array | null> = emptyViews(this.#buf.length);

  start(first: Uint8Array): this {
    this.#n = 0;
    return this.bytes(first);
  }

  bytes(b: Uint8Array): this {
    const len = b.length;
    if (this.#n + len > this.#buf.length) this.#grow(len);
    const buf = this.#buf;
    let n = this.#n;
    // TypedArray#set costs about as much as copying 8 bytes one by one, whatever the size.
    if (len < 8) for (let i = 0; i < len; i++) buf[n++] = b[i];
    else n = copyInto(buf, b, n);
    this.#n = n;
    return this;
  }

  /** A non-negative integer in decimal (numbers from the limiter: counts and seconds). */
  uint(v: number): this {
    if (this.#n + 20 > this.#buf.length) this.#grow(20);
    let x = Math.floor(v);
    if (!(x >= 0 && x <= Number.MAX_SAFE_INTEGER)) x = 0;
    this.#n = writeUint(this.#buf, this.#n, x);
    return this;
  }

  /** The bytes written since `start`; valid until the next `start` (uWS copies them at once). */
  view(): Uint8Array {
    const n = this.#n;
    let v = this.#views[n];
    if (v === null) {
      v = this.#buf.subarray(0, n);
      this.#views[n] = v;
    }
    return v;
  }

  #grow(extra: number): void {
    const next = new Uint8Array(Math.max(this.#buf.length * 2, this.#n + extra));
    next.set(this.#buf.subarray(0, this.#n));
    this.#buf = next;
    this.#views = emptyViews(next.length);
  }
}

function emptyViews(size: number): Array<Uint8Array | null> {
  return new Array<Uint8Array | null>(size + 1).fill(null);
}

/** The writer of this thread (module state is per worker thread). */
export const headerWriter = new HeaderWriter();

/**
 * Request header names as bytes. uWS converts a string argument to UTF-8 on every
 * call; bytes it reads as they are. Measured in the server: passing the two names
 * of a single lookup as bytes took its server CPU from 7.35 to 6.8 µs.
 */
export const requestHeader = {
  accept: ascii('accept'),
  acceptEncoding: ascii('accept-encoding'),
  authorization: ascii('authorization'),
  contentLength: ascii('content-length'),
  contentType: ascii('content-type'),
  host: ascii('host'),
} as const;
