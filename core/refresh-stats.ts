/**
 * What `fundreturns refresh` runs did, for the server's /metrics
 * (docs/monitoring.md): the refresh code calls `recordRefresh` once a run ends, and
 * the server reads the file when it is scraped. The file lives in the snapshots
 * directory, the one place a refresh and the server that serves its output both
 * know; it is replaced by a rename, so a scrape never reads half of it. One refresh
 * runs at a time (the schedule's lock), so read-modify-write needs no lock here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomicSync } from './files/atomic.js';

const REFRESH_STATS_FILE = 'refresh-stats.json';

export interface RefreshStats {
  /** Runs by outcome (`ok`, `failed`, `unchanged`, …). */
  runs: Record<string, number>;
  /** Seconds spent, by outcome. */
  seconds: Record<string, number>;
  last: { outcome: string; at: number; seconds: number; rows: number } | null;
  /** Unix seconds of the last run whose outcome was not `failed`, or null. */
  lastSuccessAt: number | null;
}

/** An outcome as a label value: short lower-case words, anything else `other`. */
function outcomeLabel(outcome: string): string {
  return /^[a-z][a-z_]{0,31}$/.test(outcome) ? outcome : 'other';
}

/** The stats in `snapshotsDir`, or null when no run was recorded (or the file is not ours). */
export function readRefreshStats(snapshotsDir: string): RefreshStats | null {
  try {
    const s = JSON.parse(readFileSync(join(snapshotsDir, REFRESH_STATS_FILE), 'utf8')) as RefreshStats;
    if (typeof s !== 'object' || s === null || typeof s.runs !== 'object' || typeof s.seconds !== 'object')
      return null;
    return s;
  } catch {
    return null;
  }
}

/**
 * Record one refresh run that ended at `nowMs`: its outcome (`ok`, `failed`, or
 * another word such as `unchanged`), how long it took and the rows it wrote.
 */
export function recordRefresh(
  snapshotsDir: string,
  run: { outcome: string; seconds: number; rows: number },
  nowMs: number,
): void {
  const s = readRefreshStats(snapshotsDir) ?? { runs: {}, seconds: {}, last: null, lastSuccessAt: null };
  const outcome = outcomeLabel(run.outcome);
  const at = Math.floor(nowMs / 1000);
  s.runs[outcome] = (s.runs[outcome] ?? 0) + 1;
  s.seconds[outcome] = (s.seconds[outcome] ?? 0) + run.seconds;
  s.last = { outcome, at, seconds: run.seconds, rows: run.rows };
  if (outcome !== 'failed') s.lastSuccessAt = at;
  writeAtomicSync(join(snapshotsDir, REFRESH_STATS_FILE), `${JSON.stringify(s)}\n`);
}
