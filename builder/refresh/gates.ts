/**
 * The quality gates a refresh keeps (how far a day may move a fund, how much of the
 * universe a day and a fund list must cover) and the error a refused refresh is: the
 * live snapshot stays as it was.
 */
import { type Day, formatDay } from '../../core/dates.js';
import type { LoadedSnapshot } from '../../core/snapshot/reader.js';
import { BuildError } from '../build.js';
import type { BuildReport } from '../report/build-report.js';

export interface RefreshGates {
  /** A day whose rows move a fund by more than this share without a split is held back (default 0.5). */
  maxMove: number;
  /** A day covering fewer than this share of the live (active) funds fails the refresh (default 0.9). */
  minCoverage: number;
}

export const DEFAULT_GATES: RefreshGates = { maxMove: 0.5, minCoverage: 0.9 };

/** A refresh that must not publish; the live snapshot is unchanged. */
export class RefreshError extends BuildError {
  constructor(
    message: string,
    report: BuildReport,
    /** Whether running again later can help (the provider's data not there yet, a limit). */
    readonly retryable = false,
  ) {
    super(message, report);
    this.name = 'RefreshError';
  }
}

/**
 * A day of rows that covers fewer than `minCoverage` of the live funds (not inactive)
 * is a short delivery: publishing it would stop half the funds a day behind.
 */
export function checkCoverage(
  prev: LoadedSnapshot['columns'],
  fetched: readonly { day: Day }[],
  perDay: ReadonlyMap<Day, number>,
  minCoverage: number,
  report: BuildReport,
): void {
  let live = 0;
  for (let i = 0; i < prev.funds.length; i++) if (prev.funds.isInactive[i] === 0) live++;
  if (live === 0) return;
  for (const { day } of fetched) {
    const n = perDay.get(day) ?? 0;
    if (n < minCoverage * live)
      throw new RefreshError(
        `${formatDay(day)} has rows for ${n} of the ${live} live funds (${((n / live) * 100).toFixed(1)} %), ` +
          `under the ${(minCoverage * 100).toFixed(0)} % a day must cover: nothing published ` +
          '(a short or empty delivery? --min-coverage loosens this)',
        report,
        true,
      );
  }
}
