/**
 * Where things live in a source directory (C35): `funds.csv`, `prices/<Code>.csv`
 * and, for daily updates (C37), `daily/<YYYY-MM-DD>.csv`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseDay } from '../../core/dates.js';
import { badCodeReason } from './funds.js';

export interface SourcePaths {
  /** `<dir>/funds.csv` (not checked for existence: reading it reports that). */
  fundsFile: string;
  /** `<dir>/prices`. */
  pricesDir: string;
  /** Code → path of `prices/<Code>.csv`, in ascending code order; empty when there is no prices folder. */
  priceFiles: Map<string, string>;
  /** Names in `prices/` that are not `<valid code>.csv` files, for the build report. */
  ignored: string[];
}

/** Entries of a folder, or none when it does not exist (any other error is real and thrown). */
function listDir(dir: string): { name: string; isFile: boolean }[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((d) => ({
      name: d.name,
      // Symlinked files are common in prepared source trees; readFile follows them.
      isFile: d.isFile() || d.isSymbolicLink(),
    }));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sourcePaths(dir: string): SourcePaths {
  const pricesDir = join(dir, 'prices');
  const found: [string, string][] = [];
  const ignored: string[] = [];
  for (const e of listDir(pricesDir)) {
    const code = e.name.endsWith('.csv') ? e.name.slice(0, -4) : '';
    if (e.isFile && code !== '' && badCodeReason(code) === null) found.push([code, join(pricesDir, e.name)]);
    else ignored.push(e.name);
  }
  found.sort((a, b) => byCodeUnits(a[0], b[0]));
  ignored.sort(byCodeUnits);
  return { fundsFile: join(dir, 'funds.csv'), pricesDir, priceFiles: new Map(found), ignored };
}

const DAILY_NAME = /^(\d{4}-\d{2}-\d{2})\.csv$/;

/**
 * `<dir>/daily/<YYYY-MM-DD>.csv` paths in date order (the name only orders files,
 * C37); other names, and impossible dates such as 2015-02-29, are ignored.
 */
export function listDailyFiles(dir: string): string[] {
  return dailyEntries(dir).files;
}

/** The daily files of `dir` in date order, and the other names in its daily/ (for the report). */
export function dailyEntries(dir: string): { files: string[]; ignored: string[] } {
  const dailyDir = join(dir, 'daily');
  const found: [number, string][] = [];
  const ignored: string[] = [];
  for (const e of listDir(dailyDir)) {
    const m = e.isFile ? DAILY_NAME.exec(e.name) : null;
    const day = m ? parseDay(m[1]) : null;
    if (day !== null) found.push([day, join(dailyDir, e.name)]);
    else ignored.push(join(dailyDir, e.name));
  }
  found.sort((a, b) => a[0] - b[0]);
  ignored.sort(byCodeUnits);
  return { files: found.map((f) => f[1]), ignored };
}
