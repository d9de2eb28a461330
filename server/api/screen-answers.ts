/**
 * The screen, compare and growth answers (C50–C56), transport-free as
 * server/api/answers.ts: the REST routes and the MCP tools call these.
 */
import { unknownCodeDetail } from '../../core/codes.js';
import { formatDay, parseDay } from '../../core/dates.js';
import { ByteSink, MARKET } from '../../core/rows.js';
import { GROWTH_MAX_POINTS, SCREEN_LIMIT_MAX } from '../../schemas/screen.js';
import { valueError } from '../pydantic/messages.js';
import { growthPoints, growthValue } from '../screen/growth.js';
import { type RowFigures, rowFigures } from '../screen/rows.js';
import { type RangeFilter, screenPage } from '../screen/walk.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import type { Answer, Params } from './answers.js';
import { encodeScreenCursor } from './cursor.js';
import { validateCompareQuery, validateGrowthQuery, validateScreenQuery } from './screen-params.js';
import { type ValidationIssue, validationErrorJson } from './validation.js';

function invalid(issues: ValidationIssue[]): Answer {
  return { status: 422, body: validationErrorJson(issues), issues };
}

function notFound(detail: string): Answer {
  return { status: 404, body: JSON.stringify({ detail }), detail };
}

/** This thread's answer bytes (one request at a time per thread). */
const sink = new ByteSink();
const pageFunds = new Int32Array(SCREEN_LIMIT_MAX + 1);
const utf8 = new TextEncoder();
const PAGE_OPEN = utf8.encode('{"data":[');
const PAGE_NEXT = utf8.encode('],"next_cursor":');

function put(bytes: Uint8Array): void {
  sink.room(bytes.length).set(bytes, sink.at);
  sink.at += bytes.length;
}

function writeRows(
  snap: ServingSnapshot,
  funds: ArrayLike<number>,
  count: number,
  figures: RowFigures,
): void {
  for (let k = 0; k < count; k++) {
    if (k > 0) sink.byte(0x2c);
    snap.figureRows.write(sink, funds[k], figures);
  }
}

/** GET /v1/screen (C50–C52). */
export function screen(snap: ServingSnapshot, params: Params): Answer {
  const cols = snap.screen;
  const v = validateScreenQuery(cols, params);
  if (!v.ok) return invalid(v.issues);
  const q = v.value;
  let marks: Int32Array | null = null;
  let stamp = 0;
  const { q: text, type, country, exchange } = q.meta;
  if (text !== null || type !== null || country !== null || exchange !== null) {
    // The metadata filters are /v1/funds' index (C19): its matches, marked once.
    const all = snap.search.page({
      q: text ?? undefined,
      type: type ?? undefined,
      country: country ?? undefined,
      exchange: exchange ?? undefined,
      limit: Math.max(1, snap.funds),
    });
    stamp = snap.nextStamp();
    marks = snap.marks;
    for (const i of all.indices) marks[i] = stamp;
  }
  const filters: RangeFilter[] = q.filters.map((f) => ({
    keys: cols.column(f.name).keys,
    min: f.min,
    max: f.max,
  }));
  const sort = q.sort === null ? null : cols.column(q.sort);
  const after = q.after === null ? null : { key: q.after.key, code: q.after.code };
  const n = screenPage(
    {
      sort,
      desc: q.desc,
      filters,
      marks,
      stamp,
      isInactive: q.inactive === null ? null : snap.lookup.cols.funds.isInactive,
      wantInactive: q.inactive ? 1 : 0,
      after,
      limit: q.limit,
    },
    snap.lookup.cols.funds.code,
    pageFunds,
  );
  const rows = Math.min(n, q.limit);
  sink.at = 0;
  put(PAGE_OPEN);
  writeRows(
    snap,
    pageFunds,
    rows,
    rowFigures(q.fields, (name) => cols.values(name)),
  );
  put(PAGE_NEXT);
  if (n > q.limit) {
    const last = pageFunds[rows - 1];
    const cursor = encodeScreenCursor({
      sort: q.sort === null ? '' : `${q.desc ? '-' : ''}${q.sort}`,
      key: sort === null ? Number.NaN : sort.keys[last],
      code: snap.lookup.cols.funds.code[last],
    });
    put(utf8.encode(`"${cursor}"}`));
  } else put(utf8.encode('null}'));
  return { status: 200, body: sink.view() };
}

/** GET /v1/compare (C53): the rows of up to 20 codes, in the order asked. */
export function compare(snap: ServingSnapshot, params: Params): Answer {
  const cols = snap.screen;
  const v = validateCompareQuery(cols, params);
  if (!v.ok) return invalid(v.issues);
  const funds: number[] = [];
  const stamp = snap.nextStamp();
  for (const code of v.value.codes) {
    const i = snap.lookup.find(code);
    if (i < 0 || snap.marks[i] === stamp) continue;
    snap.marks[i] = stamp;
    funds.push(i);
  }
  sink.at = 0;
  sink.byte(0x5b);
  writeRows(
    snap,
    funds,
    funds.length,
    rowFigures(v.value.fields, (name) => cols.values(name)),
  );
  sink.byte(0x5d);
  return { status: 200, body: sink.view() };
}

/** GET /v1/funds/{code}/growth (C55). */
export function growth(snap: ServingSnapshot, code: string | null, params: Params): Answer {
  const v = validateGrowthQuery(code ?? '\u0000', params);
  if (!v.ok) return invalid(v.issues);
  const q = v.value;
  const i = snap.lookup.find(q.code);
  if (i < 0) return notFound(unknownCodeDetail(q.code, (c) => snap.lookup.find(c) >= 0));
  const s = snap.lookup.series(i);
  const at = growthPoints(
    s,
    q.from === null ? null : parseDay(q.from),
    q.to === null ? null : parseDay(q.to),
    q.interval,
  );
  if (at === null) {
    const range = `${q.from === null ? '' : ` on or after ${q.from}`}${q.to === null ? '' : ` on or before ${q.to}`}`;
    return notFound(`Fund ${q.code} has no data${range}`);
  }
  if (at.length > GROWTH_MAX_POINTS) {
    return invalid([
      valueError(
        ['query', 'interval'],
        q.interval,
        `${at.length} ${q.interval} points from ${formatDay(s.date[at[0]])} to ${formatDay(s.date[at[at.length - 1]])} ` +
          `is more than the ${GROWTH_MAX_POINTS} one answer holds; ask a longer interval or a shorter range`,
      ),
    ]);
  }
  const start = at[0];
  const points = at.map((j) => `{"date":"${formatDay(s.date[j])}","value":"${growthValue(s, start, j)}"}`);
  const body =
    `{"code":${JSON.stringify(q.code)},"market":"${MARKET}","interval":"${q.interval}",` +
    `"start_date":"${formatDay(s.date[start])}","end_date":"${formatDay(s.date[at[at.length - 1]])}",` +
    `"points":[${points.join(',')}]}`;
  return { status: 200, body };
}
