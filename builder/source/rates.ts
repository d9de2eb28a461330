/**
 * The risk-free rate's source file (C41): `rates/US3M.csv`, the 3-month US Treasury
 * bill yield in percent as the adjusted close of a price file in any dialect prices
 * are read in (C35). Optional: without it Sharpe and Sortino are null.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { RateColumns } from '../../core/snapshot/columns.js';
import type { BuildReport } from '../report/build-report.js';
import { parsePriceFile } from './prices.js';

/** Where the rates file lives in a source directory. */
export const RATES_PATH = join('rates', 'US3M.csv');

export const NO_RATES: RateColumns = { date: new Int32Array(0), yield: new Float64Array(0) };

/**
 * The rates in `source`, bad rows skipped and reported as a price file's are (C36);
 * null when the source has no rates file (an append then keeps the snapshot's).
 */
export function readRates(source: string, report: BuildReport): RateColumns | null {
  const path = join(source, RATES_PATH);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
  const parsed = parsePriceFile(bytes, relative(source, path), 'US3M', undefined, true);
  for (const p of parsed.problems) report.add(p);
  report.dataRows += parsed.dataRows;
  return { date: parsed.dates, yield: parsed.values };
}
