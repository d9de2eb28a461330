/**
 * A price change as a percent, exact where C1's rounding needs it.
 *
 * Prices arrive as decimals ("19.20", "19.29", "8.064868658634367"), and C1 rounds
 * the figure half away from zero. In doubles, (19.29 / 19.20 − 1) · 100 is
 * 0.468749999999995559, just under the exact tie +0.46875 %, so rounding the double
 * prints "0.4687" where exact arithmetic on the prices prints "0.4688". Only a figure
 * within a hair of a tie can be misrounded this way, so only such a figure (about one
 * in 500,000 of random ones, more where prices are round numbers) is recomputed here
 * exactly, from each price's shortest round-trip decimal: the number the source
 * file wrote, whenever it wrote at most 15 significant digits or a double's shortest
 * form (what JavaScript and Python print).
 */

/** Within this much of .5 (in 10^-4 % units) the double may sit on the wrong side of a tie. */
const NEAR_TIE = 1e-6;

/**
 * (end / base − 1) · 100: a C1 figure, exactly rounded to 4 places when it lies near
 * a tie; absent (NaN, C1's null) when it is too large for a double.
 */
export function percentChange(end: number, base: number): number {
  const x = (end / base - 1) * 100;
  if (x === Number.POSITIVE_INFINITY) return Number.NaN;
  const u = x * 10000;
  const f = u - Math.floor(u);
  // |u| < 1e9 bounds the error of u itself below 1.2e-7 (see format.ts).
  if (f > 0.5 - NEAR_TIE && f < 0.5 + NEAR_TIE && u < 1e9 && u > -1e9) return exactRounded(end, base);
  return x;
}

/**
 * The figure rounded to 4 places by C1 on the prices' decimal values, as the double
 * of that 4-place decimal (which C1 formatting prints as it is).
 */
function exactRounded(end: number, base: number): number {
  const [e, ee] = decimalOf(end);
  const [b, eb] = decimalOf(base);
  if (b === 0n) return Number.NaN;
  // x = (e·10^ee / (b·10^eb) − 1)·100 = num / den, den > 0.
  const d = ee - eb;
  const num = d >= 0 ? (e * 10n ** BigInt(d) - b) * 100n : (e - b * 10n ** BigInt(-d)) * 100n;
  const den = d >= 0 ? b : b * 10n ** BigInt(-d);
  // Units of 10^-4, rounded half away from zero.
  const neg = num < 0n;
  const scaled = (neg ? -num : num) * 10000n;
  let units = scaled / den;
  if ((scaled % den) * 2n >= den) units++;
  return Number(neg ? -units : units) / 10000;
}

/** A finite positive double's shortest round-trip decimal, as digits · 10^exponent. */
function decimalOf(x: number): [bigint, number] {
  const s = String(x);
  let mantissa = s;
  let exponent = 0;
  const e = s.indexOf('e');
  if (e >= 0) {
    mantissa = s.slice(0, e);
    exponent = Number(s.slice(e + 1));
  }
  const dot = mantissa.indexOf('.');
  if (dot >= 0) {
    exponent -= mantissa.length - dot - 1;
    mantissa = mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  }
  return [BigInt(mantissa), exponent];
}
