/**
 * What the refresh tests share: ten funds with prices up to Friday 2026-11-20, built
 * into a snapshot, an inbox beside them, and the clock of an evening after the close.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { tradingDaysInRange } from '../../core/calendar.js';
import { formatDay, fromYmd } from '../../core/dates.js';
import type { SnapshotColumns } from '../../core/snapshot/columns.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { loadSnapshot } from '../../core/snapshot/reader.js';
import { buildFromSource } from '../build.js';
import { writeSource } from '../build.test-helper.js';
import { DEFAULT_GATES } from './gates.js';
import { inboxProvider } from './inbox.js';
import type { RefreshOptions } from './refresh.js';

/** The clock at 22:00 UTC (17:00 or 18:00 New York, after the close) of a date. */
export const evening = (ymd: string) => () => Date.parse(`${ymd}T22:00:00Z`);

export const CODES = [
  'AAAAX',
  'BBBBX',
  'CCCCX',
  'DDDDX',
  'EEEEX',
  'FFFFX',
  'GGGGX',
  'HHHHX',
  'IIIIX',
  'JJJJX',
];
export const HISTORY = tradingDaysInRange(fromYmd(2026, 10, 1), fromYmd(2026, 11, 20));

export function priceText(start: number, days: readonly number[]): string {
  let out = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
  days.forEach((d, i) => {
    const c = (start + i * 0.01).toFixed(2);
    out += `${formatDay(d)},${c},${c},${c},${c},${c},0\n`;
  });
  return out;
}

/** Ten funds with prices up to Friday 2026-11-20, built; an empty inbox beside them. */
export async function tenFunds(root: string) {
  const source = writeSource(
    join(root, 'source'),
    CODES.map((c) => `${c},${c} Fund,USA,NMFQS,USD,FUND,,false,`),
    Object.fromEntries(CODES.map((c, i) => [c, priceText(10 + i, HISTORY)])),
  );
  const snapshots = join(root, 'snapshots');
  await buildFromSource({ source, snapshots, keep: 5, maxBadShare: 0.01, threads: 1 });
  const inbox = join(root, 'inbox');
  mkdirSync(inbox, { recursive: true });
  const opts = (now: () => number, more: Partial<RefreshOptions> = {}): RefreshOptions => ({
    source,
    snapshots,
    provider: inboxProvider(inbox),
    keep: 5,
    maxBadShare: 0.01,
    gates: DEFAULT_GATES,
    now,
    ...more,
  });
  return { root, source, snapshots, inbox, opts };
}

/** A daily file: one row per code at `close`, dated `date` unless a row says otherwise. */
export function dayFile(inbox: string, date: string, rows: Array<[string, number, string?]>): void {
  const text = rows.map(([code, close, d]) => `${code},${d ?? date},${close.toFixed(2)},,`).join('\n');
  writeFileSync(join(inbox, `${date}.csv`), `Code,Date,Close,Dividend,Split\n${text}\n`);
}

export const allAt = (bump: number): Array<[string, number]> => CODES.map((c, i) => [c, 10 + i + 0.4 + bump]);

export function lastDate(cols: SnapshotColumns, code: string): string {
  const f = cols.funds.code.indexOf(code);
  return formatDay(cols.series.date[cols.funds.seriesOffset[f] + cols.funds.seriesLength[f] - 1]);
}

export async function live(snapshots: string): Promise<SnapshotColumns> {
  return (await loadSnapshot(join(snapshots, readCurrent(snapshots) as string))).columns;
}

/** Two snapshots' columns alike: funds and metadata, series, every trailing and calendar figure. */
export function expectSameColumns(a: SnapshotColumns, b: SnapshotColumns): void {
  expect(a.funds.code).toEqual(b.funds.code);
  for (const k of ['name', 'exchange', 'isin', 'type', 'country', 'currency'] as const)
    expect(a.funds[k], k).toEqual(b.funds[k]);
  for (const k of ['isInactive', 'inactiveDate', 'seriesOffset', 'seriesLength', 'lastClose'] as const)
    expect(Array.from(a.funds[k]), k).toEqual(Array.from(b.funds[k]));
  expect(Array.from(a.series.date)).toEqual(Array.from(b.series.date));
  expect(Array.from(a.series.value)).toEqual(Array.from(b.series.value));
  expect(Array.from(a.trailing.asOf)).toEqual(Array.from(b.trailing.asOf));
  a.trailing.values.forEach((v, k) => {
    expect(Array.from(v), `trailing ${k}`).toEqual(Array.from(b.trailing.values[k]));
  });
  for (const k of ['fund', 'year', 'totalReturn', 'startDate', 'endDate', 'isPartial'] as const)
    expect(Array.from(a.calendar[k]), `calendar ${k}`).toEqual(Array.from(b.calendar[k]));
}
