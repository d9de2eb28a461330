/**
 * Screen, compare and growth answers (C50–C55) on synthetic snapshots, each checked
 * against an independent reading: the served trailing rows, the series itself.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCodes } from '../../core/codes.js';
import { formatDay } from '../../core/dates.js';
import {
  type FigureRow,
  FigureRowListSchema,
  type Growth,
  GrowthSchema,
  type ScreenPage,
  ScreenPageSchema,
  type TrailingReturns,
} from '../../schemas/index.js';
import { syntheticServing } from '../../test/serving-snapshot.js';
import { ajv } from '../api/ajv.js';
import type { Answer } from '../api/answers.js';
import { compare, growth, screen } from '../api/screen-answers.js';
import { growthSvgResource } from '../resources.js';
import { RowKind } from '../snapshot/prepared.js';
import type { ServingSnapshot } from '../snapshot/serving.js';

const dirs: string[] = [];
let snap: ServingSnapshot;
let codes: string[];

beforeAll(async () => {
  const s = await syntheticServing(120);
  dirs.push(s.dir);
  ({ snap, codes } = s);
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const text = (a: Answer) => (typeof a.body === 'string' ? a.body : Buffer.from(a.body).toString('utf8'));
const json = <T>(a: Answer) => {
  expect(a.status, text(a)).toBe(200);
  return JSON.parse(text(a)) as T;
};
const issues = (a: Answer) => (a.status === 422 ? a.issues : []);
const valid = (schema: object, v: unknown) => {
  const check = ajv.compile(schema);
  expect(check(v), JSON.stringify(check.errors)).toBe(true);
};

/** Every fund's served trailing row: what the screen must agree with. */
function served(s: ServingSnapshot): TrailingReturns[] {
  const out: TrailingReturns[] = [];
  for (let i = 0; i < s.funds; i++)
    out.push(JSON.parse(Buffer.from(s.rows.row(RowKind.Trailing, i)).toString('utf8')) as TrailingReturns);
  return out;
}

/** All pages of a screen, followed by cursor. */
function allPages(s: ServingSnapshot, params: Record<string, string>): FigureRow[] {
  const rows: FigureRow[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const page: ScreenPage = json<ScreenPage>(screen(s, cursor === null ? params : { ...params, cursor }));
    valid(ScreenPageSchema, page);
    rows.push(...page.data);
    cursor = page.next_cursor;
    if (cursor === null) return rows;
  }
  throw new Error('no last page');
}

/** The expected order: by value (desc or asc), nulls last, ties by code. */
function expectedOrder(entries: Array<{ code: string; v: number | null }>, desc: boolean): string[] {
  return [...entries]
    .sort((a, b) => {
      if (a.v === null || b.v === null)
        return a.v === null ? (b.v === null ? compareCodes(a.code, b.code) : 1) : -1;
      return (desc ? b.v - a.v : a.v - b.v) || compareCodes(a.code, b.code);
    })
    .map((e) => e.code);
}

describe('GET /v1/screen (C50–C52)', () => {
  it('two filters and a descending sort agree with the served rows, nulls never passing a filter', () => {
    const rows = served(snap);
    const want = rows
      .filter((r) => r.return_1y !== null && Number(r.return_1y) >= -5)
      .filter((r) => r.return_3m !== null && Number(r.return_3m) <= 10)
      .map((r) => ({ code: r.code, v: r.return_5y === null ? null : Number(r.return_5y) }));
    const got = allPages(snap, { return_1y_min: '-5', return_3m_max: '10', sort: '-return_5y', limit: '7' });
    expect(got.map((r) => r.code)).toEqual(expectedOrder(want, true));
    expect(want.some((w) => w.v === null)).toBe(true);
    // The rows carry the served figures.
    const byCode = new Map(rows.map((r) => [r.code, r]));
    for (const r of got) expect(r.return_5y).toBe(byCode.get(r.code)?.return_5y);
  });

  it('ascending with the filter on the sort column, and code order without a sort', () => {
    const rows = served(snap);
    const want = rows
      .filter((r) => r.return_1y !== null && Number(r.return_1y) >= 0 && Number(r.return_1y) <= 12.5)
      .map((r) => ({ code: r.code, v: Number(r.return_1y) }));
    const got = allPages(snap, { return_1y_min: '0', return_1y_max: '12.5', sort: 'return_1y', limit: '5' });
    expect(got.map((r) => r.code)).toEqual(expectedOrder(want, false));
    const plain = allPages(snap, { type: 'ETF', limit: '9' });
    expect(plain.map((r) => r.code)).toEqual(
      rows.filter((_, i) => snap.lookup.cols.funds.type[i] === 'ETF').map((r) => r.code),
    );
  });

  it('a row is code, name, type and the fields asked for, in that order; by default what was screened on', () => {
    const page = json<ScreenPage>(screen(snap, { fields: 'return_5y,history_years,return_1d', limit: '3' }));
    expect(Object.keys(page.data[0])).toEqual([
      'code',
      'name',
      'type',
      'return_5y',
      'history_years',
      'return_1d',
    ]);
    const dflt = json<ScreenPage>(screen(snap, { sort: 'return_ytd', history_years_min: '1', limit: '1' }));
    expect(Object.keys(dflt.data[0])).toEqual([
      'code',
      'name',
      'type',
      'return_1y',
      'return_3y',
      'return_5y',
      'return_10y',
      'return_ytd',
      'history_years',
    ]);
  });

  it('history_years is the span of the series in years of 365.25 days, and filters', () => {
    const f = snap.lookup.cols.funds;
    const d = snap.lookup.cols.series.date;
    const years = codes.map(
      (_, i) => (d[f.seriesOffset[i] + f.seriesLength[i] - 1] - d[f.seriesOffset[i]]) / 365.25,
    );
    const got = allPages(snap, { history_years_min: '2.5', fields: 'history_years' });
    expect(got.map((r) => r.code)).toEqual(codes.filter((_, i) => Math.round(years[i] * 1e4) / 1e4 >= 2.5));
    for (const r of got) expect(Number(r.history_years)).toBeCloseTo(years[codes.indexOf(r.code)], 4);
  });

  it('inactive=false keeps active funds only; q uses the /v1/funds index', () => {
    const got = allPages(snap, { inactive: 'false' });
    expect(got.map((r) => r.code)).toEqual(
      codes.filter((_, i) => snap.lookup.cols.funds.isInactive[i] === 0),
    );
    const q = allPages(snap, { q: 'F00000' + '1' });
    expect(q.map((r) => r.code)).toEqual(codes.filter((c) => c.includes('F000001')));
  });

  it('a cursor continues after its row across pages of any size, and refuses another sort', () => {
    const one = json<ScreenPage>(screen(snap, { sort: '-return_1y', limit: '100' }));
    const first = json<ScreenPage>(screen(snap, { sort: '-return_1y', limit: '10' }));
    const next = json<ScreenPage>(
      screen(snap, { sort: '-return_1y', limit: '10', cursor: first.next_cursor! }),
    );
    expect([...first.data, ...next.data].map((r) => r.code)).toEqual(
      one.data.slice(0, 20).map((r) => r.code),
    );
    const other = issues(screen(snap, { sort: 'return_1y', cursor: first.next_cursor! }));
    expect(other[0]).toMatchObject({ type: 'value_error', loc: ['query', 'cursor'] });
    expect(other[0].msg).toContain('sort=-return_1y');
    expect(issues(screen(snap, { cursor: 'AVZUSQ' }))[0]).toMatchObject({ loc: ['query', 'cursor'] });
    expect(json<ScreenPage>(screen(snap, { limit: '1000' })).data).toHaveLength(100);
  });

  it('bad input is named with the valid values (C54)', () => {
    const sort = issues(screen(snap, { sort: '-return_6y' }));
    expect(sort[0]).toMatchObject({ type: 'value_error', loc: ['query', 'sort'] });
    expect(sort[0].msg).toMatch(/return has no window 6y; its windows are 1d, 1w, 1m, 3m, 6m, 1y, 2y/);
    const field = issues(screen(snap, { fields: 'return_1y,alpha' }));
    expect(field[0]).toMatchObject({ type: 'literal_error', loc: ['query', 'fields'] });
    expect(field[0].msg).toContain("'return_1d', 'return_1w'");
    // The snapshot's risk figures are screen columns too, listed after the returns.
    expect(field[0].msg).toContain("'history_years', 'volatility_1y'");
    expect(field[0].msg).toContain("or 'positive_months_10y'");
    expect(issues(screen(snap, { beta_min: '1' }))[0]).toMatchObject({
      type: 'literal_error',
      loc: ['query', 'beta_min'],
    });
    const range = issues(screen(snap, { return_5y_min: '10', return_5y_max: '5' }));
    expect(range).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['query', 'return_5y_min'],
        msg: expect.stringContaining('return_5y_min (10) is above return_5y_max (5)'),
      }),
    ]);
    expect(issues(screen(snap, { return_5y_min: 'eight' }))[0]).toMatchObject({ type: 'float_parsing' });
    expect(issues(screen(snap, { fields: 'return_1y,return_1y' }))[0].msg).toContain('asked for twice');
    expect(issues(screen(snap, { inactive: 'maybe' }))[0]).toMatchObject({ type: 'bool_parsing' });
    expect(issues(screen(snap, { type: 'STOCK', limit: '0' })).map((i) => i.loc[1])).toEqual([
      'type',
      'limit',
    ]);
  });

  it('risk columns on the snapshot are screened on, ties broken by code (the risk map interface)', async () => {
    const s = await syntheticServing(40);
    dirs.push(s.dir);
    // Built here, independently: a figure with many ties and some nulls, as the risk map carries them.
    const vol = new Float64Array(40).map((_, i) => (i % 9 === 0 ? Number.NaN : (i % 4) * 2.5));
    // One figure too large to pack with its index: that column takes the comparator sort.
    const huge = vol.map((v, i) => (i === 7 ? 1e13 : v * 2));
    s.snap.useRiskColumns(
      new Map([
        ['volatility_3y', vol],
        ['volatility_5y', huge],
      ]),
    );
    const big = allPages(s.snap, { sort: '-volatility_5y', limit: '6', fields: 'volatility_5y' });
    const bigWant = s.codes.map((code, i) => ({ code, v: Number.isNaN(huge[i]) ? null : huge[i] }));
    expect(big.map((r) => r.code)).toEqual(expectedOrder(bigWant, true));
    expect(big[0]).toMatchObject({ code: s.codes[7], volatility_5y: '10000000000000.0000' });
    const got = allPages(s.snap, {
      sort: '-volatility_3y',
      volatility_3y_max: '5',
      limit: '4',
      fields: 'volatility_3y',
    });
    const want = s.codes.map((code, i) => ({ code, v: vol[i] })).filter((e) => e.v <= 5);
    expect(got.map((r) => r.code)).toEqual(expectedOrder(want, true));
    expect(got[0].volatility_3y).toBe('5.0000');
    const window = issues(screen(s.snap, { sort: 'volatility_2y' }));
    expect(window[0].msg).toContain('volatility has no window 2y; its windows are 3y, 5y');
  });
});

describe('GET /v1/compare (C53)', () => {
  it('rows in the order asked, a repeat once, misses left out, fields in order', () => {
    const rows = json<FigureRow[]>(
      compare(snap, { codes: `${codes[5]},NOPE,${codes[2]},${codes[5]}`, fields: 'return_3y,return_1m' }),
    );
    valid(FigureRowListSchema, rows);
    expect(rows.map((r) => r.code)).toEqual([codes[5], codes[2]]);
    expect(Object.keys(rows[0])).toEqual(['code', 'name', 'type', 'return_3y', 'return_1m']);
    const t = served(snap)[2];
    expect(rows[1].return_1m).toBe(t.return_1m);
  });

  it('more than 20 codes, or none, is a 422 at codes', () => {
    const many = issues(compare(snap, { codes: codes.slice(0, 21).join(',') }));
    expect(many[0]).toMatchObject({ type: 'too_long', loc: ['query', 'codes'], ctx: { max_length: 20 } });
    expect(issues(compare(snap, {}))[0]).toMatchObject({ type: 'missing', loc: ['query', 'codes'] });
  });
});

describe('GET /v1/funds/{code}/growth (C55)', () => {
  it('10,000 at the first observation on or after from, each month end, the last day closing', () => {
    const i = 0;
    const s = snap.lookup.series(i);
    const dates = Array.from(s.date.subarray(s.start, s.start + s.length));
    const values = Array.from(s.value.subarray(s.start, s.start + s.length));
    const from = formatDay(dates[10] - 0);
    const g = json<Growth>(growth(snap, codes[i], { from, interval: 'month' }));
    valid(GrowthSchema, g);
    expect(g.points[0]).toEqual({ date: from, value: '10000.00' });
    // Month ends, worked out from the dates as text.
    const want: number[] = [10];
    for (let j = 11; j < dates.length; j++)
      if (j === dates.length - 1 || formatDay(dates[j]).slice(0, 7) !== formatDay(dates[j + 1]).slice(0, 7))
        want.push(j);
    expect(g.points.map((p) => p.date)).toEqual(want.map((j) => formatDay(dates[j])));
    expect(g.points.map((p) => p.value)).toEqual(
      want.map((j) => ((10000 * values[j]) / values[10]).toFixed(2)),
    );
    const days = json<Growth>(growth(snap, codes[i], { from, to: formatDay(dates[40]), interval: 'day' }));
    expect(days.points).toHaveLength(31);
    const weeks = json<Growth>(growth(snap, codes[i], { interval: 'week' }));
    // Daily observations: every week's last one is a Sunday, except the first and the last points.
    for (const p of weeks.points.slice(1, -1)) expect(new Date(`${p.date}T00:00:00Z`).getUTCDay()).toBe(0);
  });

  it('no data in range is a 404; from after to, and a bad interval, are 422s', () => {
    expect(growth(snap, codes[0], { to: '1901-01-01' }).status).toBe(404);
    expect(growth(snap, 'NOPE', {}).status).toBe(404);
    expect(issues(growth(snap, codes[0], { from: '2024-02-01', to: '2024-01-01' }))[0]).toMatchObject({
      loc: ['query', 'from'],
    });
    expect(issues(growth(snap, codes[0], { interval: 'year' }))[0].msg).toBe(
      "Input should be 'day', 'week' or 'month'",
    );
  });

  it('more than 5,000 points is a 422 at interval naming the limit, not a coarser series', async () => {
    const s = await syntheticServing(2, 6000);
    dirs.push(s.dir);
    const longest = s.snap.lookup.cols.funds.seriesLength[0] > 5000 ? 0 : 1;
    const a = issues(growth(s.snap, s.codes[longest], { interval: 'day' }));
    expect(a[0]).toMatchObject({ loc: ['query', 'interval'] });
    expect(a[0].msg).toContain('more than the 5000 one answer holds');
    expect(growth(s.snap, s.codes[longest], { interval: 'week' }).status).toBe(200);
  });
});

describe('growth drawn (C55)', () => {
  it('the example SVG is one polyline through every monthly point, no script, nothing fetched', () => {
    const svg = growthSvgResource(snap).body.toString();
    const g = json<Growth>(growth(snap, codes[0], {}));
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    const points = /<polyline[^>]* points="([^"]+)"/.exec(svg)![1].split(' ');
    expect(points.length).toBeGreaterThan(1);
    expect(svg).not.toMatch(/<script|href=|url\(/);
    expect(growthSvgResource(null).body.toString()).toContain('No data loaded');
    expect(g.points.length).toBeGreaterThan(1);
  });
});
