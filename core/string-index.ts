/**
 * Exact string → small integer, in typed arrays: open addressing with linear
 * probing over [hash, value] pairs, the keys' UTF-16 code units kept alongside.
 *
 * Why not a Map: in the server, `Map.get` with a string uWS has just created
 * (a path parameter, a header value) cost about 1.5 µs per request, 12 % of a
 * single lookup's throughput, while hashing the characters here and probing
 * typed arrays cost nothing measurable (bench/reports/http.md). Keys are
 * compared unit by unit only when the full 32-bit hash matches.
 *
 * With `secret: true` the hash is seeded per process and a candidate is compared
 * in full without stopping at the first difference, so timing says nothing
 * about how much of a presented secret matched.
 */
import { randomInt } from 'node:crypto';

export interface StringIndexOptions {
  /** Keys are secrets (API tokens): random hash seed, full-length comparison. */
  secret?: boolean;
  /** Expected number of keys (the table grows past it). */
  capacity?: number;
}

const EMPTY = 0;

export class StringIndex {
  /** Pairs [hash, value + 1]; a zero value slot is empty. */
  private slots: Int32Array;
  private mask: number;
  private units: Uint16Array;
  private unitsUsed = 0;
  /** Per key id: start of its units and its length. */
  private keyStart: Int32Array;
  private keyLength: Int32Array;
  /** Per key id: the value stored for it. */
  private values: Int32Array;
  private count = 0;
  private readonly seed: number;
  private readonly secret: boolean;

  constructor(opts: StringIndexOptions = {}) {
    this.secret = opts.secret === true;
    this.seed = this.secret ? randomInt(0, 2 ** 32 - 1) | 0 : 0;
    const capacity = Math.max(8, opts.capacity ?? 8);
    const size = 2 ** Math.ceil(Math.log2(capacity * 2));
    this.slots = new Int32Array(size * 2);
    this.mask = size - 1;
    this.units = new Uint16Array(capacity * 8);
    this.keyStart = new Int32Array(capacity);
    this.keyLength = new Int32Array(capacity);
    this.values = new Int32Array(capacity);
  }

  /** An index of `keys`, each mapped to its position; a repeated key keeps its first position. */
  static of(keys: readonly string[]): StringIndex {
    const index = new StringIndex({ capacity: keys.length });
    for (let i = 0; i < keys.length; i++) if (index.get(keys[i]) < 0) index.set(keys[i], i);
    return index;
  }

  get size(): number {
    return this.count;
  }

  /** The value stored for `key`, or -1. */
  get(key: string): number {
    const h = this.hash(key);
    const slots = this.slots;
    const mask = this.mask;
    for (let p = h & mask; ; p = (p + 1) & mask) {
      const v = slots[2 * p + 1];
      if (v === EMPTY) return -1;
      if (slots[2 * p] === h && this.equals(v - 1, key)) return this.values[v - 1];
    }
  }

  /** Store a value (≥ 0) for a key, replacing any value it had. */
  set(key: string, value: number): void {
    if (!(value >= 0 && value <= 0x7ffffffe))
      throw new RangeError(`StringIndex value out of range: ${value}`);
    const h = this.hash(key);
    const mask = this.mask;
    let p = h & mask;
    for (; ; p = (p + 1) & mask) {
      const v = this.slots[2 * p + 1];
      if (v === EMPTY) break;
      if (this.slots[2 * p] === h && this.equals(v - 1, key)) {
        this.values[v - 1] = value;
        return;
      }
    }
    if ((this.count + 1) * 2 > mask + 1) {
      this.grow();
      this.set(key, value);
      return;
    }
    const id = this.addKey(key, value);
    this.slots[2 * p] = h;
    this.slots[2 * p + 1] = id + 1;
  }

  /** Forget every key (the memory stays for reuse). */
  clear(): void {
    this.slots.fill(0);
    this.count = 0;
    this.unitsUsed = 0;
  }

  private hash(key: string): number {
    // FNV-1a over UTF-16 units.
    let h = 0x811c9dc5 ^ this.seed;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    return h | 0;
  }

  private equals(id: number, key: string): boolean {
    const n = this.keyLength[id];
    if (n !== key.length) return false;
    const at = this.keyStart[id];
    const units = this.units;
    if (this.secret) {
      let diff = 0;
      for (let i = 0; i < n; i++) diff |= units[at + i] ^ key.charCodeAt(i);
      return diff === 0;
    }
    for (let i = 0; i < n; i++) if (units[at + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  private addKey(key: string, value: number): number {
    const id = this.count;
    if (id === this.values.length) {
      this.keyStart = grown(this.keyStart, id * 2);
      this.keyLength = grown(this.keyLength, id * 2);
      this.values = grown(this.values, id * 2);
    }
    if (this.unitsUsed + key.length > this.units.length) {
      const next = new Uint16Array(Math.max(this.units.length * 2, this.unitsUsed + key.length));
      next.set(this.units.subarray(0, this.unitsUsed));
      this.units = next;
    }
    for (let i = 0; i < key.length; i++) this.units[this.unitsUsed + i] = key.charCodeAt(i);
    this.keyStart[id] = this.unitsUsed;
    this.keyLength[id] = key.length;
    this.values[id] = value;
    this.unitsUsed += key.length;
    this.count++;
    return id;
  }

  private grow(): void {
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(size * 2);
    const mask = size - 1;
    for (let p = 0; p <= this.mask; p++) {
      const v = this.slots[2 * p + 1];
      if (v === EMPTY) continue;
      const h = this.slots[2 * p];
      let q = h & mask;
      while (slots[2 * q + 1] !== EMPTY) q = (q + 1) & mask;
      slots[2 * q] = h;
      slots[2 * q + 1] = v;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function grown(a: Int32Array, length: number): Int32Array {
  const next = new Int32Array(length);
  next.set(a);
  return next;
}
