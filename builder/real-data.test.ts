/**
 * Real prices no one here made (shared/data/real): a full build over them, then
 * calendar-year returns by C10 against independently published figures.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { buildFromSource } from './build.js';

const REAL = fileURLToPath(new URL('../../shared/data/real/', import.meta.url));
const MUTUAL_FUNDS = new Set(['FNILX', 'SWPPX', 'TRIWX', 'VFIAX', 'VFINX', 'VUSTX']);

let work: string;
let lookup: SnapshotLookup;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fr-real-'));
  const source = join(work, 'source');
  mkdirSync(join(source, 'prices'), { recursive: true });
  const codes = readdirSync(join(REAL, 'prices'))
    .filter((f) => f.endsWith('.csv'))
    .map((f) => f.slice(0, -4));
  for (const c of codes) copyFileSync(join(REAL, 'prices', `${c}.csv`), join(source, 'prices', `${c}.csv`));
  const rows = codes.map(
    (c) =>
      `${c},${c} test fund,USA,${MUTUAL_FUNDS.has(c) ? 'NMFQS' : 'NYSE ARCA'},USD,${MUTUAL_FUNDS.has(c) ? 'FUND' : 'ETF'},,false,`,
  );
  writeFileSync(
    join(source, 'funds.csv'),
    `Code,Name,Country,Exchange,Currency,Type,Isin,IsInactive,InactiveDate\n${rows.join('\n')}\n`,
  );
  const snapshots = join(work, 'snapshots');
  const result = await buildFromSource({ source, snapshots, keep: 2, maxBadShare: 0, threads: 2 });
  expect(result.report.skippedRows).toBe(0);
  lookup = new SnapshotLookup((await loadSnapshot(result.dir)).columns);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Published {
  ticker: string;
  year: number;
  percent: number;
}

function published(): Published[] {
  const lines = readFileSync(join(REAL, 'published_returns.csv'), 'utf8').trim().split('\n').slice(1);
  return lines.map((l) => {
    const [ticker, year, percent] = l.split(',');
    return { ticker, year: Number(year), percent: Number(percent) };
  });
}

describe('real prices against published calendar-year returns (C10, SOURCES.md)', () => {
  it('loads every real file in its own dialect with no bad row (C35)', () => {
    expect(lookup.fundCount).toBe(19);
    const agg = JSON.parse(lookup.fundJson(lookup.find('AGG')));
    expect(agg.min_return_date).toBe('2003-09-29');
    expect(agg.max_return_date).toBe('2025-09-26');
  });

  it('every checkable published year agrees within 0.1 percentage points', () => {
    let checked = 0;
    for (const p of published()) {
      const i = lookup.find(p.ticker);
      expect(i, p.ticker).toBeGreaterThanOrEqual(0);
      const json = lookup.calendarYearJson(i, p.year);
      // Outside the file's date range, or a year the file only partly covers: cannot be checked.
      if (json === null) continue;
      const row = JSON.parse(json);
      if (row.is_partial) continue;
      const ours = Number(row.total_return);
      // Published figures with one decimal carry up to 0.05 of their own rounding.
      const decimals = String(p.percent).split('.')[1]?.length ?? 0;
      const tolerance = 0.1 + (decimals <= 1 ? 0.05 : 0.005);
      expect(
        Math.abs(ours - p.percent),
        `${p.ticker} ${p.year}: ours ${ours}, published ${p.percent}`,
      ).toBeLessThanOrEqual(tolerance);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(18);
  });

  it('the precomputed calendar rows equal rows computed from the series', () => {
    for (const code of ['SPY', 'VFINX', 'AGG', 'TRIWX']) {
      const i = lookup.find(code);
      for (let y = 1980; y <= 2025; y++)
        expect(lookup.calendarYearJson(i, y)).toBe(lookup.calendarYearFromSeriesJson(i, y));
    }
  });

  it('SPY 2019 is a complete year from the 2018-12-31 close to the 2019-12-31 close (C9, C10)', () => {
    const row = JSON.parse(lookup.calendarYearJson(lookup.find('SPY'), 2019)!);
    expect(row).toMatchObject({
      year: 2019,
      start_date: '2018-12-31',
      end_date: '2019-12-31',
      is_partial: false,
    });
  });

  it('the inception year of TRIWX is partial and measured from its first close (C10, C11)', () => {
    const row = JSON.parse(lookup.calendarYearJson(lookup.find('TRIWX'), 2019)!);
    expect(row).toMatchObject({ start_date: '2019-09-30', is_partial: true });
  });

  it('an as_of on a holiday anchors on the prior close (C3)', () => {
    const row = JSON.parse(lookup.trailingAtJson(lookup.find('SPY'), Date.UTC(2020, 11, 25) / 86_400_000)!);
    expect(row.as_of_date).toBe('2020-12-24');
  });
});
