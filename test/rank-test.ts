/**
 * The Mann–Whitney U test (Wilcoxon rank-sum): whether two samples come from one
 * distribution, from their ranks alone, so a timing comparison of two populations
 * measured in one run can be a test: no threshold in milliseconds, no assumption
 * about the shape of the times, and a slow moment of a loaded machine falls on both.
 * Two-sided, normal approximation with the tie and continuity corrections (what
 * scipy.stats.mannwhitneyu(method='asymptotic') gives), fine from about 20 a sample.
 */

export interface RankTest {
  /** U of the first sample: how many (x, y) pairs have x > y, ties counting a half. */
  readonly u: number;
  /** Two-sided p-value: how often samples of one distribution would differ as much. */
  readonly p: number;
}

export function mannWhitneyU(xs: readonly number[], ys: readonly number[]): RankTest {
  const n1 = xs.length;
  const n2 = ys.length;
  if (n1 === 0 || n2 === 0) throw new Error('the Mann-Whitney U test needs two non-empty samples');
  const all = [...xs.map((v) => ({ v, x: true })), ...ys.map((v) => ({ v, x: false }))].sort(
    (a, b) => a.v - b.v,
  );
  const n = n1 + n2;
  let rankSumX = 0;
  let ties = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && all[j + 1].v === all[i].v) j++;
    // Ranks i+1 .. j+1 share their average.
    const rank = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) if (all[k].x) rankSumX += rank;
    const t = j - i + 1;
    ties += t * t * t - t;
    i = j + 1;
  }
  const u = rankSumX - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1)));
  if (variance === 0) return { u, p: 1 };
  const z = Math.max(0, Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
  return { u, p: Math.min(1, erfc(z / Math.SQRT2)) };
}

/**
 * The complementary error function, with a relative error under 1.2e-7 everywhere
 * (Numerical Recipes' erfcc, a Chebyshev fit): small p-values stay exact enough to read.
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}
