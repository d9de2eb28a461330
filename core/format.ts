/**
 * C1: a percent figure as a decimal string with exactly 4 places, rounded half away
 * from zero on the double's exact value, "-0.0000" printed as "0.0000", null for
 * absent figures (NaN). A price change that is a tie of its prices' decimals
 * arrives here already exact (core/decimal.ts).
 */

/**
 * `Number.prototype.toFixed` already rounds the exact binary value and breaks ties
 * towards the larger magnitude (it formats |x| and prefixes the sign), which is
 * C1's rule; multiplying by 10^4 and rounding would add a second rounding error.
 */
export function formatPercent(x: number): string | null {
  if (!Number.isFinite(x)) return null;
  const n = roundedUnits(x);
  if (Number.isNaN(n)) return slowFormat(x);
  if (n === 0) return '0.0000';
  const a = n < 0 ? -n : n;
  const whole = Math.floor(a / 10000);
  const dec = a - whole * 10000;
  const decimals = dec < 10 ? `000${dec}` : dec < 100 ? `00${dec}` : dec < 1000 ? `0${dec}` : `${dec}`;
  return n < 0 ? `-${whole}.${decimals}` : `${whole}.${decimals}`;
}

/**
 * A finite x rounded to whole 10^-4 units by C1 (an integer, its sign kept), or
 * NaN when only exact formatting can tell. |x·10^4| < 1e9 is computed with an
 * error below 1.2e-7, so unless it lies within 1e-6 of a .5 tie its nearest
 * integer is that of the exact value; integer formatting then avoids toFixed's
 * arbitrary-precision work. Both the string and the byte form round here.
 */
function roundedUnits(x: number): number {
  const r = x * 10000;
  const a = r < 0 ? -r : r;
  if (a >= 1e9) return Number.NaN;
  const floor = Math.floor(a);
  const frac = a - floor;
  if (frac >= 0.499999 && frac <= 0.500001) return Number.NaN;
  const n = frac > 0.5 ? floor + 1 : floor;
  // -0 rounds to 0: C1 prints no negative zero.
  return r < 0 && n !== 0 ? -n : n;
}

/**
 * A finite x as C1 prints it, in whole 10^-4 units (an integer, exact below 2^53
 * units); NaN for NaN. What a screen compares and sorts on: the figure as served.
 */
export function c1Units(x: number): number {
  if (!Number.isFinite(x)) return Number.NaN;
  const n = roundedUnits(x);
  return Number.isNaN(n) ? Math.round(Number(slowFormat(x)) * 10000) : n;
}

/**
 * The most bytes `writePercentJson` can write: exact formatting of the largest
 * double, 309 digits, a sign, ".0000" and the quotes (below 10^21 toFixed prints at
 * most 21 digits).
 */
export const PERCENT_JSON_MAX = 317;

/**
 * `percentJson(x)` written as ASCII bytes at `b[at]`, with PERCENT_JSON_MAX bytes of
 * room; returns the end.
 */
export function writePercentJson(b: Uint8Array, at: number, x: number): number {
  if (!Number.isFinite(x)) return writeAscii(b, at, 'null');
  const n = roundedUnits(x);
  if (Number.isNaN(n)) return writeAscii(b, at, `"${slowFormat(x)}"`);
  let p = at;
  b[p++] = 0x22;
  let a = n;
  if (n < 0) {
    b[p++] = 0x2d;
    a = -n;
  }
  // |n| < 1e9 here, so int32 arithmetic throughout.
  const whole = (a / 10000) | 0;
  const dec = a - whole * 10000;
  if (whole < 10) b[p++] = 0x30 + whole;
  else p = writeUint(b, p, whole);
  const d01 = (dec / 100) | 0;
  const d23 = dec - d01 * 100;
  const d0 = (d01 / 10) | 0;
  const d2 = (d23 / 10) | 0;
  b[p] = 0x2e;
  b[p + 1] = 0x30 + d0;
  b[p + 2] = 0x30 + d01 - d0 * 10;
  b[p + 3] = 0x30 + d2;
  b[p + 4] = 0x30 + d23 - d2 * 10;
  b[p + 5] = 0x22;
  return p + 6;
}

/**
 * A non-negative safe integer in decimal digits at b[at]; returns the end. Digits
 * are counted first, then written from the right; values below 2^31 stay in int32
 * arithmetic.
 */
export function writeUint(b: Uint8Array, at: number, v: number): number {
  let x = v;
  let digits = 1;
  for (let p = 10; p <= x; p *= 10) digits++;
  const end = at + digits;
  let k = end;
  if (x <= 0x7fffffff) {
    let y = x | 0;
    do {
      const q = (y / 10) | 0;
      b[--k] = 48 + y - q * 10;
      y = q;
    } while (y > 0);
  } else {
    do {
      b[--k] = 48 + (x % 10);
      x = Math.floor(x / 10);
    } while (x > 0);
  }
  return end;
}

/** An ASCII string's bytes (the caller knows it is ASCII); returns the end. */
function writeAscii(b: Uint8Array, at: number, s: string): number {
  for (let k = 0; k < s.length; k++) b[at + k] = s.charCodeAt(k);
  return at + s.length;
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
