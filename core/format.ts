/**
 * C1: a percent figure as a decimal string with exactly 4 places, rounded half away
 * from zero on the double's exact value, "-0.0000" printed as "0.0000", null for
 * absent figures (NaN).
 */

/**
 * `Number.prototype.toFixed` already rounds the exact binary value and breaks ties
 * towards the larger magnitude (it formats |x| and prefixes the sign), which is
 * C1's rule; multiplying by 10^4 and rounding would add a second rounding error.
 */
export function formatPercent(x: number): string | null {
  if (!Number.isFinite(x)) return null;
  if (Math.abs(x) >= 1e21) {
    // toFixed switches to exponent form here; C1 wants plain digits.
    return `${BigInt(Math.round(x)).toString()}.0000`;
  }
  const s = x.toFixed(4);
  return s === '-0.0000' ? '0.0000' : s;
}

/** The same figure as a JSON value: a quoted string, or null. */
export function percentJson(x: number): string {
  const s = formatPercent(x);
  return s === null ? 'null' : `"${s}"`;
}
