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

/**
 * The next total-return index value: previous value times the day's growth, taken as
 * (previous value / previous close) × (Close + Dividend) × Split. The same factor,
 * grouped so that an index equal to the raw close (a provider's adjusted close on its
 * latest day) stays exactly the raw close through every day without a dividend or
 * split: returns over those days are then ratios of the prices as written, and a C1
 * tie (12.80 → 13.66, +6.71875 %) rounds as it should. Multiplying by the growth
 * factor instead drifts by an ulp a day and rounded such ties down.
 */
export function nextIndexValue(
  previousValue: number,
  close: number,
  dividend: number,
  split: number,
  previousClose: number,
): number {
  return (previousValue / previousClose) * ((close + dividend) * split);
}
