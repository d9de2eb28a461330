/**
 * One request as the handlers see it: what was read from uWS's request object
 * (valid only synchronously inside the route callback) plus the abort flag. After
 * an abort nothing may touch `res` again (uWS rule), so every write goes through
 * `reply`, which checks it.
 */
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import { pack } from 'msgpackr';
import type { HttpRequest, HttpResponse } from '../uws.js';

/** Bodies at least this large are compressed when the client accepts it. */
const COMPRESS_MIN_BYTES = 8 * 1024;

export type Header = readonly [string, string];

export class Call {
  aborted = false;
  /** Headers every response to this request carries (rate-limit fields, C29). */
  extraHeaders: Header[] | null = null;
  readonly accept: string;
  readonly acceptEncoding: string;

  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    readonly method: string,
    readonly path: string,
  ) {
    this.accept = req.getHeader('accept');
    this.acceptEncoding = req.getHeader('accept-encoding');
  }

  /** Attach the abort handler; needed whenever the response is not written synchronously. */
  watchAbort(): this {
    this.res.onAborted(() => {
      this.aborted = true;
    });
    return this;
  }

  wantsMsgpack(): boolean {
    return this.accept.length > 0 && this.accept.includes('application/msgpack');
  }

  /**
   * Write a whole response. JSON bodies turn into MessagePack when the client asked
   * for it, and large bodies are compressed when the client accepts br or gzip.
   */
  reply(status: string, contentType: string, body: Uint8Array | string, headers?: readonly Header[]): void {
    if (this.aborted) return;
    let type = contentType;
    let payload: Uint8Array | string = body;
    let encoding: string | null = null;
    if (type === 'application/json' && this.wantsMsgpack()) {
      type = 'application/msgpack';
      payload = pack(
        JSON.parse(
          typeof body === 'string'
            ? body
            : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'),
        ),
      );
    }
    const size = typeof payload === 'string' ? payload.length : payload.byteLength;
    if (size >= COMPRESS_MIN_BYTES && this.acceptEncoding.length > 0) {
      if (/\bbr\b/.test(this.acceptEncoding)) {
        payload = brotliCompressSync(payload, {
          params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_SIZE_HINT]: size },
        });
        encoding = 'br';
      } else if (/\bgzip\b/.test(this.acceptEncoding)) {
        payload = gzipSync(payload, { level: 4 });
        encoding = 'gzip';
      }
    }
    const res = this.res;
    res.cork(() => {
      res.writeStatus(status);
      res.writeHeader('Content-Type', type);
      if (encoding !== null) res.writeHeader('Content-Encoding', encoding);
      if (contentType === 'application/json') res.writeHeader('Vary', 'Accept, Accept-Encoding');
      if (headers) for (const [k, v] of headers) res.writeHeader(k, v);
      if (this.extraHeaders) for (const [k, v] of this.extraHeaders) res.writeHeader(k, v);
      res.end(payload);
    });
  }

  /** A HEAD answer: GET's headers and length, no body. */
  replyHead(status: string, contentType: string, length: number, headers?: readonly Header[]): void {
    if (this.aborted) return;
    const res = this.res;
    // This uWS build aborts the process if endWithoutBody runs without an abort handler.
    res.onAborted(() => {
      this.aborted = true;
    });
    res.cork(() => {
      res.writeStatus(status);
      res.writeHeader('Content-Type', contentType);
      if (headers) for (const [k, v] of headers) res.writeHeader(k, v);
      res.endWithoutBody(length);
    });
  }
}
