/**
 * The routes of one uWS event loop (one worker thread). Every /v1 request goes
 * route → gate (auth, limits) → validation → lookup (C23); public routes skip the
 * gate. Rows come pre-serialized from the snapshot where they can (latest trailing,
 * default calendar, fund metadata) and from core's maths otherwise.
 */

import { type Day, parseDayAt } from '../core/dates.js';
import { allowOf, ROUTES, type RouteDecl } from '../schemas/routes.js';
import type { Answer } from './api/answers.js';
import * as answers from './api/answers.js';
import { type BodyAnswer, bindingOf, type GetAnswer, patternsOf } from './api/route-bindings.js';
import type { AppContext } from './app-context.js';
import { Call, repliesAsIs, writeJsonAsIs } from './http/call.js';
import {
  JSON_TYPE,
  METHOD_NOT_ALLOWED,
  NO_DATA,
  NO_DATA_HEADERS,
  NOT_FOUND,
  statusLine,
} from './http/fixed-answers.js';
import type { GateDecision } from './http/gate.js';
import { afterGate, gated, gatedBody } from './http/gate-step.js';
import { guardRoutes } from './http/guard.js';
import { headerBlock, NO_HEADERS, requestHeader } from './http/headers.js';
import { parseQuery } from './http/query.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './http/uws.js';
import { loadUws } from './http/uws.js';
import { mcpPost } from './mcp/http.js';
import { ROUTE_UNMATCHED, requestStarted } from './metrics/counters.js';
import { RowKind } from './snapshot/prepared.js';
import type { ServingSnapshot } from './snapshot/serving.js';

const NO_STORE = headerBlock([['Cache-Control', 'no-store']]);

// HEAD through the same reply as GET: the same negotiated type, coding, Vary and length.
const health = (ctx: AppContext, route: number) => (res: HttpResponse, req: HttpRequest, head: boolean) => {
  const call = new Call(res, req, head ? 'HEAD' : 'GET', '/healthz', route);
  const h = ctx.health();
  call.reply(statusLine(h.status), JSON_TYPE, h.body, NO_STORE);
};

const serveResource =
  (ctx: AppContext, route: number) => (res: HttpResponse, req: HttpRequest, head: boolean) => {
    const path = req.getUrl();
    // A public document (the OpenAPI document, the claim) has one representation, JSON:
    // the API's MessagePack negotiation is for data answers, and no document lists it.
    const call = new Call(res, req, head ? 'HEAD' : 'GET', path, route).jsonOnly();
    const r = ctx.resource(path);
    if (!r) call.reply(statusLine(404), JSON_TYPE, NOT_FOUND);
    else call.reply(r.status ?? '200 OK', r.contentType, r.body, r.headers);
  };

/**
 * A GET data route: gate, snapshot, then the transport-free answer. A route with
 * a prepared `latest` row first tries to answer it directly (directRow).
 */
const data = (ctx: AppContext, pattern: string, route: number, answer: GetAnswer, latest: RowKind | null) => {
  const hasCode = pattern.includes(':code');
  // uWS matches no parameter to an empty segment; those routes are registered as they are.
  const emptyCode = pattern.includes('//');
  const handle = (res: HttpResponse, req: HttpRequest, head: boolean) => {
    const started = requestStarted();
    const raw = hasCode ? req.getParameter(0) : null;
    const code = raw !== null ? pathParam(raw) : emptyCode ? '' : null;
    // `%2F` decodes to `/`: on the decoded path that is another, unknown route (as FastAPI
    // routes it). Only a decoded code can hold one: uWS splits the path at every `/`.
    if (code !== raw && code?.includes('/')) return notFoundRoute(res, req, head);
    const query = req.getQuery() ?? '';
    const d =
      !head && latest !== null && hasCode && code !== null
        ? directRow(ctx, res, req, code, latest, query, route, started)
        : null;
    if (d === ANSWERED) return;
    const call = new Call(res, req, head ? 'HEAD' : 'GET', req.getUrl(), route, started);
    const next = () => {
      const snap = ctx.snapshot();
      if (!snap) return noData(call);
      send(call, snap, answer(snap, code, parseQuery(query)));
    };
    if (d === null) gated(ctx.gate, call, req, next);
    else afterGate(call, d, next);
  };
  return handle;
};

/**
 * A POST batch route. The body must be subscribed to inside the route callback,
 * so it is read while an asynchronous gate decides; the answer waits for both,
 * and a refused request is answered by the gate whatever its body (C23).
 */
const batch =
  (ctx: AppContext, pattern: string, route: number, answer: BodyAnswer) =>
  (res: HttpResponse, req: HttpRequest) => {
    const call = new Call(res, req, 'POST', pattern, route);
    const contentType = req.getHeader(requestHeader.contentType);
    gatedBody(ctx.gate, call, req, (body) => {
      const snap = ctx.snapshot();
      if (!snap) return noData(call);
      send(call, snap, answer(snap, body, contentType));
    });
  };

function registerRoutes(app: TemplatedApp, ctx: AppContext): void {
  // Every route of the table (schemas/routes.ts), bound to its kind of handler
  // (server/api/route-bindings.ts). HEAD wherever GET is (RFC 9110 §9.3.2), answered by the same
  // checks, so it counts one request (C23), with GET's headers and no body: this uWS
  // build does not fall through from HEAD to GET. Resources are registered by exact
  // path too, since uWS ranks the 405 catch-all of an exact path above a wildcard GET.
  // A route's index in the table is its metrics label (metrics/counters.ts ROUTE_LABELS).
  for (const [index, route] of (ROUTES as readonly RouteDecl[]).entries()) {
    const binding = bindingOf(route);
    for (const pattern of patternsOf(route)) {
      let get: ((res: HttpResponse, req: HttpRequest, head: boolean) => void) | null = null;
      if (binding.kind === 'health') get = health(ctx, index);
      else if (binding.kind === 'resource') get = serveResource(ctx, index);
      else if (binding.kind === 'get') get = data(ctx, pattern, index, binding.answer, binding.latest);
      else if (binding.kind === 'post') app.post(pattern, batch(ctx, pattern, index, binding.answer));
      else app.post(pattern, (res, req) => mcpPost(ctx, res, req, index));
      if (get === null) continue;
      const answer = get;
      app.get(pattern, (res, req) => answer(res, req, false));
      app.head(pattern, (res, req) => answer(res, req, true));
    }
  }
}

function registerMethodNotAllowed(app: TemplatedApp): void {
  // C21: a known route asked with another method is a 405 naming the methods it takes.
  for (const [index, route] of (ROUTES as readonly RouteDecl[]).entries()) {
    const allow = headerBlock([['Allow', allowOf(route)]]);
    for (const pattern of patternsOf(route)) {
      app.any(pattern, (res, req) => {
        const call = new Call(res, req, req.getMethod().toUpperCase(), req.getUrl(), index);
        call.reply(statusLine(405), JSON_TYPE, METHOD_NOT_ALLOWED, allow);
      });
    }
  }
}

export function createApp(ctx: AppContext): TemplatedApp {
  const app = loadUws().App();
  guardRoutes(app);
  registerRoutes(app, ctx);
  registerMethodNotAllowed(app);
  ctx.dashboard?.register(app);
  app.any('/*', (res, req) => notFoundRoute(res, req, req.getMethod().toUpperCase() === 'HEAD'));
  return app;
}

/** C21: a path no route answers. */
function notFoundRoute(res: HttpResponse, req: HttpRequest, head: boolean): void {
  const call = new Call(
    res,
    req,
    head ? 'HEAD' : req.getMethod().toUpperCase(),
    req.getUrl(),
    ROUTE_UNMATCHED,
  );
  call.reply(statusLine(404), JSON_TYPE, NOT_FOUND);
}

/**
 * uWS hands path parameters still percent-encoded; they are decoded as the ASGI
 * servers under FastAPI decode a path (Python's `unquote`): escapes that are not
 * UTF-8 become U+FFFD, so `%FF%01` is a code with a control character (a 422, C15),
 * and a `%` not followed by two hex digits stays as written.
 */
function pathParam(raw: string): string {
  if (raw.indexOf('%') < 0) return raw;
  const bytes = Buffer.from(raw, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const hi = i + 2 < bytes.length ? hexValue(bytes[i + 1]) : -1;
    const lo = hi >= 0 ? hexValue(bytes[i + 2]) : -1;
    if (bytes[i] === 37 && lo >= 0) {
      out[n++] = hi * 16 + lo;
      i += 2;
    } else out[n++] = bytes[i];
  }
  return PATH_DECODER.decode(out.subarray(0, n));
}

const PATH_DECODER = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

const ANSWERED = Symbol('answered');

/** The one query a direct answer takes: `as_of=YYYY-MM-DD` on trailing returns. */
const AS_OF_QUERY = 'as_of=';
const AS_OF_QUERY_LENGTH = AS_OF_QUERY.length + 10;

/**
 * The commonest requests, answered straight from the route callback: a code the
 * snapshot has, asked as JSON, for its latest row (fund, latest trailing, C12
 * calendar: no query string) or for its trailing row on a date (exactly
 * `?as_of=YYYY-MM-DD`). Such a request passes validation by construction (a code in
 * the index is a valid code, C15; a date parseDay takes is a valid as_of; no other
 * parameter means the defaults), so once the gate admits it, the prepared row or the
 * row computed into bytes (answers.trailingRowAt) is written here with no Call,
 * validation or Answer object (bench/reports/http-findings.md), through the same
 * writer `Call.reply` uses (http/call.ts).
 *
 * Returns ANSWERED; null when the request is not one of these (the gate was not
 * asked); or the gate's decision when it did not answer here (a refusal, Redis
 * still deciding, or an admitted as_of with no row: a 404), which the general path
 * then carries on from, so a request is never counted twice.
 */
function directRow(
  ctx: AppContext,
  res: HttpResponse,
  req: HttpRequest,
  code: string,
  kind: RowKind,
  query: string,
  route: number,
  started: number,
): typeof ANSWERED | GateDecision | Promise<GateDecision> | null {
  let day: Day | null = null;
  if (query !== '') {
    if (kind !== RowKind.Trailing || query.length !== AS_OF_QUERY_LENGTH || !query.startsWith(AS_OF_QUERY))
      return null;
    day = parseDayAt(query, AS_OF_QUERY.length);
    if (day === null) return null;
  }
  const snap = ctx.snapshot();
  if (snap === null) return null;
  const i = snap.lookup.find(code);
  if (i < 0) return null;
  const prepared = day === null ? snap.rows.row(kind, i) : null;
  // `.length`, not `.byteLength`: the same for bytes, and an inline load (core/bytes.ts).
  // An empty calendar row is the general path's 404.
  if (prepared !== null && prepared.length === 0) return null;
  if (!repliesAsIs(req.getHeader(requestHeader.accept), prepared === null ? 0 : prepared.length)) return null;
  const d = ctx.gate.admit(req.getHeader(requestHeader.authorization));
  if (d instanceof Promise || !d.ok) return d;
  // An as_of row is computed only once admitted (C23: the gate comes first).
  const row = day === null ? prepared : answers.trailingRowAt(snap, i, day);
  if (row === null || !repliesAsIs('', row.length)) return d;
  writeJsonAsIs(res, req, row, snap.dataHeaders, d.headers, route, started);
  return ANSWERED;
}

function noData(call: Call): void {
  call.reply(statusLine(503), JSON_TYPE, NO_DATA, NO_DATA_HEADERS);
}

function send(call: Call, snap: ServingSnapshot, a: Answer): void {
  call.reply(statusLine(a.status), JSON_TYPE, a.body, a.status === 200 ? snap.dataHeaders : NO_HEADERS);
}
