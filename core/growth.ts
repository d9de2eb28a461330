/**
 * The C37 daily growth factor. It lives in core because two parties must compute
 * it bit-for-bit alike: the daily append (builder) and the synthetic generator,
 * whose Adjusted_close column is the running product of these factors, so that a
 * daily append day by day equals a full build of the same data.
 */

/** (Close + Dividend) × Split / previous Close (C37). */
export function dailyGrowth(close: number, dividend: number, split: number, previousClose: number): number {
  return ((close + dividend) * split) / previousClose;
}

/** The next total-return index value: previous value times the day's growth. */
export function nextIndexValue(
  previousValue: number,
  close: number,
  dividend: number,
  split: number,
  previousClose: number,
): number {
  return previousValue * dailyGrowth(close, dividend, split, previousClose);
}
