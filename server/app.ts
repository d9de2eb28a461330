/**
 * The routes of one uWS event loop (one worker thread). Every /v1 request goes
 * route → gate (auth, limits) → validation → lookup (C23); public routes skip the
 * gate. Rows come pre-serialized from the snapshot where they can (latest trailing,
 * default calendar, fund metadata) and from core's maths otherwise.
 */
import { parseDay } from '../core/dates.js';
import { trailingFigures } from '../core/returns.js';
import { trailingRowJson } from '../core/rows.js';
import { encodeCursor } from './cursor.js';
import type { Gate } from './gate.js';
import { readBody } from './http/body.js';
import { Call, type Header } from './http/call.js';
import { RowKind } from './snapshot/prepared.js';
import type { ServingSnapshot } from './snapshot/serving.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';
import { loadUws } from './uws.js';
import {
  type ValidationIssue,
  validateCalendarBatchBody,
  validateCalendarParams,
  validateFundParams,
  validateListQuery,
  validateTrailingBatchBody,
  validateTrailingParams,
  validationErrorBody,
} from './validation.js';

const JSON_TYPE = 'application/json';
const NO_DATA = '{"detail":"No data loaded"}';
const NOT_FOUND = '{"detail":"Not Found"}';
const METHOD_NOT_ALLOWED = '{"detail":"Method Not Allowed"}';
const TOO_LARGE = '{"detail":"Request body too large: the limit is 1 MiB"}';

/** A fixed public resource: bytes and type decided at startup or snapshot swap. */
export interface StaticResource {
  contentType: string;
  body: Buffer;
  headers?: Header[];
}

export interface AppContext {
  gate: Gate;
  /** The snapshot requests run on now (null: none loaded, C24). */
  snapshot(): ServingSnapshot | null;
  /** /healthz answer for now: status line and JSON body (C31). */
  health(): { status: number; body: string };
  /** Public resources by exact path (api-catalog, claim, openapi.json, docs, problem pages). */
  resource(path: string): StaticResource | undefined;
  /** Extra routes (MCP) registered by their own module. */
  extend?: (app: TemplatedApp) => void;
  /** Called once per finished /v1 request for sampled access logs. */
  onRequest?: (method: string, path: string, status: number) => void;
}

/** Known route patterns and the methods they answer, for 405's Allow header (C21). */
const ALLOW: Array<[string, string]> = [
  ['/healthz', 'GET, HEAD'],
  ['/.well-known/api-catalog', 'GET, HEAD'],
  ['/openapi.json', 'GET'],
  ['/docs', 'GET'],
  ['/v1/funds', 'GET'],
  ['/v1/funds/:code', 'GET'],
  ['/v1/funds/:code/trailing-returns', 'GET'],
  ['/v1/funds/:code/calendar-returns', 'GET'],
  ['/v1/trailing-returns/batch', 'POST'],
  ['/v1/calendar-returns/batch', 'POST'],
];

export function createApp(ctx: AppContext): TemplatedApp {
  const app = loadUws().App();

  app.get('/healthz', (res, req) => {
    const call = new Call(res, req, 'GET', '/healthz');
    const h = ctx.health();
    call.reply(statusLine(h.status), JSON_TYPE, h.body, [['Cache-Control', 'no-store']]);
  });
  app.head('/healthz', (res, req) => {
    const call = new Call(res, req, 'HEAD', '/healthz');
    const h = ctx.health();
    call.replyHead(statusLine(h.status), JSON_TYPE, Buffer.byteLength(h.body), [
      ['Cache-Control', 'no-store'],
    ]);
  });

  const serveResource = (res: HttpResponse, req: HttpRequest, head: boolean) => {
    const path = req.getUrl();
    const call = new Call(res, req, head ? 'HEAD' : 'GET', path);
    const r = ctx.resource(path);
    if (!r) {
      call.reply('404 Not Found', JSON_TYPE, NOT_FOUND);
      return;
    }
    if (head) call.replyHead('200 OK', r.contentType, r.body.byteLength, r.headers);
    else call.reply('200 OK', r.contentType, r.body, r.headers);
  };
  // Exact paths, since uWS ranks the 405 catch-all of an exact path above a wildcard GET.
  app.get('/.well-known/api-catalog', (res, req) => serveResource(res, req, false));
  app.get('/.well-known/*', (res, req) => serveResource(res, req, false));
  app.head('/.well-known/api-catalog', (res, req) => serveResource(res, req, true));
  app.get('/openapi.json', (res, req) => serveResource(res, req, false));
  app.get('/docs', (res, req) => serveResource(res, req, false));
  app.get('/docs/*', (res, req) => serveResource(res, req, false));
  app.get('/problems/*', (res, req) => serveResource(res, req, false));

  app.get('/v1/funds', (res, req) => {
    const call = new Call(res, req, 'GET', '/v1/funds');
    const query = req.getQuery() ?? '';
    if (!admit(ctx, call, req)) return;
    const snap = ctx.snapshot();
    if (!snap) return noData(call);
    listFunds(call, snap, query);
  });

  app.get('/v1/funds/:code', (res, req) => {
    const call = new Call(res, req, 'GET', req.getUrl());
    const code = pathParam(req.getParameter(0));
    const query = req.getQuery() ?? '';
    if (!admit(ctx, call, req)) return;
    const snap = ctx.snapshot();
    if (!snap) return noData(call);
    const v = validateFundParams(code ?? '\u0000', parseQuery(query));
    if (!v.ok) return invalid(call, v.issues);
    const i = snap.lookup.find(v.value.code);
    if (i < 0) return unknownFund(call, v.value.code);
    call.reply('200 OK', JSON_TYPE, snap.rows.row(RowKind.Fund, i), dataHeaders(snap));
  });

  app.get('/v1/funds/:code/trailing-returns', (res, req) => {
    const call = new Call(res, req, 'GET', req.getUrl());
    const code = pathParam(req.getParameter(0));
    const query = req.getQuery() ?? '';
    if (!admit(ctx, call, req)) return;
    const snap = ctx.snapshot();
    if (!snap) return noData(call);
    const v = validateTrailingParams(code ?? '\u0000', parseQuery(query));
    if (!v.ok) return invalid(call, v.issues);
    const i = snap.lookup.find(v.value.code);
    if (i < 0) return unknownFund(call, v.value.code);
    if (v.value.as_of === null) {
      call.reply('200 OK', JSON_TYPE, snap.rows.row(RowKind.Trailing, i), dataHeaders(snap));
      return;
    }
    const row = trailingAt(snap, i, v.value.as_of);
    if (row === null) return noRow(call, `Fund ${v.value.code} has no data on or before ${v.value.as_of}`);
    call.reply('200 OK', JSON_TYPE, row, dataHeaders(snap));
  });

  app.get('/v1/funds/:code/calendar-returns', (res, req) => {
    const call = new Call(res, req, 'GET', req.getUrl());
    const code = pathParam(req.getParameter(0));
    const query = req.getQuery() ?? '';
    if (!admit(ctx, call, req)) return;
    const snap = ctx.snapshot();
    if (!snap) return noData(call);
    const v = validateCalendarParams(code ?? '\u0000', parseQuery(query));
    if (!v.ok) return invalid(call, v.issues);
    const i = snap.lookup.find(v.value.code);
    if (i < 0) return unknownFund(call, v.value.code);
    if (v.value.year === null) {
      const row = snap.rows.row(RowKind.Calendar, i);
      if (row.byteLength === 0) return noRow(call, `Fund ${v.value.code} has no calendar-year returns`);
      call.reply('200 OK', JSON_TYPE, row, dataHeaders(snap));
      return;
    }
    const row = snap.lookup.calendarYearJson(i, v.value.year);
    if (row === null)
      return noRow(call, `Fund ${v.value.code} has no calendar-year return for ${v.value.year}`);
    call.reply('200 OK', JSON_TYPE, row, dataHeaders(snap));
  });

  app.post('/v1/trailing-returns/batch', (res, req) => {
    const call = new Call(res, req, 'POST', '/v1/trailing-returns/batch');
    const contentType = req.getHeader('content-type');
    const contentLength = req.getHeader('content-length');
    if (!admit(ctx, call, req)) return;
    readBody(
      call,
      contentLength,
      (body) => {
        const snap = ctx.snapshot();
        if (!snap) return noData(call);
        const v = validateTrailingBatchBody(body, contentType);
        if (!v.ok) return invalid(call, v.issues);
        const asOf = v.value.as_of ?? null;
        const parts = batchRows(v.value.codes, snap, (i) =>
          asOf === null ? snap.rows.row(RowKind.Trailing, i) : trailingAt(snap, i, asOf),
        );
        call.reply('200 OK', JSON_TYPE, joinRows(parts), dataHeaders(snap));
      },
      () => call.reply('413 Payload Too Large', JSON_TYPE, TOO_LARGE, [['Connection', 'close']]),
    );
  });

  app.post('/v1/calendar-returns/batch', (res, req) => {
    const call = new Call(res, req, 'POST', '/v1/calendar-returns/batch');
    const contentType = req.getHeader('content-type');
    const contentLength = req.getHeader('content-length');
    if (!admit(ctx, call, req)) return;
    readBody(
      call,
      contentLength,
      (body) => {
        const snap = ctx.snapshot();
        if (!snap) return noData(call);
        const v = validateCalendarBatchBody(body, contentType);
        if (!v.ok) return invalid(call, v.issues);
        const year = v.value.year ?? null;
        const parts = batchRows(v.value.codes, snap, (i) => {
          if (year === null) {
            const row = snap.rows.row(RowKind.Calendar, i);
            return row.byteLength === 0 ? null : row;
          }
          return snap.lookup.calendarYearJson(i, year);
        });
        call.reply('200 OK', JSON_TYPE, joinRows(parts), dataHeaders(snap));
      },
      () => call.reply('413 Payload Too Large', JSON_TYPE, TOO_LARGE, [['Connection', 'close']]),
    );
  });

  ctx.extend?.(app);

  for (const [pattern, allow] of ALLOW) {
    app.any(pattern, (res, req) => {
      const call = new Call(res, req, req.getMethod().toUpperCase(), req.getUrl());
      call.reply('405 Method Not Allowed', JSON_TYPE, METHOD_NOT_ALLOWED, [['Allow', allow]]);
    });
  }
  app.any('/*', (res, req) => {
    const call = new Call(res, req, req.getMethod().toUpperCase(), req.getUrl());
    call.reply('404 Not Found', JSON_TYPE, NOT_FOUND);
  });
  return app;
}

/** The gate step (C23). Returns false when it has answered (401/403/429). */
function admit(ctx: AppContext, call: Call, req: HttpRequest): boolean {
  const d = ctx.gate.admit(req.getHeader('authorization'), call.path);
  if (d.ok) {
    call.extraHeaders = d.headers as Header[] | null;
    return true;
  }
  call.reply(d.status, 'application/problem+json', d.body, d.headers);
  return false;
}

function statusLine(status: number): string {
  return status === 200 ? '200 OK' : status === 503 ? '503 Service Unavailable' : `${status}`;
}

/** uWS hands path parameters still percent-encoded; undecodable ones cannot be codes. */
function pathParam(raw: string): string | null {
  if (raw.indexOf('%') < 0) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** Query string to params, last value winning as in FastAPI for scalar parameters. */
export function parseQuery(query: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (query.length === 0) return out;
  for (const [k, v] of new URLSearchParams(query)) out[k] = v;
  return out;
}

function dataHeaders(snap: ServingSnapshot): Header[] {
  return snap.dataHeaders;
}

function noData(call: Call): void {
  call.reply('503 Service Unavailable', JSON_TYPE, NO_DATA, [['Retry-After', '30']]);
}

function invalid(call: Call, issues: ValidationIssue[]): void {
  call.reply('422 Unprocessable Entity', JSON_TYPE, JSON.stringify(validationErrorBody(issues)));
}

function unknownFund(call: Call, code: string): void {
  call.reply('404 Not Found', JSON_TYPE, JSON.stringify({ detail: `No fund with code ${code}` }));
}

function noRow(call: Call, sentence: string): void {
  call.reply('404 Not Found', JSON_TYPE, JSON.stringify({ detail: sentence }));
}

function trailingAt(snap: ServingSnapshot, i: number, asOf: string): string | null {
  const day = parseDay(asOf);
  if (day === null) return null;
  const f = trailingFigures(snap.lookup.series(i), day, snap.scratch);
  return f === null ? null : trailingRowJson(snap.lookup.cols.funds.code[i], f);
}

/** C16: rows in request order, a code asked twice once at its first place, misses left out. */
function batchRows(
  codes: readonly string[],
  snap: ServingSnapshot,
  row: (i: number) => Uint8Array | string | null,
): Array<Uint8Array | string> {
  const parts: Array<Uint8Array | string> = [];
  const seen = codes.length > 1 ? new Set<number>() : null;
  for (const code of codes) {
    const i = snap.lookup.find(code);
    if (i < 0) continue;
    if (seen) {
      if (seen.has(i)) continue;
      seen.add(i);
    }
    const r = row(i);
    if (r !== null) parts.push(r);
  }
  return parts;
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

function joinRows(parts: Array<Uint8Array | string>): Buffer {
  const bufs: Uint8Array[] = [OPEN];
  for (let k = 0; k < parts.length; k++) {
    if (k > 0) bufs.push(COMMA);
    const p = parts[k];
    bufs.push(typeof p === 'string' ? Buffer.from(p) : p);
  }
  bufs.push(CLOSE);
  return Buffer.concat(bufs);
}

function listFunds(call: Call, snap: ServingSnapshot, query: string): void {
  const v = validateListQuery(parseQuery(query));
  if (!v.ok) {
    invalid(call, v.issues);
    return;
  }
  const q = v.value;
  const page = snap.search.page({
    q: q.q ?? undefined,
    type: q.type ?? undefined,
    country: q.country ?? undefined,
    exchange: q.exchange ?? undefined,
    after: q.after ?? undefined,
    limit: q.limit,
  });
  const bufs: Uint8Array[] = [Buffer.from('{"data":[')];
  page.indices.forEach((i, k) => {
    if (k > 0) bufs.push(COMMA);
    bufs.push(snap.rows.row(RowKind.Fund, i));
  });
  const last = page.indices.length > 0 ? page.indices[page.indices.length - 1] : -1;
  const next =
    page.more && last >= 0 ? JSON.stringify(encodeCursor(snap.lookup.cols.funds.code[last])) : 'null';
  bufs.push(Buffer.from(`],"next_cursor":${next}}`));
  call.reply('200 OK', JSON_TYPE, Buffer.concat(bufs), dataHeaders(snap));
}
