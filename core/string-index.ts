/**
 * Exact string → small integer, in typed arrays: open addressing with linear
 * probing over 16-byte slots [hash, value + 1, k0, k1]. A short key (up to 7
 * Latin-1 characters: nearly every fund code) is packed whole into k0/k1 with its
 * length, so a lookup reads one slot and nothing else; a longer key keeps its
 * UTF-16 units alongside (k0 = its id, k1 = -1) and is compared unit by unit.
 *
 * Why not a Map: in the server, `Map.get` with a string uWS has just created
 * (a path parameter, a header value) cost about 1.5 µs per request, 12 % of a
 * single lookup's throughput, while hashing the characters here and probing
 * typed arrays cost nothing measurable (bench/reports/http.md); a batch of 100
 * codes is memory-bound, hence one slot read per short key.
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
const SLOT = 4;
/** k1 of a long key (a short key's k1 holds its length in the top byte, so is ≥ 0). */
const LONG = -1;
const SHORT_MAX = 7;
/**
 * A long key is hashed over its last units and its length only: API tokens end in
 * their random part, and hashing a whole 47-character token cost as much as the
 * full comparison that follows anyway (bench/access.bench.ts).
 */
const LONG_HASH_UNITS = 16;

export class StringIndex {
  /** [hash, value + 1, k0, k1] per slot; value + 1 = 0 is empty. */
  #slots: Int32Array;
  #mask: number;
  /** Long keys: UTF-16 units, each key's start and length by id. */
  #units: Uint16Array;
  #unitsUsed = 0;
  #keyStart: Int32Array;
  #keyLength: Int32Array;
  #longKeys = 0;
  #count = 0;
  readonly #seed: number;
  readonly #secret: boolean;
  /** The packed form of the key being looked up (k1 = LONG when it is not short). */
  #qk0 = 0;
  #qk1 = 0;

  constructor(opts: StringIndexOptions = {}) {
    this.#secret = opts.secret === true;
    this.#seed = this.#secret ? randomInt(0, 2 ** 32 - 1) | 0 : 0;
    const capacity = Math.max(8, opts.capacity ?? 8);
    const size = 2 ** Math.ceil(Math.log2(capacity * 2));
    this.#slots = new Int32Array(size * SLOT);
    this.#mask = size - 1;
    this.#units = new Uint16Array(64);
    this.#keyStart = new Int32Array(8);
    this.#keyLength = new Int32Array(8);
  }

  /** An index of `keys`, each mapped to its position; a repeated key keeps its first position. */
  static of(keys: readonly string[]): StringIndex {
    const index = new StringIndex({ capacity: keys.length });
    for (let i = 0; i < keys.length; i++) if (index.get(keys[i]) < 0) index.set(keys[i], i);
    return index;
  }

  get size(): number {
    return this.#count;
  }

  /** The value stored for `key`, or -1. */
  get(key: string): number {
    const h = this.#hashString(key);
    const p = this.#probe(h, key, null, 0, key.length);
    return p < 0 ? -1 : this.#slots[p * SLOT + 1] - 1;
  }

  /**
   * The value stored for the key whose characters are the bytes `b[start..end)`,
   * read as Latin-1 (for ASCII the same as UTF-8), or -1: a lookup straight from a
   * request body, with no string made.
   */
  getBytes(b: Uint8Array, start: number, end: number): number {
    let h = 0x811c9dc5 ^ this.#seed;
    const n = end - start;
    if (n > SHORT_MAX) {
      for (let i = n > LONG_HASH_UNITS ? end - LONG_HASH_UNITS : start; i < end; i++)
        h = Math.imul(h ^ b[i], 0x01000193);
      h = Math.imul(h ^ n, 0x01000193);
      this.#qk1 = LONG;
    } else {
      let k0 = 0;
      let k1 = 0;
      for (let i = 0; i < n; i++) {
        const c = b[start + i];
        h = Math.imul(h ^ c, 0x01000193);
        if (i < 4) k0 |= c << (8 * i);
        else k1 |= c << (8 * (i - 4));
      }
      this.#qk0 = k0;
      this.#qk1 = k1 | (n << 24);
    }
    const p = this.#probe(h | 0, null, b, start, n);
    return p < 0 ? -1 : this.#slots[p * SLOT + 1] - 1;
  }

  /** Store a value (≥ 0) for a key, replacing any value it had. */
  set(key: string, value: number): void {
    if (!(value >= 0 && value <= 0x7ffffffe))
      throw new RangeError(`StringIndex value out of range: ${value}`);
    const h = this.#hashString(key);
    const found = this.#probe(h, key, null, 0, key.length);
    if (found >= 0) {
      this.#slots[found * SLOT + 1] = value + 1;
      return;
    }
    if ((this.#count + 1) * 2 > this.#mask + 1) this.#grow();
    const slots = this.#slots;
    const mask = this.#mask;
    let p = h & mask;
    while (slots[p * SLOT + 1] !== EMPTY) p = (p + 1) & mask;
    const at = p * SLOT;
    slots[at] = h;
    slots[at + 1] = value + 1;
    if (this.#qk1 !== LONG) {
      slots[at + 2] = this.#qk0;
      slots[at + 3] = this.#qk1;
    } else {
      slots[at + 2] = this.#addLongKey(key);
      slots[at + 3] = LONG;
    }
    this.#count++;
  }

  /** Forget every key (the memory stays for reuse). */
  clear(): void {
    this.#slots.fill(0);
    this.#count = 0;
    this.#unitsUsed = 0;
    this.#longKeys = 0;
  }

  /**
   * FNV-1a over UTF-16 units (a long key's last LONG_HASH_UNITS and its length); also
   * packs the key into qk0/qk1 when it is short.
   */
  #hashString(key: string): number {
    let h = 0x811c9dc5 ^ this.#seed;
    const n = key.length;
    if (n > SHORT_MAX) {
      // A long key (a token): just the hash, in a tight loop.
      for (let i = n > LONG_HASH_UNITS ? n - LONG_HASH_UNITS : 0; i < n; i++)
        h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
      this.#qk1 = LONG;
      return Math.imul(h ^ n, 0x01000193) | 0;
    }
    let k0 = 0;
    let k1 = 0;
    let latin1 = true;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      h = Math.imul(h ^ c, 0x01000193);
      if (c > 0xff) latin1 = false;
      if (i < 4) k0 |= c << (8 * i);
      else if (i < SHORT_MAX) k1 |= c << (8 * (i - 4));
    }
    this.#qk0 = k0;
    this.#qk1 = latin1 ? k1 | (n << 24) : LONG;
    return h | 0;
  }

  /** Slot of the key (a string, or bytes b[start..start+n)) packed in qk0/qk1, or -1. */
  #probe(h: number, key: string | null, b: Uint8Array | null, start: number, n: number): number {
    const slots = this.#slots;
    const mask = this.#mask;
    const qk0 = this.#qk0;
    const qk1 = this.#qk1;
    for (let p = h & mask; ; p = (p + 1) & mask) {
      const at = p * SLOT;
      if (slots[at + 1] === EMPTY) return -1;
      if (slots[at] !== h || slots[at + 3] !== qk1) continue;
      if (qk1 !== LONG) {
        if (slots[at + 2] === qk0) return p;
        continue;
      }
      if (this.#longEquals(slots[at + 2], key, b, start, n)) return p;
    }
  }

  #longEquals(id: number, key: string | null, b: Uint8Array | null, start: number, n: number): boolean {
    if (this.#keyLength[id] !== n) return false;
    const at = this.#keyStart[id];
    const units = this.#units;
    let diff = 0;
    if (key !== null) {
      // In secret mode the whole key is compared whatever differs first.
      if (this.#secret) for (let i = 0; i < n; i++) diff |= units[at + i] ^ key.charCodeAt(i);
      else for (let i = 0; i < n && diff === 0; i++) diff = units[at + i] ^ key.charCodeAt(i);
    } else if (b !== null) {
      if (this.#secret) for (let i = 0; i < n; i++) diff |= units[at + i] ^ b[start + i];
      else for (let i = 0; i < n && diff === 0; i++) diff = units[at + i] ^ b[start + i];
    }
    return diff === 0;
  }

  #addLongKey(key: string): number {
    const id = this.#longKeys++;
    if (id === this.#keyStart.length) {
      this.#keyStart = grown(this.#keyStart, id * 2);
      this.#keyLength = grown(this.#keyLength, id * 2);
    }
    if (this.#unitsUsed + key.length > this.#units.length) {
      const next = new Uint16Array(Math.max(this.#units.length * 2, this.#unitsUsed + key.length));
      next.set(this.#units.subarray(0, this.#unitsUsed));
      this.#units = next;
    }
    for (let i = 0; i < key.length; i++) this.#units[this.#unitsUsed + i] = key.charCodeAt(i);
    this.#keyStart[id] = this.#unitsUsed;
    this.#keyLength[id] = key.length;
    this.#unitsUsed += key.length;
    return id;
  }

  #grow(): void {
    const size = (this.#mask + 1) * 2;
    const slots = new Int32Array(size * SLOT);
    const mask = size - 1;
    for (let p = 0; p <= this.#mask; p++) {
      const at = p * SLOT;
      if (this.#slots[at + 1] === EMPTY) continue;
      let q = this.#slots[at] & mask;
      while (slots[q * SLOT + 1] !== EMPTY) q = (q + 1) & mask;
      slots.set(this.#slots.subarray(at, at + SLOT), q * SLOT);
    }
    this.#slots = slots;
    this.#mask = mask;
  }
}

function grown(a: Int32Array, length: number): Int32Array {
  const next = new Int32Array(length);
  next.set(a);
  return next;
}
