/**
 * What each data endpoint answers, independent of transport: validation (C20),
 * lookup, and the row bytes or the error. REST routes and MCP tools both call
 * these, so an agent and an API client get the same figures and the same errors.
 */
import { unknownCodeDetail } from '../../core/codes.js';
import { type Day, parseDay } from '../../core/dates.js';
import { trailingFigures } from '../../core/returns.js';
import { ByteSink, writeTrailingRow } from '../../core/rows.js';
import { BATCH_MAX_CODES } from '../../schemas/common.js';
import { RowKind } from '../snapshot/prepared.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { codeRanges, scanPlainCodes } from './batch-scan.js';
import { cursorLength, writeCursor } from './cursor.js';
import {
  CALENDAR_FIELDS,
  FUND_FIELDS,
  fieldsOf,
  pickRow,
  pickRows,
  type RowFields,
  TRAILING_FIELDS,
} from './fields.js';
import {
  isJsonContentType,
  type ValidationIssue,
  validateCalendarBatchBody,
  validateCalendarParams,
  validateFundParams,
  validateListQuery,
  validateTrailingBatchBody,
  validateTrailingParams,
  validationErrorJson,
} from './validation.js';

export type Params = Record<string, string | undefined>;

export type Answer =
  | { readonly status: 200; readonly body: Uint8Array | string }
  | { readonly status: 404; readonly body: string; readonly detail: string }
  | { readonly status: 422; readonly body: string; readonly issues: ValidationIssue[] };

function invalid(issues: ValidationIssue[]): Answer {
  return { status: 422, body: validationErrorJson(issues), issues };
}

function notFound(detail: string): Answer {
  return { status: 404, body: JSON.stringify({ detail }), detail };
}

/** C21's sentence for an unknown code (core/codes.ts). */
function unknownFund(snap: ServingSnapshot, code: string): Answer {
  return notFound(unknownCodeDetail(code, (c) => snap.lookup.find(c) >= 0));
}

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
  const ids = page.indices;
  const last = ids.length > 0 ? ids[ids.length - 1] : -1;
  const tail = page.more && last >= 0 ? listTail(snap.lookup.cols.funds.code[last]) : LIST_END;
  return { status: 200, body: snap.rows.join(RowKind.Fund, ids, ids.length, LIST_OPEN, tail) };
}

const LIST_NEXT = Buffer.from('],"next_cursor":"');
/** `],"next_cursor":"<cursor>"}` of this thread's page being answered (the cursor is ASCII). */
let tailBytes = new Uint8Array(256);

function listTail(lastCode: string): Uint8Array {
  const need = LIST_NEXT.length + cursorLength(lastCode) + 2;
  if (tailBytes.length < need) tailBytes = new Uint8Array(need);
  const b = tailBytes;
  b.set(LIST_NEXT);
  let at = writeCursor(b, LIST_NEXT.length, lastCode);
  b[at++] = 0x22;
  b[at++] = 0x7d;
  return b.subarray(0, at);
}

/**
 * An answer reduced to the `fields` asked for (C51): a bad name is a 422 beside the
 * request's other issues; a 404 stays a 404.
 */
function picked(a: Answer, kind: RowFields, raw: string): Answer {
  const issues: ValidationIssue[] = a.status === 422 ? [...a.issues] : [];
  const fields = fieldsOf(kind, raw, ['query', 'fields'], issues);
  if (issues.length > 0) return invalid(issues);
  if (a.status !== 200 || fields === null) return a;
  return { status: 200, body: pickRow(a.body, kind, fields) };
}

function pickedBatch(a: Answer, kind: RowFields, raw: unknown): Answer {
  const issues: ValidationIssue[] = [];
  const fields = fieldsOf(kind, raw, ['body', 'fields'], issues);
  if (issues.length > 0) return invalid(issues);
  if (a.status !== 200 || fields === null) return a;
  return { status: 200, body: pickRows(a.body, kind, fields) };
}

/** GET /v1/funds/{code}. `code` null: a path segment that does not even decode. */
export function getFund(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  return params.fields === undefined
    ? getFundAll(snap, code, params)
    : picked(getFundAll(snap, code, params), FUND_FIELDS, params.fields);
}

function getFundAll(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateFundParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const i = snap.lookup.find(v.value.code);
  if (i < 0) return unknownFund(snap, v.value.code);
  return { status: 200, body: snap.rows.row(RowKind.Fund, i) };
}

/** GET /v1/funds/{code}/trailing-returns (C3). */
export function getTrailing(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  return params.fields === undefined
    ? getTrailingAll(snap, code, params)
    : picked(getTrailingAll(snap, code, params), TRAILING_FIELDS, params.fields);
}

function getTrailingAll(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateTrailingParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const i = snap.lookup.find(v.value.code);
  if (i < 0) return unknownFund(snap, v.value.code);
  if (v.value.as_of === null) return { status: 200, body: snap.rows.row(RowKind.Trailing, i) };
  const day = parseDay(v.value.as_of);
  const row = day === null ? null : trailingRowAt(snap, i, day);
  if (row === null) return notFound(`Fund ${v.value.code} has no data on or before ${v.value.as_of}`);
  return { status: 200, body: row };
}

/** GET /v1/funds/{code}/calendar-returns (C12, C13). */
export function getCalendar(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  return params.fields === undefined
    ? getCalendarAll(snap, code, params)
    : picked(getCalendarAll(snap, code, params), CALENDAR_FIELDS, params.fields);
}

function getCalendarAll(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateCalendarParams(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const i = snap.lookup.find(v.value.code);
  if (i < 0) return unknownFund(snap, v.value.code);
  if (v.value.year === null) {
    const row = snap.rows.row(RowKind.Calendar, i);
    if (row.length === 0) return notFound(`Fund ${v.value.code} has no calendar-year returns`);
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
  const plain = plainBatch(snap, RowKind.Trailing, body, contentType);
  if (plain !== null) return plain;
  const v = validateTrailingBatchBody(body, contentType);
  if (!v.ok) return invalid(v.issues);
  if (v.value.fields !== undefined) {
    const { fields, ...rest } = v.value;
    return pickedBatch(trailingBatch(snap, JSON.stringify(rest), undefined), TRAILING_FIELDS, fields);
  }
  const asOf = v.value.as_of ?? null;
  const funds = batchFunds(v.value.codes, snap);
  if (asOf === null) return { status: 200, body: joinPrepared(snap, RowKind.Trailing, funds) };
  const day = parseDay(asOf);
  onDemand.at = 0;
  onDemand.byte(0x5b);
  if (day !== null) {
    let rows = 0;
    for (const i of funds) {
      // A fund with no row on that date is left out (C16): its comma is taken back.
      const before = onDemand.at;
      if (rows > 0) onDemand.byte(0x2c);
      if (appendTrailingAt(snap, i, day)) rows++;
      else onDemand.at = before;
    }
  }
  onDemand.byte(0x5d);
  return { status: 200, body: onDemand.view() };
}

/** POST /v1/calendar-returns/batch (C14). */
export function calendarBatch(
  snap: ServingSnapshot,
  body: Uint8Array | string,
  contentType: string | undefined,
): Answer {
  const plain = plainBatch(snap, RowKind.Calendar, body, contentType);
  if (plain !== null) return plain;
  const v = validateCalendarBatchBody(body, contentType);
  if (!v.ok) return invalid(v.issues);
  if (v.value.fields !== undefined) {
    const { fields, ...rest } = v.value;
    return pickedBatch(calendarBatch(snap, JSON.stringify(rest), undefined), CALENDAR_FIELDS, fields);
  }
  const year = v.value.year ?? null;
  const funds = batchFunds(v.value.codes, snap);
  // Funds without any calendar row have an empty prepared row: left out like misses.
  if (year === null) return { status: 200, body: joinPrepared(snap, RowKind.Calendar, funds) };
  const rows: string[] = [];
  for (const i of funds) {
    const row = snap.lookup.calendarYearJson(i, year);
    if (row !== null) rows.push(row);
  }
  return { status: 200, body: `[${rows.join(',')}]` };
}

/** On-demand rows of this thread, written as bytes (one request at a time per thread). */
const onDemand = new ByteSink();

/**
 * Fund i's trailing row anchored at `day` (C3), or null when the fund has no
 * observation on or before it: a view valid until this thread's next such row
 * (the response write copies it).
 */
export function trailingRowAt(snap: ServingSnapshot, i: number, day: Day): Uint8Array | null {
  onDemand.at = 0;
  return appendTrailingAt(snap, i, day) ? onDemand.view() : null;
}

function appendTrailingAt(snap: ServingSnapshot, i: number, day: Day): boolean {
  const f = trailingFigures(snap.lookup.series(i), day, snap.scratch);
  if (f === null) return false;
  writeTrailingRow(onDemand, snap.rows.row(RowKind.Code, i), f);
  return true;
}

/** Fund indices of the plain batch being answered (C16 order), reused per thread. */
const plainFunds = new Int32Array(BATCH_MAX_CODES);

/**
 * A plain `{"codes":[...]}` body answered from its bytes (batch-scan.ts) with the
 * default rows (latest trailing, C12 calendar); null for any other body, which
 * the general path answers.
 */
function plainBatch(
  snap: ServingSnapshot,
  kind: RowKind,
  body: Uint8Array | string,
  contentType: string | undefined,
): Answer | null {
  if (typeof body === 'string' || !isJsonContentType(contentType)) return null;
  const n = scanPlainCodes(body);
  if (n < 0) return null;
  // C16 as in batchFunds: request order, first place of a repeat, misses left out.
  const stamp = snap.nextStamp();
  const marks = snap.marks;
  let count = 0;
  for (let k = 0; k < n; k++) {
    const i = snap.lookup.findBytes(body, codeRanges[2 * k], codeRanges[2 * k + 1]);
    if (i < 0 || marks[i] === stamp) continue;
    marks[i] = stamp;
    plainFunds[count++] = i;
  }
  return { status: 200, body: joinPrepared(snap, kind, plainFunds.subarray(0, count)) };
}

/**
 * C16: fund indices in request order, a code asked twice once at its first place,
 * misses left out. Duplicates are found with a per-snapshot stamp array rather
 * than a Set per request.
 */
function batchFunds(codes: readonly string[], snap: ServingSnapshot): number[] {
  const out: number[] = [];
  const stamp = snap.nextStamp();
  const marks = snap.marks;
  for (let k = 0; k < codes.length; k++) {
    const i = snap.lookup.find(codes[k]);
    if (i < 0 || marks[i] === stamp) continue;
    marks[i] = stamp;
    out.push(i);
  }
  return out;
}

const LIST_OPEN = Buffer.from('{"data":[');
const LIST_END = Buffer.from('],"next_cursor":null}');

/** A JSON array of prepared rows (empty rows skipped), joined in the thread's join area. */
function joinPrepared(snap: ServingSnapshot, kind: RowKind, funds: ArrayLike<number>): Uint8Array {
  return snap.rows.join(kind, funds, funds.length);
}
