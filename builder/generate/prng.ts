/**
 * Seeded randomness for the synthetic universe. Every stream is a function of
 * (seed, stream, index) alone, so a fund's data does not depend on which worker
 * draws it or in which order: the property that makes output byte-identical
 * whatever the thread count.
 */

/** splitmix32 finaliser: spreads nearby inputs (fund 7, fund 8) into unrelated states. */
function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Named streams, so that adding draws to one part of the model cannot shift another. */
export const Stream = {
  universe: 1,
  metadata: 2,
  series: 3,
  rates: 4,
} as const;

const TWO_POW_32 = 4294967296;

/** xoshiro128**: small state, 32-bit integer ops only, good enough statistics for a demo. */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  /** Box–Muller makes normals in pairs; the second waits here. */
  #spare = 0;
  #hasSpare = false;

  constructor(seed: number, stream: number, index: number) {
    let s = mix32(seed ^ mix32(stream * 0x632be5ab) ^ mix32(index + 0x1234567));
    s = mix32(s + index);
    this.#a = s;
    this.#b = mix32(s + 1);
    this.#c = mix32(s + 2);
    this.#d = mix32(s + 3);
    // An all-zero state would be a fixed point.
    if ((this.#a | this.#b | this.#c | this.#d) === 0) this.#a = 1;
  }

  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.#b, 5), 7), 9) >>> 0;
    const t = this.#b << 9;
    this.#c ^= this.#a;
    this.#d ^= this.#b;
    this.#b ^= this.#c;
    this.#a ^= this.#d;
    this.#c ^= t;
    this.#d = rotl(this.#d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / TWO_POW_32;
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  range(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** Index into `weights` drawn with probability proportional to each weight. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let u = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i];
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    if (this.#hasSpare) {
      this.#hasSpare = false;
      return this.#spare;
    }
    // 1 - next() is in (0, 1], so the log is finite.
    const r = Math.sqrt(-2 * Math.log(1 - this.next()));
    const theta = 2 * Math.PI * this.next();
    this.#spare = r * Math.sin(theta);
    this.#hasSpare = true;
    return r * Math.cos(theta);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
