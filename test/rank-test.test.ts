import { describe, expect, it } from 'vitest';
import { erfc, mannWhitneyU, median } from './rank-test.js';

// Reference values from scipy 1.17 (mannwhitneyu, method='asymptotic', two-sided; math.erfc).
describe('the Mann–Whitney U test used by the timing tests', () => {
  it('gives scipy’s U and p for samples with ties', () => {
    const x = [1.1, 2.2, 3.3, 4.4, 5.5, 2.2, 7.7, 8.8, 9.9, 3.3];
    const y = [2.5, 3.5, 2.2, 6.6, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 1.0, 4.4];
    const r = mannWhitneyU(x, y);
    expect(r.u).toBe(43.5);
    expect(r.p).toBeCloseTo(0.29060266796900924, 6);
  });

  it('two samples that do not overlap at all: a tiny p, read to its magnitude', () => {
    const a = Array.from({ length: 50 }, (_, i) => i);
    const b = a.map((i) => i + 100);
    const r = mannWhitneyU(a, b);
    expect(r.u).toBe(0);
    expect(r.p / 7.066071930388932e-18).toBeCloseTo(1, 5);
    // Symmetric: the other way round, U is the complement and p the same.
    expect(mannWhitneyU(b, a).u).toBe(2500);
    expect(mannWhitneyU(b, a).p).toBe(r.p);
  });

  it('interleaved samples: a large p', () => {
    const c = Array.from({ length: 30 }, (_, i) => (i * 7) % 13);
    const d = Array.from({ length: 30 }, (_, i) => ((i * 5) % 13) + 0.5);
    const r = mannWhitneyU(c, d);
    expect(r.u).toBe(413);
    expect(r.p).toBeCloseTo(0.5891923656275637, 6);
    expect(mannWhitneyU([1, 1, 1], [1, 1, 1]).p).toBe(1);
  });

  it('erfc to 1.2e-7 relative, far into the tail; median of odd and even counts', () => {
    expect(erfc(3) / 2.2090496998585438e-5).toBeCloseTo(1, 6);
    expect(erfc(-1.2)).toBeCloseTo(1.9103139782296354, 7);
    expect(erfc(6) / 2.1519736712498916e-17).toBeCloseTo(1, 6);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
