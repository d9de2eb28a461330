/**
 * The dashboard's HTTP edge: a page request read whole from uWS (valid
 * only inside the route callback), its form body collected, the route's handler run
 * (asynchronous: it reads the store), and the page written once, corked, unless the
 * client went away (never touching `res` after abort, the uWS rule).
 *
 * Not the API's hot path: pages are rare and each reads the store, so clarity wins
 * over the byte-level care of server/app.ts.
 */
import { readBody, refusedFraming } from '../http/body.js';
import { Call, clientOf } from '../http/call.js';
import type { HttpRequest, HttpResponse } from '../http/uws.js';

type PageMethod = 'GET' | 'HEAD' | 'POST';

export interface PageRequest {
  readonly method: PageMethod;
  /** The path without its query. */
  readonly path: string;
  /** `:name` segments of the matched route. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The urlencoded form of a POST (empty otherwise). */
  readonly form: URLSearchParams;
  readonly cookies: ReadonlyMap<string, string>;
  readonly origin: string;
  readonly referer: string;
  readonly host: string;
  /**
   * The client's address (throttling per client, the audit log): the peer, or behind a
   * trusted proxy (serve --trust-proxy) the address the proxy forwards.
   */
  readonly ip: string;
}

export interface PageResponse {
  readonly status: number;
  readonly body: string;
  /** Content-Type; HTML when absent. */
  readonly type?: string;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
}

export type PageHandler = (req: PageRequest) => Promise<PageResponse>;

const HTML_TYPE = 'text/html; charset=utf-8';

/** Form bodies are small; a larger one is not a form of ours. */
const MAX_FORM_BYTES = 64 * 1024;

const REASONS: Record<number, string> = {
  200: 'OK',
  303: 'See Other',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function statusText(status: number): string {
  return `${status} ${REASONS[status] ?? ''}`.trim();
}

function parseCookies(header: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    // The first of two same-named cookies is the most specific path's (RFC 6265 §5.4).
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * Answer one page request on `res`: read it, run `handle`, write its page. `onError`
 * hears a handler's failure, which the client sees as a plain 500 page.
 */
export function servePage(
  res: HttpResponse,
  req: HttpRequest,
  params: Record<string, string>,
  handle: PageHandler,
  onError: (e: unknown) => void,
): void {
  const method = req.getMethod().toUpperCase() as PageMethod;
  const base = {
    method,
    path: req.getUrl(),
    params,
    query: new URLSearchParams(req.getQuery() ?? ''),
    cookies: parseCookies(req.getHeader('cookie')),
    origin: req.getHeader('origin'),
    referer: req.getHeader('referer'),
    host: req.getHeader('host'),
    ip: clientOf(res, req),
  };
  const call = new Call(res, req, method, base.path);
  const run = (form: URLSearchParams) => {
    handle({ ...base, form }).then(
      (page) => write(call, page),
      (e: unknown) => {
        onError(e);
        write(call, {
          status: 500,
          body: 'Something went wrong on our side. Try again in a moment.',
          type: TEXT,
        });
      },
    );
  };
  if (method !== 'POST') {
    call.watchAbort();
    run(new URLSearchParams());
    return;
  }
  // A form whose length two readers could take differently is refused like an API body.
  if (refusedFraming(call, req)) return;
  const contentType = req.getHeader('content-type').split(';')[0].trim().toLowerCase();
  const length = req.getHeader('content-length');
  readBody(
    call,
    length,
    (body) => {
      if (contentType !== 'application/x-www-form-urlencoded')
        return write(call, {
          status: 415,
          body: 'Forms are sent as application/x-www-form-urlencoded.',
          type: TEXT,
        });
      if (body.length > MAX_FORM_BYTES)
        return write(call, { status: 413, body: 'This form is larger than any form of ours.', type: TEXT });
      run(new URLSearchParams(body.toString('utf8')));
    },
    () => write(call, { status: 413, body: 'This form is larger than any form of ours.', type: TEXT }),
  );
}

const TEXT = 'text/plain; charset=utf-8';

/** Always corked: every page is written after the route callback returned. */
function write(call: Call, page: PageResponse): void {
  if (call.aborted) return;
  const res = call.res;
  res.cork(() => {
    res.writeStatus(statusText(page.status));
    res.writeHeader('Content-Type', page.type ?? HTML_TYPE);
    for (const [name, value] of page.headers ?? []) res.writeHeader(name, value);
    if (call.method === 'HEAD') res.endWithoutBody(Buffer.byteLength(page.body));
    else res.end(page.body);
  });
}
