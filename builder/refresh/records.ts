/**
 * How a refresh keeps the source directory's records: every file written whole and
 * renamed into place, and what it replaces set aside under `received/`, never deleted.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type Day, parseDay } from '../../core/dates.js';
import { writeAtomicSync } from '../../core/files/atomic.js';
import { dailyEntries } from '../source/layout.js';

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
