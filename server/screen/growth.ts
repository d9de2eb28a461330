/**
 * Growth of 10,000 (C55): the value of 10,000 invested at a fund's first
 * observation on or after `from`, at the start and at each interval's last
 * observation up to `to`, the last observation on or before `to` always closing
 * the series. Values are total-return index ratios, so dividends are reinvested.
 */
import { type Day, toYmd, weekday } from '../../core/dates.js';
import { lastIndexOnOrBefore } from '../../core/returns.js';
import type { Series } from '../../core/types.js';
import type { GrowthInterval } from '../../schemas/screen.js';
import { GROWTH_START_VALUE } from '../../schemas/screen.js';

/** The ISO week (Monday first) or calendar month a day falls in, as one number. */
function periodOf(interval: GrowthInterval, day: Day): number {
  if (interval === 'day') return day;
  if (interval === 'week') return day - ((weekday(day) + 6) % 7);
  const { y, m } = toYmd(day);
  return y * 12 + m;
}

/**
 * The series indices of the points between `from` and `to` (null: the series' ends),
 * or null when the fund has no observation in that range.
 */
export function growthPoints(
  s: Series,
  from: Day | null,
  to: Day | null,
  interval: GrowthInterval,
): number[] | null {
  const end = to === null ? s.start + s.length - 1 : lastIndexOnOrBefore(s, to);
  let start = s.start;
  if (from !== null) {
    const before = lastIndexOnOrBefore(s, from - 1);
    start = before < 0 ? s.start : before + 1;
  }
  if (end < 0 || start > end) return null;
  const at = [start];
  for (let j = start + 1; j <= end; j++) {
    if (j === end || periodOf(interval, s.date[j]) !== periodOf(interval, s.date[j + 1])) at.push(j);
  }
  return at;
}

/** A value of the series as worth `GROWTH_START_VALUE` at the start, 2 decimals. */
export function growthValue(s: Series, start: number, j: number): string {
  return ((GROWTH_START_VALUE * s.value[j]) / s.value[start]).toFixed(2);
}
