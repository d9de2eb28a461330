/**
 * How a refresh keeps the source directory's records: every file written whole and
 * renamed into place, and what it replaces set aside under `received/`, never deleted.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { writeAtomicSync } from '../../core/files/atomic.js';
import { fundRecordAt } from '../../core/snapshot/columns.js';
import type { LoadedSnapshot } from '../../core/snapshot/reader.js';
import type { RowBatch } from '../append.js';
import { type DailyRows, dailyHeader, dailyLine, dividendCell, splitCell } from '../source/daily-file.js';
import { fundsFileText } from '../source/funds.js';
import { dailyEntries } from '../source/layout.js';
import type { UniverseUpdate } from './fund-list.js';

/**
 * A record written beside its final name, then renamed: a reader (or a run after a
 * kill) never sees half of it. Not fsynced: the snapshot built from the records is,
 * and a record lost in a power cut is fetched again by the next refresh.
 */
export function writeWhole(path: string, data: string | Uint8Array): void {
  writeAtomicSync(path, data, { durable: false });
}

/** An instant as a file-name part: `20261123T220000Z`. */
export function fileStamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * The source is ahead of the live snapshot when CURRENT was rolled back: daily files
 * dated after the live as_of hold days the snapshot does not. The refresh fetches
 * those days again, so they are set aside under received/ (nothing deleted) before it
 * writes its own records; returns where they went, or null when there were none.
 */
export function setAsideAhead(source: string, liveAsOf: Day, now: number): string | null {
  const ahead = dailyEntries(source).files.filter((p) => {
    const d = parseDay(basename(p, '.csv'));
    return d !== null && d > liveAsOf;
  });
  if (ahead.length === 0) return null;
  const dir = join(source, 'received', `after-rollback-${fileStamp(now)}`, 'daily');
  mkdirSync(dir, { recursive: true });
  for (const p of ahead) renameSync(p, join(dir, basename(p)));
  return dir;
}

/**
 * The source directory's record of this refresh, written before the publish so that
 * `build --source` then `build --daily <source>/daily` reproduces the snapshot: each
 * day's applied rows as daily/<date>.csv, each new fund's history as prices/<code>.csv,
 * and funds.csv with every fund's current metadata. Each file is written whole and
 * renamed into place.
 */
export function writeRecords(
  source: string,
  batches: readonly RowBatch[],
  applied: readonly Uint8Array[],
  universe: UniverseUpdate,
  funds: LoadedSnapshot['columns']['funds'],
): void {
  mkdirSync(join(source, 'daily'), { recursive: true });
  for (let b = 0; b < batches.length; b++)
    writeWhole(join(source, batches[b].file), dailyText(batches[b].rows, applied[b]));
  if (universe.histories.size > 0) mkdirSync(join(source, 'prices'), { recursive: true });
  for (const [code, bytes] of universe.histories) writeWhole(join(source, 'prices', `${code}.csv`), bytes);
  if (universe.listed || universe.updates.size > 0) writeWhole(join(source, 'funds.csv'), fundsText(funds));
}

/** Applied rows only: what the snapshot holds is what a rebuild applies. Numbers round-trip exactly. */
function dailyText(rows: DailyRows, applied: Uint8Array): string {
  // No adjusted close: the refresh keeps the raw close and factors it applied (C37).
  let out = dailyHeader(false);
  for (let r = 0; r < rows.length; r++) {
    if (applied[r] !== 1) continue;
    out += dailyLine({
      code: rows.codes[r],
      date: formatDay(rows.dates[r]),
      close: String(rows.close[r]),
      dividend: dividendCell(rows.dividend[r]),
      split: splitCell(rows.split[r]),
    });
  }
  return out;
}

function fundsText(f: LoadedSnapshot['columns']['funds']): string {
  return fundsFileText(Array.from({ length: f.length }, (_, i) => fundRecordAt(f, i)));
}
