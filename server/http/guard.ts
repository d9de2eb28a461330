/**
 * The last line of defence: an exception escaping a handler becomes a 500 for that
 * request (C21's `{"detail": …}` shape) and a log line, never a crash.
 *
 * uWS.js cannot carry a JavaScript exception out of its callbacks (the process
 * aborts), and a rejected continuation ends the worker thread; either would drop
 * every connection of the server for one bad request. So every route handler is run
 * through `guardRoutes`, and every later callback (a body piece, a gate or Redis
 * decision) through `guard`.
 */
import { countInternalError } from '../metrics/counters.js';
import { INTERNAL_ERROR, JSON_TYPE, statusLine } from './fixed-answers.js';
import { ascii } from './headers.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

const CONTENT_TYPE = ascii('Content-Type');
const JSON_BYTES = ascii(JSON_TYPE);

/** At most this many failures are logged per second; the rest are counted in the next line. */
const LOGS_PER_SECOND = 10;

type Reporter = (error: unknown, suppressed: number) => void;

let reporter: Reporter = () => {};
let windowStart = 0;
let loggedInWindow = 0;
let suppressed = 0;

/** Where failures go (the worker's logger); `suppressed` counts failures not logged since the last line. */
export function onInternalError(report: Reporter): void {
  reporter = report;
}

/** Log a failure (rate-limited) that is answered elsewhere. */
export function reportInternalError(error: unknown): void {
  const now = Date.now();
  if (now - windowStart >= 1000) {
    windowStart = now;
    loggedInWindow = 0;
  }
  if (loggedInWindow >= LOGS_PER_SECOND) {
    suppressed++;
    return;
  }
  loggedInWindow++;
  const n = suppressed;
  suppressed = 0;
  try {
    reporter(error, n);
  } catch {
    // A failing logger must not turn a 500 into a crash.
  }
}

/**
 * Answer 500 unless the response is gone: uWS throws on a response that was aborted
 * or already ended, and then nothing more may be written.
 */
function internalError(res: HttpResponse, error: unknown): void {
  reportInternalError(error);
  countInternalError();
  try {
    res.cork(() => {
      res.writeStatus(statusLine(500));
      res.writeHeader(CONTENT_TYPE, JSON_BYTES);
      res.end(INTERNAL_ERROR);
    });
  } catch {
    // Aborted or already answered.
  }
}

/** Run `f`; an exception answers 500 on `res`. */
export function guard(res: HttpResponse, f: () => void): void {
  try {
    f();
  } catch (e) {
    internalError(res, e);
  }
}

const ROUTE_METHODS = [
  'get',
  'post',
  'put',
  'del',
  'patch',
  'options',
  'head',
  'connect',
  'trace',
  'any',
] as const;

type Handler = (res: HttpResponse, req: HttpRequest) => void | Promise<void>;

/** Make every handler registered on `app` from now on run guarded. */
export function guardRoutes(app: TemplatedApp): void {
  for (const method of ROUTE_METHODS) {
    // The binding's methods share this shape; its typings declare each one apart.
    const methods = app as unknown as Record<string, (pattern: string, handler: Handler) => TemplatedApp>;
    const register = methods[method].bind(app);
    methods[method] = (pattern, handler) =>
      register(pattern, (res, req) => {
        try {
          const r = handler(res, req);
          if (r instanceof Promise) r.catch((e: unknown) => internalError(res, e));
        } catch (e) {
          internalError(res, e);
        }
      });
  }
}
