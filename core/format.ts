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
  // Fast path. |x·10^4| < 1e9 is computed with an error below 1.2e-7, so unless it
  // lies within 1e-6 of a .5 tie its nearest integer is that of the exact value;
  // integer formatting then avoids toFixed's arbitrary-precision work.
  const r = x * 10000;
  const a = r < 0 ? -r : r;
  if (a < 1e9) {
    const floor = Math.floor(a);
    const frac = a - floor;
    if (frac < 0.499999 || frac > 0.500001) {
      const n = frac > 0.5 ? floor + 1 : floor;
      if (n === 0) return '0.0000';
      const whole = Math.floor(n / 10000);
      const dec = n - whole * 10000;
      const decimals = dec < 10 ? `000${dec}` : dec < 100 ? `00${dec}` : dec < 1000 ? `0${dec}` : `${dec}`;
      return r < 0 ? `-${whole}.${decimals}` : `${whole}.${decimals}`;
    }
  }
  return slowFormat(x);
}

/** Exact formatting for near-ties and huge values. */
function slowFormat(x: number): string {
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
