/**
 * One request as the handlers see it: what was read from uWS's request object
 * (valid only synchronously inside the route callback) plus the abort flag. After
 * an abort nothing may touch `res` again (uWS rule), so every write goes through
 * `reply`, which checks it.
 */
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import { pack } from 'msgpackr';
import { countReply, ROUTE_UNMATCHED, requestStarted } from '../metrics/counters.js';
import { clientAddress, type TrustedProxies } from './client-address.js';
import {
  ascii,
  type HeaderBlock,
  type HeaderSource,
  type HeaderWriter,
  headerBlock,
  headerWriter,
  NO_HEADERS,
  requestHeader,
} from './headers.js';
import { type ContentCoding, chooseEncoding, wantsMsgpack } from './negotiation.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** Bodies at least this large are compressed when the client accepts it. */
const COMPRESS_MIN_BYTES = 8 * 1024;

/**
 * Set once the server is stopping (worker.ts): every answer then carries
 * `Connection: close` and its connection is closed after it, so a keep-alive client
 * learns it must go elsewhere from an answer instead of a reset mid-request.
 */
let closingConnections = false;

export function closeConnectionsAfterReplies(): void {
  closingConnections = true;
}

export function isClosingConnections(): boolean {
  return closingConnections;
}

/** Hears one response in `replyEvery` this thread writes (sampled access logs), before it is written. */
export type ReplyHook = (method: string, path: string, status: string, client: string) => void;
let replyHook: ReplyHook | null = null;
let replyEvery = 0;
let repliesToNext = 0;

export function onReply(hook: ReplyHook | null, every = 1): void {
  replyHook = hook;
  replyEvery = Math.max(1, every);
  repliesToNext = replyEvery;
}

/** The proxies this thread trusts to name the client (serve --trust-proxy); null: none. */
let trustedProxies: TrustedProxies | null = null;

export function trustProxies(trust: TrustedProxies | null): void {
  trustedProxies = trust;
}

const peerText = new TextDecoder();

/**
 * The client's address (client-address.ts): the peer, or behind a trusted proxy the
 * address it forwards. `req` while the route callback runs, else the forwarding
 * headers kept at detach.
 */
export function clientOf(
  res: HttpResponse,
  req: HttpRequest | null,
  kept: readonly [string, string] | null = null,
): string {
  const peer = peerText.decode(res.getRemoteAddressAsText());
  if (trustedProxies === null) return peer;
  const [xff, fwd] =
    req !== null ? [req.getHeader('x-forwarded-for'), req.getHeader('forwarded')] : (kept ?? ['', '']);
  return clientAddress(trustedProxies, peer, xff, fwd);
}

/**
 * True for the one response in `replyEvery` the hook sees. Decided before the
 * hook's arguments are made: a direct answer reads its path from uWS only then.
 */
function sampled(): boolean {
  if (replyHook === null || --repliesToNext > 0) return false;
  repliesToNext = replyEvery;
  return true;
}

export class Call {
  aborted = false;
  /** True once the response may be written outside the route callback (a body is read). */
  #deferred = false;
  /** False for a document that has one representation (/openapi.json): JSON whatever Accept says. */
  #msgpackAllowed = true;
  /** Headers every response to this request carries (the gate's rate-limit fields, C29). */
  extraHeaders: HeaderSource | null = null;
  readonly accept: string;
  /** The request, while it is valid: only during the route callback (uWS rule). */
  #req: HttpRequest | null;
  #encodings: string | null = null;
  /** X-Forwarded-For and Forwarded kept past the callback, only when a proxy is trusted. */
  #forwarding: readonly [string, string] | null = null;

  readonly #route: number;
  readonly #started: number;
  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    readonly method: string,
    readonly path: string,
    /** Index of the route answering (metrics/counters.ts ROUTE_LABELS), fixed at registration. */
    route: number = ROUTE_UNMATCHED,
    started: number = requestStarted(),
  ) {
    this.#route = route;
    this.#started = started;
    this.#req = req;
    this.accept = req.getHeader(requestHeader.accept);
  }

  /**
   * Accept-Encoding, read only when a body is large enough to compress (a single
   * row never is): one call into uWS fewer on the hot path.
   */
  get acceptEncoding(): string {
    if (this.#encodings === null)
      this.#encodings = this.#req === null ? '' : this.#req.getHeader(requestHeader.acceptEncoding);
    return this.#encodings;
  }

  /** Answer JSON as JSON even to a client that prefers MessagePack. */
  jsonOnly(): this {
    this.#msgpackAllowed = false;
    return this;
  }

  /**
   * The route callback returns before the answer (a body or an asynchronous gate is
   * awaited): keep what a later reply reads from the request, which dies now.
   */
  detach(): void {
    void this.acceptEncoding;
    if (trustedProxies !== null && this.#req !== null) {
      const r = this.#req;
      this.#forwarding = [r.getHeader('x-forwarded-for'), r.getHeader('forwarded')];
    }
    this.#req = null;
  }

  /** The client's address, read while the response is still ours to touch. */
  client(): string {
    return clientOf(this.res, this.#req, this.#forwarding);
  }

  /**
   * Attach the abort handler; needed whenever the response may be written after the
   * route callback returns (uWS then requires the write to be corked, which `reply`
   * does once this is called). `onAbort` runs too when the client goes away.
   */
  watchAbort(onAbort?: () => void): this {
    this.detach();
    this.#deferred = true;
    this.res.onAborted(() => {
      this.aborted = true;
      onAbort?.();
    });
    return this;
  }

  /**
   * Write a whole response. JSON bodies turn into MessagePack when the client prefers
   * it, and large bodies are compressed when the client accepts br or gzip (both
   * decided by negotiation.ts, with RFC 9110 weights).
   * Inside the route callback uWS corks by itself; a deferred answer corks here.
   */
  reply(
    status: string,
    contentType: string,
    body: Uint8Array | string,
    headers: HeaderBlock = NO_HEADERS,
    closeConnection = false,
  ): void {
    if (this.aborted) return;
    let type = contentType;
    let payload: Uint8Array | string = body;
    let encoding: string | null = null;
    if (type === JSON_TYPE && this.#msgpackAllowed && wantsMsgpack(this.accept)) {
      type = MSGPACK_TYPE;
      payload = pack(
        JSON.parse(
          typeof body === 'string'
            ? body
            : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'),
        ),
      );
    }
    payload = this.compressed(payload);
    encoding = this.coding;
    if (this.method === 'HEAD') {
      // RFC 9110 §9.3.2: GET's header fields, negotiated the same way, and no content,
      // whatever the answer (a 404 or 405 included): a body would be read by a
      // keep-alive client as the start of its next response.
      const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
      this.logged(status);
      this.#head(status, type, contentType, encoding, length, headers);
      return;
    }
    const extra = this.extraHeaders;
    const close = closeConnection || closingConnections;
    this.logged(status);
    if (this.#deferred)
      this.res.cork(() =>
        write(this.res, status, type, contentType, encoding, payload, headers, extra, close),
      );
    else write(this.res, status, type, contentType, encoding, payload, headers, extra, close);
  }

  /**
   * Count a response this request gets (metrics, sampled access log), before it is
   * written: the client's address is read from the response, which is not ours after
   * it ends. For writers other than `reply` (MCP) too.
   */
  logged(status: string): void {
    countReply(this.#route, status, this.#started);
    if (sampled() && !this.aborted) replyHook?.(this.method, this.path, status, this.client());
  }

  /** The content coding `compressed` last applied (Content-Encoding), or null. */
  coding: ContentCoding | null = null;

  /**
   * The body as sent: br or gzip when it is large and the client accepts one
   * (RFC 9110 §12.5.3: weights and case count, negotiation.ts), else as it is.
   */
  compressed(payload: Uint8Array | string): Uint8Array | string {
    this.coding = null;
    // `.length` of bytes, not `.byteLength`: an inline load (core/bytes.ts).
    const size = payload.length;
    if (size < COMPRESS_MIN_BYTES || this.acceptEncoding.length === 0) return payload;
    this.coding = chooseEncoding(this.acceptEncoding);
    if (this.coding === 'br')
      return brotliCompressSync(payload, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_SIZE_HINT]: size },
      });
    if (this.coding === 'gzip') return gzipSync(payload, { level: 4 });
    return payload;
  }

  /** Status and header lines as `write` sends them for GET, with the body's length and no body. */
  #head(
    status: string,
    type: string,
    contentType: string,
    encoding: string | null,
    length: number,
    headers: HeaderBlock,
  ): void {
    const res = this.res;
    // This uWS build aborts the process if endWithoutBody runs without an abort handler.
    res.onAborted(() => {
      this.aborted = true;
    });
    const write = () => {
      // The lines `write` makes, kept apart: sharing one function with it measured slower
      // on the hot path (A/B, latest trailing: 6.71 against 7.0 µs of server CPU).
      const w = startHead(status, type);
      if (contentType === JSON_TYPE) w.bytes(VARY_LINE);
      if (encoding !== null) w.bytes(encoding === 'br' ? BR_LINE : GZIP_LINE);
      w.bytes(headers);
      this.extraHeaders?.writeHeaders(w);
      // Content-Length written here, not passed to endWithoutBody: given a length, this
      // uWS build closes the connection at the next request instead of keeping it alive.
      w.bytes(CONTENT_LENGTH_LINE).uint(length);
      res.writeStatus(w.view());
      res.endWithoutBody();
    };
    if (this.#deferred) res.cork(write);
    else write();
  }
}

/**
 * True when `reply` would send this JSON body exactly as it is: the client does
 * not prefer MessagePack (negotiation.ts, RFC 9110 §12.5.1) and the body is too
 * small to compress. The latest-row fast path (app.ts) answers only then, through
 * `writeJsonAsIs`.
 */
export function repliesAsIs(accept: string, bodyBytes: number): boolean {
  return bodyBytes < COMPRESS_MIN_BYTES && !wantsMsgpack(accept);
}

/** A 200 JSON answer written as `reply` writes one that goes as it is, with no Call. */
export function writeJsonAsIs(
  res: HttpResponse,
  req: HttpRequest,
  body: Uint8Array,
  headers: HeaderBlock,
  extra: HeaderSource | null,
  route: number,
  started: number,
): void {
  countReply(route, OK, started);
  // The path and client only for a sampled log line (the request is still valid: same callback).
  if (sampled()) replyHook?.('GET', req.getUrl(), OK, clientOf(res, req));
  write(res, OK, JSON_TYPE, JSON_TYPE, null, body, headers, extra, closingConnections);
}

function write(
  res: HttpResponse,
  status: string,
  type: string,
  contentType: string,
  encoding: string | null,
  payload: Uint8Array | string,
  headers: HeaderBlock,
  extra: HeaderSource | null,
  /** Close after this answer; uWS then sends `Connection: close` itself. */
  close: boolean,
): void {
  // The status line's text and every header line as one byte string, in one call into
  // uWS (see headers.ts), which writes "HTTP/1.1 ", these bytes, then CRLF.
  // A 200 JSON answer's status, type and Vary are one block: every copy has a fixed cost.
  const okJson = status === OK && type === JSON_TYPE;
  const w = okJson ? headerWriter.start(OK_JSON_VARY) : startHead(status, type);
  if (!okJson && contentType === JSON_TYPE) w.bytes(VARY_LINE);
  if (encoding !== null) w.bytes(encoding === 'br' ? BR_LINE : GZIP_LINE);
  if (headers.length > 0) w.bytes(headers);
  if (extra !== null) extra.writeHeaders(w);
  const head = w.view();
  res.writeStatus(head);
  const size = payload.length;
  if (close) res.end(payload, true);
  else if (size >= STREAM_MIN_BYTES) endOrWait(res, payload);
  else {
    unchecked += head.length + size;
    if (unchecked < checkAt) res.end(payload);
    else {
      nextCheck();
      endOrWait(res, payload);
    }
  }
}

/**
 * A bound on the answers a client that pipelines and never reads can leave in this
 * thread's memory, whatever its plan's burst. end() buffers whatever the
 * socket does not take, and this uWS build tells JavaScript nothing of a connection's
 * buffered bytes: only tryEnd says whether an answer went out. So once this thread
 * has written a stretch of 256–512 KiB of answers with end(), the next answer goes
 * out through tryEnd (endOrWait). On a connection already behind (the kernel's socket
 * buffers full, the rest held here) it cannot finish and stays pending, and uWS
 * closes the connection at its next request; one that stops sending is closed at
 * uWS's 10 s write timeout. The stretch's length is drawn at random, so the check
 * falls on a connection's answer in proportion to its share of the bytes, and a
 * connection that is behind is dropped after one stretch of its own answers on
 * average (more than k stretches with a chance of about e^-k), however its requests
 * are timed against other connections'. Per answer this costs an addition and a
 * comparison; per stretch, one tryEnd.
 */
const CHECK_MIN_BYTES = 256 * 1024;
let unchecked = 0;
let checkAt = CHECK_MIN_BYTES;

function nextCheck(): void {
  unchecked = 0;
  checkAt = CHECK_MIN_BYTES + Math.floor(Math.random() * CHECK_MIN_BYTES);
}

/**
 * Bodies at least this large go out through tryEnd. Not every body past uWS's 16 KB
 * cork buffer: a batch of 100 rows (~50 KB) often meets a socket that takes only part
 * of it at once, and finishing it from JavaScript (onWritable) cost 4 % of batch
 * throughput in an A/B, where end() drains it in C++. Below this, end(), and now and
 * then tryEnd to bound what a client that does not read leaves here (`checkAt`).
 */
const STREAM_MIN_BYTES = 64 * 1024;

/**
 * End with a large body without letting uWS buffer what the socket does not take:
 * the rest is written as the client reads (onWritable), from this body, held by
 * this closure. While it waits the response is pending, so a client that pipelines
 * more requests without reading has its connection closed by uWS at the next one,
 * instead of every answer piling up in memory (end() buffers without bound).
 */
function endOrWait(res: HttpResponse, payload: Uint8Array | string): void {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const total = body.length;
  // Offsets uWS reports count from the response's first body byte written.
  const start = res.getWriteOffset();
  const [, done] = res.tryEnd(body, total);
  if (done) return;
  // Not answered yet: uWS requires an abort handler, and after an abort no write.
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onWritable((offset) => {
    if (aborted) return true;
    const [ok] = res.tryEnd(body.subarray(offset - start), total);
    return ok;
  });
}

/** This thread's header writer started with a status text and its Content-Type line. */
function startHead(status: string, contentType: string): HeaderWriter {
  return headerWriter.start(statusBytes(status)).bytes(CONTENT_TYPE_LINE).bytes(typeBytes(contentType));
}

const JSON_TYPE = 'application/json';
const MSGPACK_TYPE = 'application/msgpack';
const OK = '200 OK';
const CONTENT_TYPE_LINE = ascii('\r\nContent-Type: ');
const CONTENT_LENGTH_LINE = ascii('\r\nContent-Length: ');
const VARY_LINE = headerBlock([['Vary', 'Accept, Accept-Encoding']]);
const OK_JSON_VARY = Uint8Array.from([...ascii(`${OK}\r\nContent-Type: ${JSON_TYPE}`), ...VARY_LINE]);
const BR_LINE = headerBlock([['Content-Encoding', 'br']]);
const GZIP_LINE = headerBlock([['Content-Encoding', 'gzip']]);

/** Content types and statuses are the server's own constants: each is encoded (and checked) once. */
const typeCache = new Map<string, Uint8Array>();
const statusCache = new Map<string, Uint8Array>();
function typeBytes(type: string): Uint8Array {
  return cachedAscii(typeCache, type, 'content type');
}
function statusBytes(status: string): Uint8Array {
  return cachedAscii(statusCache, status, 'status');
}
function cachedAscii(cache: Map<string, Uint8Array>, text: string, what: string): Uint8Array {
  let b = cache.get(text);
  if (b === undefined) {
    if (!/^[\x20-\x7e]+$/.test(text)) throw new Error(`${what} ${JSON.stringify(text)} cannot be sent`);
    b = ascii(text);
    cache.set(text, b);
  }
  return b;
}
