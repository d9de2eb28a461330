/**
 * Risk figures (C38–C46) checked against a reference written here in the plainest
 * way, from the price and rate CSV text the build read: no code of core/risk.ts is
 * used for the expected values (only the NYSE calendar, tested on its own, C0).
 * The data ends on the clock's last closed session, so no date is baked in.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFromSource } from '../../builder/build.js';
import { fundRow, scratch, writeSource } from '../../builder/build.test-helper.js';
import { isTradingDay, lastTradingDayOfMonth } from '../../core/calendar.js';
import { formatDay, fromYmd, toYmd } from '../../core/dates.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { lastClosedDay } from '../../core/us-close.js';
import { seededRandom } from '../../test/seeded-random.js';
import { prepareToolResults } from '../mcp/tool-results.js';
import { loadForServing } from '../snapshot/manager.js';
import { ServingSnapshot } from '../snapshot/serving.js';
import { getRisk, riskBatch } from './risk-answers.js';

const dir = scratch('risk-test-');

// ---------------------------------------------------------------------------
// The data: trading days back from the last closed session.

const END = lastClosedDay();
const DAY = 86_400_000;
const iso = (d: number) => formatDay(d);

function tradingDays(from: number, to: number): number[] {
  const out: number[] = [];
  for (let d = from; d <= to; d++) if (isTradingDay(d)) out.push(d);
  return out;
}

const rand = seededRandom(7);
const normal = () => {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
};

type Row = [day: number, value: number];

function walk(days: number[], drift: number, vol: number, start = 100): Row[] {
  let p = start;
  return days.map((d) => {
    p *= Math.exp(drift + vol * normal());
    return [d, Number(p.toFixed(6))];
  });
}

const ALL = tradingDays(END - 12 * 366, END);
const yearsBack = (y: number) => END - Math.round(y * 365.25);

const FUNDS: Record<string, Row[]> = {
  // Twelve years of a plain random walk.
  NORM: walk(ALL, 0.0003, 0.01),
  // A 20-day hole over a month end two years back (C38: that month-end value is missing).
  GAPS: walk(ALL, 0.0002, 0.012).filter(([d]) => d < yearsBack(2) - 10 || d > yearsBack(2) + 10),
  // History split in two by a four-month pause six years back.
  SPLT: walk(ALL, 0.0002, 0.008).filter(([d]) => d < yearsBack(6) || d > yearsBack(6) + 120),
  // Two years only.
  SHRT: walk(tradingDays(yearsBack(2.1), END), 0.0004, 0.009),
  // Rises for years, then falls 40 % and never gets back.
  NEVR: (() => {
    const up = ALL.filter((d) => d < yearsBack(1.5));
    const down = ALL.filter((d) => d >= yearsBack(1.5));
    const a = walk(up, 0.0004, 0.004);
    const top = a[a.length - 1][1];
    return [
      ...a,
      ...down.map((d, k): Row => [d, Number((top * (1 - (0.4 * (k + 1)) / down.length)).toFixed(6))]),
    ];
  })(),
  // Never moves.
  FLAT: ALL.map((d): Row => [d, 10]),
  // The benchmark.
  BNCH: walk(ALL, 0.0003, 0.009),
};

/** Daily yields in percent with one whole month missing, four years back (C41). */
const RATES: Row[] = (() => {
  const hole = toYmd(yearsBack(4));
  let y = 2;
  return ALL.filter((d) => {
    const t = toYmd(d);
    return !(t.y === hole.y && t.m === hole.m);
  }).map((d): Row => {
    y = Math.max(0, y + 0.02 * normal());
    return [d, Number(y.toFixed(2))];
  });
})();

const csv = (rows: Row[]) =>
  `Date,Open,High,Low,Close,Adjusted_close,Volume\n${rows.map(([d, v]) => `${iso(d)},${v},${v},${v},${v},${v},0`).join('\n')}\n`;

// ---------------------------------------------------------------------------
// The reference, from the CSV text.

interface Obs {
  date: string;
  value: number;
}

const parseCsv = (text: string): Obs[] =>
  text
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => {
      const f = l.split(',');
      return { date: f[0], value: Number(f[5]) };
    });

const daysBetween = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / DAY;
const monthName = (y: number, m: number) => `${y}-${String(m).padStart(2, '0')}`;
const addMonth = (y: number, m: number, n: number) => {
  const t = y * 12 + (m - 1) + n;
  return [Math.floor(t / 12), (t % 12) + 1] as const;
};
const lastOnOrBefore = (obs: Obs[], date: string) => {
  let k = -1;
  for (let j = 0; j < obs.length; j++) if (obs[j].date <= date) k = j;
  return k;
};

function monthEnd(obs: Obs[], y: number, m: number): number {
  const t = iso(lastTradingDayOfMonth(y, m));
  const k = lastOnOrBefore(obs, t);
  return k >= 0 && daysBetween(obs[k].date, t) <= 7 ? k : -1;
}

const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
const sd = (a: number[]) => {
  const m = mean(a);
  return Math.sqrt(a.reduce((s, x) => s + (x - m) ** 2, 0) / (a.length - 1));
};

type Expected = Record<string, number | string | null>;

function reference(
  obs: Obs[],
  rates: Obs[],
  bench: Obs[] | null,
  asOf: string | null,
): { asOf: string; windows: Record<string, Expected> } | null {
  const a = asOf === null ? obs.length - 1 : lastOnOrBefore(obs, asOf);
  if (a < 0) return null;
  const A = obs[a].date;
  const [ay, am] = [Number(A.slice(0, 4)), Number(A.slice(5, 7))];
  const [ey, em] = A === iso(lastTradingDayOfMonth(ay, am)) ? [ay, am] : addMonth(ay, am, -1);
  const windows: Record<string, Expected> = {};
  for (const n of [1, 3, 5, 10]) {
    const w: Expected = {
      start_month: monthName(...addMonth(ey, em, -12 * n + 1)),
      end_month: monthName(ey, em),
    };
    const months: [number, number][] = [];
    for (let k = 12 * n; k >= 0; k--) months.push(addMonth(ey, em, -k) as [number, number]);
    const idx = months.map(([y, m]) => monthEnd(obs, y, m));
    const nulls = () => {
      for (const key of [
        'volatility',
        'sharpe',
        'sortino',
        'max_drawdown',
        'peak_date',
        'trough_date',
        'recovery_date',
        'best_month',
        'best_month_date',
        'worst_month',
        'worst_month_date',
        'positive_months',
        'beta',
        'correlation',
      ])
        w[key] = null;
    };
    if (idx.some((k) => k < 0)) {
      nulls();
      windows[`${n}y`] = w;
      continue;
    }
    const r = idx.slice(1).map((k, j) => obs[k].value / obs[idx[j]].value - 1);
    const s = sd(r);
    w.volatility = s < 1e-9 ? 0 : s * Math.sqrt(12) * 100;
    // rf of month M: the yield on the last rate date on or before the end of month M − 1, within 7 days.
    const rf = months.slice(1).map(([y, m]) => {
      const [py, pm] = addMonth(y, m, -1);
      const end = iso(fromYmd(py, pm, new Date(Date.UTC(py, pm, 0)).getUTCDate()));
      const k = lastOnOrBefore(rates, end);
      return k >= 0 && daysBetween(rates[k].date, end) <= 7 ? rates[k].value / 1200 : null;
    });
    if (rf.some((x) => x === null)) {
      w.sharpe = null;
      w.sortino = null;
    } else {
      const e = r.map((x, j) => x - (rf[j] as number));
      const se = sd(e);
      w.sharpe = se < 1e-9 ? null : (mean(e) / se) * Math.sqrt(12);
      const below = e.filter((x) => x < 0);
      w.sortino =
        below.length === 0
          ? null
          : (mean(e) / Math.sqrt(below.reduce((t, x) => t + x * x, 0) / e.length)) * Math.sqrt(12);
    }
    let best = 0;
    let worst = 0;
    for (let j = 0; j < r.length; j++) {
      if (r[j] > r[best]) best = j;
      if (r[j] < r[worst]) worst = j;
    }
    w.best_month = r[best] * 100;
    w.best_month_date = monthName(...months[best + 1]);
    w.worst_month = r[worst] * 100;
    w.worst_month_date = monthName(...months[worst + 1]);
    w.positive_months = (r.filter((x) => x > 0).length / r.length) * 100;
    // Drawdown: every (earlier max, later point) pair, the plain way.
    let dd = 0;
    let peak = -1;
    let trough = -1;
    let runMax = idx[0];
    for (let t = idx[0]; t <= idx[idx.length - 1]; t++) {
      if (obs[t].value > obs[runMax].value) runMax = t;
      const x = obs[t].value / obs[runMax].value - 1;
      if (x < dd) {
        dd = x;
        peak = runMax;
        trough = t;
      }
    }
    w.max_drawdown = dd * 100;
    w.peak_date = peak < 0 ? null : obs[peak].date;
    w.trough_date = trough < 0 ? null : obs[trough].date;
    let rec: string | null = null;
    if (trough >= 0)
      for (let t = trough + 1; t <= a; t++)
        if (obs[t].value >= obs[peak].value) {
          rec = obs[t].date;
          break;
        }
    w.recovery_date = rec;
    w.beta = null;
    w.correlation = null;
    if (bench !== null) {
      const bi = months.map(([y, m]) => monthEnd(bench, y, m));
      if (bi.every((k) => k >= 0)) {
        const rb = bi.slice(1).map((k, j) => bench[k].value / bench[bi[j]].value - 1);
        const mr = mean(r);
        const mb = mean(rb);
        const cov = r.reduce((t, x, j) => t + (x - mr) * (rb[j] - mb), 0) / (r.length - 1);
        const vb = sd(rb);
        w.beta = vb < 1e-9 ? null : cov / vb ** 2;
        w.correlation = vb < 1e-9 || s < 1e-9 ? null : cov / (s * vb);
      }
    }
    windows[`${n}y`] = w;
  }
  return { asOf: A, windows };
}

// ---------------------------------------------------------------------------

let snap: ServingSnapshot;
let message: Awaited<ReturnType<typeof loadForServing>>;
const texts: Record<string, string> = {};

beforeAll(async () => {
  const src = dir('source');
  for (const [code, rows] of Object.entries(FUNDS)) texts[code] = csv(rows);
  writeSource(src, Object.keys(FUNDS).map(fundRow), texts);
  mkdirSync(join(src, 'rates'));
  texts.US3M = csv(RATES);
  writeFileSync(join(src, 'rates', 'US3M.csv'), texts.US3M);
  const snapshots = dir('snapshots');
  await buildFromSource({ source: src, snapshots, keep: 2, maxBadShare: 0.01, threads: 1 });
  message = await loadForServing(snapshots, readCurrent(snapshots)!, prepareToolResults);
  snap = new ServingSnapshot(message, 'BNCH');
}, 60_000);

const body = (a: ReturnType<typeof getRisk>) => {
  expect(a.status).toBe(200);
  return JSON.parse(Buffer.from(a.body as Uint8Array).toString('utf8'));
};

function expectRow(
  row: { as_of_date: string; windows: Record<string, Record<string, string | null>> },
  ref: NonNullable<ReturnType<typeof reference>>,
  what: string,
): void {
  expect(row.as_of_date, what).toBe(ref.asOf);
  for (const [w, exp] of Object.entries(ref.windows))
    for (const [k, v] of Object.entries(exp)) {
      const got = row.windows[w][k];
      const where = `${what} ${w}.${k}`;
      if (v === null || typeof v === 'string') expect(got, where).toBe(v);
      else {
        expect(got, where).not.toBeNull();
        // Four decimals, rounded: within half a unit of the last place (and a hair).
        expect(Math.abs(Number(got) - v), `${where}: ${got} vs ${v}`).toBeLessThanOrEqual(0.0000501);
      }
    }
}

const asOfDates = () => [
  null,
  iso(yearsBack(0.5)),
  iso(yearsBack(1) - 3),
  iso(lastTradingDayOfMonth(toYmd(yearsBack(3)).y, toYmd(yearsBack(3)).m)),
];

describe('risk figures against an independent calculation (C38–C45)', () => {
  const rates = () => parseCsv(texts.US3M);
  for (const code of Object.keys(FUNDS)) {
    it(`${code}: every figure of every window, latest and at past dates, against benchmark BNCH`, () => {
      const obs = parseCsv(texts[code]);
      for (const asOf of asOfDates()) {
        const ref = reference(obs, rates(), parseCsv(texts.BNCH), asOf);
        const a = getRisk(snap, code, asOf === null ? {} : { as_of: asOf });
        if (ref === null) {
          expect(a.status).toBe(404);
          continue;
        }
        const row = body(a);
        expect(row.benchmark).toBe('BNCH');
        expectRow(row, ref, `${code} as of ${asOf ?? 'latest'}`);
      }
    });
  }

  it('the data has the cases it is meant to have, so that the checks above check something', () => {
    const latest = (code: string, bench: string | null = 'BNCH') =>
      reference(parseCsv(texts[code]), rates(), bench === null ? null : parseCsv(texts[bench]), null)!
        .windows;
    // A month with no rate four years back: Sharpe and Sortino null from 5y on, not before (C41).
    expect(latest('NORM')['3y'].sharpe).not.toBeNull();
    expect(latest('NORM')['5y'].sharpe).toBeNull();
    expect(latest('NORM')['5y'].volatility).not.toBeNull();
    expect(latest('NORM')['10y'].beta).not.toBeNull();
    // A gap over a month end two years back: 1y complete, 3y not (C38, C39).
    expect(latest('GAPS')['1y'].volatility).not.toBeNull();
    expect(latest('GAPS')['3y'].volatility).toBeNull();
    expect(latest('SPLT')['5y'].volatility).not.toBeNull();
    expect(latest('SPLT')['10y'].volatility).toBeNull();
    expect(latest('SHRT')['1y'].volatility).not.toBeNull();
    expect(latest('SHRT')['3y'].volatility).toBeNull();
    expect(latest('NEVR')['3y'].trough_date).not.toBeNull();
    expect(latest('NEVR')['3y'].recovery_date).toBeNull();
    // A flat fund: no spread, no fall (C40, C43): volatility 0, Sharpe undefined, no drawdown dates.
    expect(latest('FLAT')['1y'].volatility).toBe(0);
    expect(latest('FLAT')['1y'].max_drawdown).toBe(0);
    expect(latest('FLAT')['1y'].peak_date).toBeNull();
    expect(latest('FLAT')['1y'].correlation).toBeNull();
  });

  it('a flat fund is served "0.0000" volatility and drawdown with null dates, and null correlation', () => {
    const w = body(getRisk(snap, 'FLAT', {})).windows['3y'];
    expect([
      w.volatility,
      w.max_drawdown,
      w.peak_date,
      w.trough_date,
      w.recovery_date,
      w.correlation,
    ]).toEqual(['0.0000', '0.0000', null, null, null, null]);
    expect(w.positive_months).toBe('0.0000');
  });

  it('without a benchmark (none asked, no server default) beta and correlation are null, and so is benchmark', () => {
    const row = body(getRisk(new ServingSnapshot(message, null), 'NORM', {}));
    expect(row.benchmark).toBeNull();
    const ref = reference(parseCsv(texts.NORM), parseCsv(texts.US3M), null, null)!;
    expectRow(row, ref, 'NORM without a benchmark');
    expect(row.windows['10y'].beta).toBeNull();
  });
});

describe('the batch (C16, C46)', () => {
  it('answers rows in request order, a duplicate once, misses left out, at one as_of for all', () => {
    const asOf = iso(yearsBack(1));
    const a = riskBatch(
      snap,
      JSON.stringify({ codes: ['SHRT', 'NOPE', 'NORM', 'SHRT'], as_of: asOf, benchmark: 'NORM' }),
      'application/json',
    );
    const rows = body(a);
    expect(rows.map((r: { code: string }) => r.code)).toEqual(['SHRT', 'NORM']);
    const ref = reference(parseCsv(texts.NORM), parseCsv(texts.US3M), parseCsv(texts.NORM), asOf)!;
    expectRow(rows[1], ref, 'NORM against itself');
    expect(rows[1].windows['1y'].beta).toBe('1.0000');
    expect(rows[1].windows['1y'].correlation).toBe('1.0000');
  });

  it('a benchmark not in the universe is a 422 naming it, single and batch (C45)', () => {
    const single = getRisk(snap, 'NORM', { benchmark: 'ZZZZ' });
    expect(single.status).toBe(422);
    expect(JSON.parse(single.body as string).detail[0]).toMatchObject({
      type: 'value_error',
      loc: ['query', 'benchmark'],
      input: 'ZZZZ',
    });
    const batch = riskBatch(snap, JSON.stringify({ codes: ['NORM'], benchmark: 'ZZZZ' }), 'application/json');
    expect(batch.status).toBe(422);
    expect(JSON.parse(batch.body as string).detail[0].loc).toEqual(['body', 'benchmark']);
    expect(JSON.parse(batch.body as string).detail[0].msg).toContain('ZZZZ');
  });

  it('an as_of before a fund’s first observation is a 404 single and a miss in a batch (C3)', () => {
    const before = iso(yearsBack(3));
    expect(getRisk(snap, 'SHRT', { as_of: before }).status).toBe(404);
    expect(
      body(riskBatch(snap, JSON.stringify({ codes: ['SHRT'], as_of: before }), 'application/json')),
    ).toEqual([]);
  });
});
