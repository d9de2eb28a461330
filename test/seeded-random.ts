/**
 * A small seeded generator (mulberry32) for tests and benchmarks that need the same
 * "random" inputs on every run. The product's own generator is builder/generate/prng.ts.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element of `xs`, drawn with `rand`. */
export function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)];
}

/** 0 to `max − 1` elements of `pieces`, drawn with `rand` and joined: inputs for comparing two parsers. */
export function randomJoin(rand: () => number, pieces: readonly string[], max: number): string {
  let s = '';
  const n = Math.floor(rand() * max);
  for (let k = 0; k < n; k++) s += pick(rand, pieces);
  return s;
}
