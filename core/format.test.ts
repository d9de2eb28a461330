import { describe, expect, it } from 'vitest';
import { formatPercent, PERCENT_JSON_MAX, percentJson, writePercentJson } from './format.js';

const SPEC_REGEX = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;

describe('C1 percent strings', () => {
  it('prints exactly 4 decimal places', () => {
    expect(formatPercent(12.3456)).toBe('12.3456');
    expect(formatPercent(1)).toBe('1.0000');
    expect(formatPercent(-3.2)).toBe('-3.2000');
  });

  it('rounds an exact tie half away from zero (C1)', () => {
    // 0.03125 = 2^-5 is exact in binary, so it is a true tie at 4 places.
    expect(formatPercent(0.03125)).toBe('0.0313');
    expect(formatPercent(-0.03125)).toBe('-0.0313');
    expect(formatPercent(2.00015625)).toBe('2.0002');
  });

  it('rounds the double exact value, not its shortest decimal form (C1)', () => {
    // 2.00005 is stored as 2.0000499999999998834...: below the tie.
    expect(formatPercent(2.00005)).toBe('2.0000');
    // 0.00015 is stored as 0.0001499999999999999868...: below the tie.
    expect(formatPercent(0.00015)).toBe('0.0001');
    // 1.00005 is stored as 1.0000500000000001055...: above the tie.
    expect(formatPercent(1.00005)).toBe('1.0001');
  });

  it('prints negative zero and tiny negatives as 0.0000 (C1)', () => {
    expect(formatPercent(-0)).toBe('0.0000');
    expect(formatPercent(-0.00001)).toBe('0.0000');
  });

  it('absent figures are null (C1)', () => {
    expect(formatPercent(Number.NaN)).toBeNull();
    expect(formatPercent(Number.POSITIVE_INFINITY)).toBeNull();
  });

  it('huge figures stay plain decimals matching SPEC regex', () => {
    const s = formatPercent(1e22)!;
    expect(s).toBe('10000000000000000000000.0000');
    expect(s).toMatch(SPEC_REGEX);
  });

  it('the fast path agrees with exact rounding on random values and near-ties (C1)', () => {
    const exact = (x: number) => {
      const t = x.toFixed(4);
      return t === '-0.0000' ? '0.0000' : t;
    };
    for (let i = 0; i < 200_000; i++) {
      const x = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 9 - 3);
      expect(formatPercent(x)).toBe(exact(x));
    }
    // Values within a hair of a tie go to the exact path.
    for (let i = 0; i < 20_000; i++) {
      const tie = (Math.floor(Math.random() * 2e6) - 1e6 + 0.5) / 10000;
      for (const x of [tie, tie + 1e-12, tie - 1e-12, tie * (1 + 2 ** -52), tie * (1 - 2 ** -52)]) {
        expect(formatPercent(x)).toBe(exact(x));
      }
    }
  });

  it('every output matches SPEC regex and C1 shape', () => {
    for (let i = 0; i < 10_000; i++) {
      const x = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 8);
      const s = formatPercent(x)!;
      expect(s).toMatch(SPEC_REGEX);
      expect(s).toMatch(/^-?\d+\.\d{4}$/);
    }
  });

  it('the byte form writes exactly percentJson, within PERCENT_JSON_MAX bytes (C1)', () => {
    const b = new Uint8Array(PERCENT_JSON_MAX + 8);
    const check = (x: number) => {
      b.fill(0x7e);
      const end = writePercentJson(b, 3, x);
      expect(Buffer.from(b.subarray(3, end)).toString('latin1'), String(x)).toBe(percentJson(x));
      expect(end - 3).toBeLessThanOrEqual(PERCENT_JSON_MAX);
      // Nothing is written past the end it reports.
      expect(b[end]).toBe(0x7e);
    };
    for (const x of [0, -0, 1e-9, -1e-9, 0.03125, -0.03125, 99999.99994, -99999.99996, 1e5, 1e21, -1e22])
      check(x);
    for (const x of [Number.NaN, Number.POSITIVE_INFINITY, -Number.MAX_VALUE, Number.MAX_VALUE]) check(x);
    for (let i = 0; i < 50_000; i++) check((Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 14 - 3));
  });
});
