/**
 * What each data endpoint answers, independent of transport: validation (C20),
 * lookup, and the row bytes or the error. REST routes and MCP tools both call
 * these, so an agent and an API client get the same figures and the same errors.
 */
import { parseDay } from '../core/dates.js';
import { trailingFigures } from '../core/returns.js';
import { trailingRowJson } from '../core/rows.js';
import { encodeCursor } from './cursor.js';
import { RowKind } from './snapshot/prepared.js';
import type { ServingSnapshot } from './snapshot/serving.js';
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

export type Params = Record<string, string | undefined>;

export type Answer =
  | { readonly status: 200; readonly body: Uint8Array | string }
  | { readonly status: 404; readonly body: string; readonly detail: string }
  | { readonly status: 422; readonly body: string; readonly issues: ValidationIssue[] };

function invalid(issues: ValidationIssue[]): Answer {
  return { status: 422, body: JSON.stringify(validationErrorBody(issues)), issues };
}

function notFound(detail: string): Answer {
  return { status: 404, body: JSON.stringify({ detail }), detail };
}

const unknownFund = (code: string) => notFound(`No fund with code ${code}`);

/** GET /v1/funds (C18, C19). */
export function listFunds(snap: ServingSnapshot, params: Params): Answer {
  const v = validateListQuery(params);
  if (!v.ok) return invalid(v.issues);
  const q = v.value;
  const page = snap.search.page({
    q: q.q ?? undefined,
    type: q.type ?? undefined,
    country: q.country ?? undefined,
    exchange: q.exchange ?? undefined,
    after: q.after ?? undefined,
    limit: q.limit,
  });
  const bufs: Uint8Array[] = [LIST_OPEN];
  for (let k = 0; k < page.indices.length; k++) {
    if (k > 0) bufs.push(COMMA);
    bufs.push(snap.rows.row(RowKind.Fund, page.indices[k]));
  }
  const last = page.indices.length > 0 ? page.indices[page.indices.length - 1] : -1;
  const next =
    page.more && last >= 0 ? JSON.stringify(encodeCursor(snap.lookup.cols.funds.code[last])) : 'null';
  bufs.push(Buffer.from(`],"next_cursor":${next}}`));
  return { status: 200, body: Buffer.concat(bufs) };
}

/** GET /v1/funds/{code}. `code` null: a path segment that does not even decode. */
export function getFund(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateFundParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const i = snap.lookup.find(v.value.code);
  if (i < 0) return unknownFund(v.value.code);
  return { status: 200, body: snap.rows.row(RowKind.Fund, i) };
}

/** GET /v1/funds/{code}/trailing-returns (C3). */
export function getTrailing(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateTrailingParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const i = snap.lookup.find(v.value.code);
  if (i < 0) return unknownFund(v.value.code);
  if (v.value.as_of === null) return { status: 200, body: snap.rows.row(RowKind.Trailing, i) };
  const row = trailingAt(snap, i, v.value.as_of);
  if (row === null) return notFound(`Fund ${v.value.code} has no data on or before ${v.value.as_of}`);
  return { status: 200, body: row };
}

/** GET /v1/funds/{code}/calendar-returns (C12, C13). */
export function getCalendar(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateCalendarParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const i = snap.lookup.find(v.value.code);
  if (i < 0) return unknownFund(v.value.code);
  if (v.value.year === null) {
    const row = snap.rows.row(RowKind.Calendar, i);
    if (row.byteLength === 0) return notFound(`Fund ${v.value.code} has no calendar-year returns`);
    return { status: 200, body: row };
  }
  const row = snap.lookup.calendarYearJson(i, v.value.year);
  if (row === null) return notFound(`Fund ${v.value.code} has no calendar-year return for ${v.value.year}`);
  return { status: 200, body: row };
}

/** POST /v1/trailing-returns/batch: a JSON body (bytes or text) and its content type. */
export function trailingBatch(
  snap: ServingSnapshot,
  body: Uint8Array | string,
  contentType: string | undefined,
): Answer {
  const v = validateTrailingBatchBody(body, contentType);
  if (!v.ok) return invalid(v.issues);
  const asOf = v.value.as_of ?? null;
  const parts = batchRows(v.value.codes, snap, (i) =>
    asOf === null ? snap.rows.row(RowKind.Trailing, i) : trailingAt(snap, i, asOf),
  );
  return { status: 200, body: joinRows(parts) };
}

/** POST /v1/calendar-returns/batch (C14). */
export function calendarBatch(
  snap: ServingSnapshot,
  body: Uint8Array | string,
  contentType: string | undefined,
): Answer {
  const v = validateCalendarBatchBody(body, contentType);
  if (!v.ok) return invalid(v.issues);
  const year = v.value.year ?? null;
  const parts = batchRows(v.value.codes, snap, (i) => {
    if (year === null) {
      const row = snap.rows.row(RowKind.Calendar, i);
      return row.byteLength === 0 ? null : row;
    }
    return snap.lookup.calendarYearJson(i, year);
  });
  return { status: 200, body: joinRows(parts) };
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

const LIST_OPEN = Buffer.from('{"data":[');
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
