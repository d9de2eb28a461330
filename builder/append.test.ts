import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tradingDaysInRange } from '../core/calendar.js';
import { type Day, formatDay, fromYmd } from '../core/dates.js';
import { type SeriesColumns, seriesParts, seriesRows } from '../core/snapshot/columns.js';
import { readCurrent } from '../core/snapshot/directory.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { ARROW_FILES } from '../core/snapshot/schema.js';
import { appendRows, type NewFund, type RowBatch } from './append.js';
import { buildFromSource, phaseTimer, snapshotAsOf, writeAndPublish } from './build.js';
import { scratch, writeSource } from './build.test-helper.js';
import { appendDaily } from './daily-append.js';
import { generateUniverse } from './generate/index.js';
import { BuildReport } from './report/build-report.js';
import { parseDailyFile } from './source/daily-file.js';
import { parsePriceFile } from './source/prices.js';

const dir = scratch('fr-append-');
const base = { keep: 5, maxBadShare: 0.01, threads: 2 };
/** Rows up to here are not "in the future" for the readers, whatever the clock says. */
const LATEST = fromYmd(2027, 12, 31);

/** Every column and every file of the live snapshots of two snapshots directories. */
async function live(snapshots: string) {
  const s = await loadSnapshot(join(snapshots, readCurrent(snapshots) as string));
  const files = Object.fromEntries(ARROW_FILES.map((f) => [f, s.manifest.files[f]]));
  return { columns: s.columns, files, counts: s.manifest.counts, asOf: s.manifest.as_of };
}

const HISTORY = tradingDaysInRange(fromYmd(2026, 9, 1), fromYmd(2026, 11, 20));
/** The three sessions after the history: Monday to Wednesday before Thanksgiving. */
const [D1, D2, D3] = tradingDaysInRange(fromYmd(2026, 11, 23), fromYmd(2026, 11, 25));
const SATURDAY = fromYmd(2026, 11, 21);

/** A price file whose adjusted close is its close: the index then equals the close through an append (C37). */
function priceFile(rows: ReadonlyArray<readonly [Day, number]>): string {
  let out = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
  for (const [d, c] of rows) out += `${formatDay(d)},${c},${c},${c},${c},${c},0\n`;
  return out;
}

const fundsRow = (code: string, inactive?: Day) =>
  `${code},${code} Fund,USA,NMFQS,USD,FUND,,${inactive !== undefined},${inactive === undefined ? '' : formatDay(inactive)}`;

describe('the append hands the writer the old slices and the new rows (C37)', () => {
  it('new funds first, inside and last in code order, funds without rows, a missed day, gated rows: every file equals a full build', async () => {
    // Each fund's closes: its history, then what the days deliver (null: no row that day).
    const history = (start: number) =>
      HISTORY.map((d, i): [Day, number] => [d, Number((start + i * 0.01).toFixed(2))]);
    const old: Record<string, { start: number; days: (number | null)[] }> = {
      BA: { start: 10, days: [10.9, 11.05, 11.1] },
      BB: { start: 20, days: [null, 20.75, 20.8] },
      BC: { start: 30, days: [null, null, null] },
      BD: { start: 40, days: [null, null, null] },
      BE: { start: 50, days: [50.5, 50.4, 50.61] },
      // +200 % on D2 with no split: held back, and D3 with it.
      BF: { start: 60, days: [60.3, 182.0, 61.0] },
      BG: { start: 70, days: [70.1, 70.2, 70.3] },
      BH: { start: 80, days: [80.6, 80.7, 80.8] },
    };
    const liveSource = writeSource(
      dir('live-source'),
      Object.keys(old).map((c) => fundsRow(c)),
      Object.fromEntries(Object.entries(old).map(([c, f]) => [c, priceFile(history(f.start))])),
    );
    const appended = dir('appended');
    await buildFromSource({ ...base, source: liveSource, snapshots: appended });
    const prev = (await loadSnapshot(join(appended, readCurrent(appended) as string))).columns;

    // New funds: AA's history covers D1 (its D1 row is not news), BE5's ends on D2, ZZ's on D3.
    const newHistories: Record<string, { rows: [Day, number][]; days: (number | null)[] }> = {
      AA: { rows: [...history(5), [D1, 5.7]], days: [5.7, 5.8, 5.75] },
      BE5: {
        rows: tradingDaysInRange(fromYmd(2026, 11, 2), D2).map((d, i) => [d, 15 + i / 100]),
        days: [null, null, 15.5],
      },
      ZZ: { rows: tradingDaysInRange(fromYmd(2026, 10, 1), D3).map((d, i) => [d, 90 - i / 100]), days: [] },
    };
    const newFunds: NewFund[] = Object.entries(newHistories).map(([code, h]) => {
      const p = parsePriceFile(
        new TextEncoder().encode(priceFile(h.rows)),
        `prices/${code}.csv`,
        code,
        LATEST,
      );
      return {
        record: { ...fundRecord(code), isInactive: false, inactiveDate: null },
        dates: p.dates,
        values: p.values,
        lastClose: p.lastClose,
      };
    });
    const updates = new Map([['BC', { ...fundRecord('BC'), isInactive: true, inactiveDate: D1 }]]);

    const all = { ...Object.fromEntries(Object.entries(old).map(([c, f]) => [c, f.days])) };
    for (const [c, h] of Object.entries(newHistories)) all[c] = h.days;
    const batches: RowBatch[] = [D1, D2, D3].map((day, k) => {
      let text = 'Code,Date,Close,Dividend,Split\n';
      for (const [code, days] of Object.entries(all))
        if (days[k] != null) text += `${code},${formatDay(day)},${days[k]},,\n`;
      // Dated on a Saturday: the NYSE was closed (C0).
      if (k === 0) text += `BG,${formatDay(SATURDAY)},70.05,,\n`;
      const file = `daily/${formatDay(day)}.csv`;
      return { file, rows: parseDailyFile(new TextEncoder().encode(text), file, LATEST).rows };
    });

    const report = new BuildReport();
    const out = appendRows(
      prev,
      { batches, newFunds, updates, gates: { tradingDaysOnly: true, maxMove: 0.5 } },
      report,
    );
    expect(report.reasons.get('suspicious_move')?.count).toBe(2);
    expect(report.reasons.get('non_trading_day')?.count).toBe(1);
    expect(out.added).toBe(3 + 2 + 3 + 1 + 3 + 3 + 2 + 1);

    // The live snapshot's memory is the only copy of the old rows: what the parts hold
    // beyond views onto it is the new rows and the new funds' histories.
    const parts = seriesParts(out.columns.series);
    const copied = parts
      .filter((p) => p.date.buffer !== prev.series.date.buffer)
      .reduce((n, p: SeriesColumns) => n + p.date.length, 0);
    expect(copied).toBe(out.added + newFunds.reduce((n, f) => n + f.dates.length, 0));
    expect(seriesRows(out.columns.series)).toBe(prev.series.date.length + copied);

    const { timings, lap } = phaseTimer();
    await writeAndPublish(
      out.columns,
      report,
      { kind: 'test' },
      { snapshots: appended, keep: 5 },
      timings,
      lap,
    );
    expect(snapshotAsOf(out.columns)).toBe(formatDay(D3));

    // The same universe as one source: each fund's history and the rows it was given.
    const applied = (days: (number | null)[], upTo = 3): [Day, number][] =>
      [D1, D2, D3]
        .slice(0, upTo)
        .map((d, k) => [d, days[k]] as [Day, number | null])
        .filter((r): r is [Day, number] => r[1] !== null);
    const prices: Record<string, string> = {};
    for (const [c, f] of Object.entries(old))
      prices[c] = priceFile([...history(f.start), ...applied(f.days, c === 'BF' ? 1 : 3)]);
    prices.AA = priceFile([...newHistories.AA.rows, ...applied([null, ...newHistories.AA.days.slice(1)])]);
    prices.BE5 = priceFile([...newHistories.BE5.rows, [D3, 15.5]]);
    prices.ZZ = priceFile(newHistories.ZZ.rows);
    const fullSource = writeSource(
      dir('full-source'),
      [...Object.keys(old), 'AA', 'BE5', 'ZZ'].map((c) => fundsRow(c, c === 'BC' ? D1 : undefined)),
      prices,
    );
    const full = dir('full');
    await buildFromSource({ ...base, source: fullSource, snapshots: full });

    const [a, b] = [await live(appended), await live(full)];
    expect(a.columns).toEqual(b.columns);
    expect(a.counts).toEqual(b.counts);
    expect(a.asOf).toBe(formatDay(D3));
    // Byte for byte the same Arrow files (sizes and SHA-256).
    expect(a.files).toEqual(b.files);
  });

  it('several daily files in one append over a generated universe (funds already inactive among them) equal a full build', async () => {
    const opts = { funds: 60, seed: 23, from: fromYmd(2012, 1, 1), to: fromYmd(2026, 11, 20), threads: 1 };
    const whole = dir('gen-whole');
    const split = dir('gen-split');
    await generateUniverse({ ...opts, out: whole, dailyDays: 0 });
    await generateUniverse({ ...opts, out: split, dailyDays: 6 });
    expect(readdirSync(join(split, 'daily'))).toHaveLength(6);
    const snapWhole = dir('gen-snap-whole');
    const snapSplit = dir('gen-snap-split');
    await buildFromSource({ ...base, source: whole, snapshots: snapWhole });
    await buildFromSource({ ...base, source: split, snapshots: snapSplit });
    const r = await appendDaily({ ...base, daily: join(split, 'daily'), snapshots: snapSplit });
    expect(r.report.skippedRows).toBe(0);
    const [a, b] = [await live(snapSplit), await live(snapWhole)];
    // The fixture must have what the test claims: funds that got no rows (inactive before the days).
    expect(Array.from(a.columns.funds.isInactive)).toContain(1);
    expect(a.columns).toEqual(b.columns);
    expect(a.files).toEqual(b.files);
  }, 60_000);
});

function fundRecord(code: string) {
  return {
    code,
    name: `${code} Fund`,
    country: 'USA',
    exchange: 'NMFQS',
    currency: 'USD',
    type: 'FUND' as const,
    isin: null,
    isInactive: false,
    inactiveDate: null as Day | null,
  };
}
