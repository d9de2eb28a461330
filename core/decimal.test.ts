import { describe, expect, it } from 'vitest';
import { seededRandom } from '../test/seeded-random.js';
import { percentChange } from './decimal.js';
import { formatPercent } from './format.js';

/** The C1 string of (end / base − 1) · 100 in exact arithmetic, prices as integers at one scale. */
function exact(end: bigint, base: bigint): string {
  const num = (end - base) * 1_000_000n;
  const neg = num < 0n;
  const abs = neg ? -num : num;
  let units = abs / base;
  if ((abs % base) * 2n >= base) units++;
  if (units === 0n) return '0.0000';
  const t = units.toString().padStart(5, '0');
  return `${neg ? '-' : ''}${t.slice(0, -4)}.${t.slice(-4)}`;
}

/** True when the exact figure is a tie at 4 places. */
function isTie(end: bigint, base: bigint): boolean {
  const twice = (end - base) * 2_000_000n;
  return twice % base === 0n && (twice / base) % 2n !== 0n;
}

describe('percentChange: C1 ties of decimal prices', () => {
  it('19.20 → 19.29 is exactly +0.46875 % and prints 0.4688; 19.20 → 19.11 prints -0.4688 (C1)', () => {
    // The double (19.29 / 19.2 − 1) · 100 is 0.468749999999995559.
    expect(formatPercent((19.29 / 19.2 - 1) * 100)).toBe('0.4687');
    expect(formatPercent(percentChange(19.29, 19.2))).toBe('0.4688');
    expect(formatPercent(percentChange(19.11, 19.2))).toBe('-0.4688');
    expect(formatPercent(percentChange(100.00005, 100))).toBe('0.0001');
  });

  it('a near tie of long decimals keeps its side (C1)', () => {
    // Exactly -1.0937499999999719…: two adjusted closes whose closes (6.33, 6.40) tie.
    expect(formatPercent(percentChange(8.064868658634367, 8.154053620104255))).toBe('-1.0937');
  });

  it('equals exact arithmetic on prices with 2 to 6 decimals, ties included (C1)', () => {
    const rand = seededRandom(5);
    const pairs: Array<[bigint, bigint, number]> = [];
    for (let i = 0; i < 50_000; i++) {
      const places = 2 + Math.floor(rand() * 5);
      const base = 100 + Math.floor(rand() * 10 ** (places + 2));
      const end = Math.max(1, base + Math.floor((rand() - 0.5) * base * 0.4));
      pairs.push([BigInt(end), BigInt(base), places]);
    }
    // Ties need a base of 2^a·5^b (or a change sharing its factors): 19.20, 12.80, 31.25 …
    for (const base of [1920n, 1280n, 3125n, 1600n, 2048n, 4000n, 6250n, 512n, 78125n, 15625n])
      for (let d = -400n; d <= 400n; d++) if (isTie(base + d, base)) pairs.push([base + d, base, 2]);
    let ties = 0;
    for (const [end, base, places] of pairs) {
      if (isTie(end, base)) ties++;
      const scale = 10 ** places;
      const e = Number(end) / scale;
      const b = Number(base) / scale;
      expect(formatPercent(percentChange(e, b)), `${e} / ${b}`).toBe(exact(end, base));
    }
    expect(ties).toBeGreaterThan(200);
  });

  it('away from ties is the plain double (C6)', () => {
    const rand = seededRandom(8);
    for (let i = 0; i < 100_000; i++) {
      const b = 1 + rand() * 1000;
      const e = b * (0.5 + rand());
      const x = (e / b - 1) * 100;
      const f = Math.abs(x * 10000) % 1;
      if (Math.abs(f - 0.5) > 1e-5) expect(percentChange(e, b)).toBe(x);
    }
  });
});
