/**
 * The index FundSearch walks (search.ts), built once per snapshot: the distinct 1-, 2-
 * and 3-grams (UTF-16 units) of each fund's lower-cased code and, separately, its
 * lower-cased name, and the type, country and exchange filters, each as a list of fund
 * indices in ascending order (a sorted run of `postings`, or a bitset in `bits` when
 * dense). Built in two passes over the funds: the first assigns and counts the lists,
 * the second fills them.
 */
import type { FundColumns } from '../../core/snapshot/columns.js';

export interface SearchIndex extends FilterLists {
  count: number;
  codes: string[];
  lowerCode: string[];
  /** '' for a null name: it then matches nothing a non-empty q asks for. */
  lowerName: string[];
  /** Gram → list id; gram lists come first, then filter lists. */
  grams: GramTable;
  listCount: Int32Array;
  /**
   * A list with more than F/32 members is a bitset (F/8 bytes beats 4 bytes a member
   * there): its words are bits[bitsStart[l] ..], and sparseStart[l] is -1. Otherwise it
   * is postings[sparseStart[l] .. + listCount[l]). Dense lists hold most of the members
   * of a name index (common letters, "in", "und"), so this cuts memory about 3×.
   */
  sparseStart: Int32Array;
  bitsStart: Int32Array;
  postings: Int32Array;
  bits: Int32Array;
}

export function buildSearchIndex(funds: FundColumns): SearchIndex {
  const F = funds.length;
  const lowerCode: string[] = new Array(F);
  const lowerName: string[] = new Array(F);
  for (let i = 0; i < F; i++) {
    lowerCode[i] = funds.code[i].toLowerCase();
    lowerName[i] = funds.name[i]?.toLowerCase() ?? '';
  }
  const pass1 = internGrams(lowerCode, lowerName);
  const G = pass1.grams.size;
  const filters = filterLists(funds, G);
  const layout = layoutLists(F, G, pass1.counts, filters.counts);
  const { postings, bits } = fillLists(F, pass1, filters, layout);
  return {
    count: F,
    codes: funds.code,
    lowerCode,
    lowerName,
    grams: pass1.grams,
    listCount: layout.listCount,
    sparseStart: layout.sparseStart,
    bitsStart: layout.bitsStart,
    postings,
    bits,
    typeLists: filters.typeLists,
    countryLists: filters.countryLists,
    exchangeLists: filters.exchangeLists,
    typeOf: filters.typeOf,
    countryOf: filters.countryOf,
    exchangeOf: filters.exchangeOf,
  };
}

interface GramPass {
  grams: GramTable;
  /** Funds per gram id. */
  counts: Int32Array;
  /** Each fund's distinct gram ids: fund i's end at fundGramEnd[i]. */
  fundGrams: Int32Array;
  fundGramEnd: Int32Array;
}

/**
 * Pass 1: assign gram ids, count each fund once per gram, and remember each fund's
 * distinct gram ids so pass 2 need not hash every gram again.
 */
function internGrams(lowerCode: string[], lowerName: string[]): GramPass {
  const F = lowerCode.length;
  const grams = new GramTable(1 << 14);
  let counts: Int32Array = new Int32Array(1 << 14);
  let lastFund: Int32Array = new Int32Array(1 << 14).fill(-1);
  // About a hundred distinct grams per fund for typical names; grown if not enough.
  let fundGrams: Int32Array = new Int32Array(Math.max(1024, F * 128));
  let used = 0;
  const fundGramEnd = new Int32Array(F);
  for (let i = 0; i < F; i++) {
    for (let t = 0; t < 2; t++) {
      const s = t === 0 ? lowerCode[i] : lowerName[i];
      for (let n = 1; n <= 3; n++) {
        for (let at = 0; at + n <= s.length; at++) {
          const id = grams.intern(s, at, n);
          if (id === counts.length) {
            counts = grow(counts, 0);
            lastFund = grow(lastFund, -1);
          }
          if (lastFund[id] === i) continue;
          lastFund[id] = i;
          counts[id]++;
          if (used === fundGrams.length) fundGrams = grow(fundGrams, 0);
          fundGrams[used++] = id;
        }
      }
    }
    fundGramEnd[i] = used;
  }
  return { grams, counts, fundGrams, fundGramEnd };
}

/** The filters' lists by value, and each fund's list per filter. */
interface FilterLists {
  typeLists: Map<string, number>;
  countryLists: Map<string, number>;
  exchangeLists: Map<string, number>;
  /** Per fund, the list id of its type / country / exchange; -1 for null. */
  typeOf: Int32Array;
  countryOf: Int32Array;
  exchangeOf: Int32Array;
}

interface Filters extends FilterLists {
  /** Funds per filter list, list id minus G. */
  counts: number[];
}

/** A list id for each distinct type, country and exchange, after the G gram lists. */
function filterLists(funds: FundColumns, G: number): Filters {
  const F = funds.length;
  const out: Filters = {
    typeLists: new Map(),
    countryLists: new Map(),
    exchangeLists: new Map(),
    typeOf: new Int32Array(F),
    countryOf: new Int32Array(F),
    exchangeOf: new Int32Array(F),
    counts: [],
  };
  const filterCounts = out.counts;
  const assign = (lists: Map<string, number>, values: (string | null)[], of: Int32Array) => {
    for (let i = 0; i < F; i++) {
      const v = values[i];
      if (v === null) {
        of[i] = -1;
        continue;
      }
      let id = lists.get(v);
      if (id === undefined) {
        id = G + filterCounts.length;
        lists.set(v, id);
        filterCounts.push(0);
      }
      of[i] = id;
      filterCounts[id - G]++;
    }
  };
  assign(out.typeLists, funds.type, out.typeOf);
  assign(out.countryLists, funds.country, out.countryOf);
  assign(out.exchangeLists, funds.exchange, out.exchangeOf);
  return out;
}

interface Layout {
  listCount: Int32Array;
  sparseStart: Int32Array;
  bitsStart: Int32Array;
  sparseTotal: number;
  denseTotal: number;
}

/** Where each list lives: a run of postings, or F/32 words of bits when dense. */
function layoutLists(F: number, G: number, counts: Int32Array, filterCounts: number[]): Layout {
  const L = G + filterCounts.length;
  const words = (F + 31) >>> 5;
  const listCount = new Int32Array(L);
  const sparseStart = new Int32Array(L).fill(-1);
  const bitsStart = new Int32Array(L).fill(-1);
  let sparseTotal = 0;
  let denseTotal = 0;
  for (let l = 0; l < L; l++) {
    const c = l < G ? counts[l] : filterCounts[l - G];
    listCount[l] = c;
    if (c * 32 > F) {
      bitsStart[l] = denseTotal;
      denseTotal += words;
    } else {
      sparseStart[l] = sparseTotal;
      sparseTotal += c;
    }
  }
  return { listCount, sparseStart, bitsStart, sparseTotal, denseTotal };
}

/** Pass 2: funds in ascending order, so every sparse list comes out sorted. */
function fillLists(F: number, pass1: GramPass, filters: Filters, layout: Layout) {
  const { fundGrams, fundGramEnd } = pass1;
  const { typeOf, countryOf, exchangeOf } = filters;
  const { sparseStart, bitsStart } = layout;
  const postings = new Int32Array(layout.sparseTotal);
  const bits = new Int32Array(layout.denseTotal);
  const fill = sparseStart.slice();
  const add = (l: number, i: number) => {
    if (fill[l] >= 0) postings[fill[l]++] = i;
    else bits[bitsStart[l] + (i >>> 5)] |= 1 << (i & 31);
  };
  let k = 0;
  for (let i = 0; i < F; i++) {
    for (const end = fundGramEnd[i]; k < end; k++) add(fundGrams[k], i);
    add(typeOf[i], i);
    if (countryOf[i] >= 0) add(countryOf[i], i);
    if (exchangeOf[i] >= 0) add(exchangeOf[i], i);
  }
  return { postings, bits };
}

/**
 * Gram → list id, open addressing over typed arrays. A gram key is two int32 halves:
 * (-1, c) for one unit, (0, c0 << 16 | c1) for two, (c0 + 1, c1 << 16 | c2) for three.
 * Numeric keys that large would be heap numbers in a Map, and hashing millions of
 * them made the build several times slower.
 */
export class GramTable {
  size = 0;
  #mask: number;
  #his: Int32Array;
  #los: Int32Array;
  /** -1 = empty slot. */
  #ids: Int32Array;

  constructor(capacity: number) {
    let cap = 1024;
    while (cap < capacity * 2) cap *= 2;
    this.#mask = cap - 1;
    this.#his = new Int32Array(cap);
    this.#los = new Int32Array(cap);
    this.#ids = new Int32Array(cap).fill(-1);
  }

  /** The id of the gram at s[at, at + n), or -1. */
  get(s: string, at: number, n: number): number {
    const hi = gramHi(s, at, n);
    const lo = gramLo(s, at, n);
    for (let slot = hash(hi, lo) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const id = this.#ids[slot];
      if (id < 0 || (this.#his[slot] === hi && this.#los[slot] === lo)) return id;
    }
  }

  /** The id of the gram at s[at, at + n), assigning the next id to a new one. */
  intern(s: string, at: number, n: number): number {
    const hi = gramHi(s, at, n);
    const lo = gramLo(s, at, n);
    for (let slot = hash(hi, lo) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const id = this.#ids[slot];
      if (id >= 0) {
        if (this.#his[slot] === hi && this.#los[slot] === lo) return id;
        continue;
      }
      const fresh = this.size++;
      this.#his[slot] = hi;
      this.#los[slot] = lo;
      this.#ids[slot] = fresh;
      if (this.size * 2 > this.#mask) this.#rehash();
      return fresh;
    }
  }

  byteLength(): number {
    return this.#his.byteLength + this.#los.byteLength + this.#ids.byteLength;
  }

  #rehash(): void {
    const his = this.#his;
    const los = this.#los;
    const ids = this.#ids;
    const cap = ids.length * 2;
    this.#mask = cap - 1;
    this.#his = new Int32Array(cap);
    this.#los = new Int32Array(cap);
    this.#ids = new Int32Array(cap).fill(-1);
    for (let old = 0; old < ids.length; old++) {
      if (ids[old] < 0) continue;
      let slot = hash(his[old], los[old]) & this.#mask;
      while (this.#ids[slot] >= 0) slot = (slot + 1) & this.#mask;
      this.#his[slot] = his[old];
      this.#los[slot] = los[old];
      this.#ids[slot] = ids[old];
    }
  }
}

function gramHi(s: string, at: number, n: number): number {
  return n === 1 ? -1 : n === 2 ? 0 : s.charCodeAt(at) + 1;
}

function gramLo(s: string, at: number, n: number): number {
  if (n === 1) return s.charCodeAt(at);
  const k = at + n - 2;
  return (s.charCodeAt(k) << 16) | s.charCodeAt(k + 1);
}

function hash(hi: number, lo: number): number {
  let h = Math.imul(hi ^ 0x9e3779b9, 0x85ebca6b) ^ lo;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  return h ^ (h >>> 15);
}

function grow(a: Int32Array, fillWith: number): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  if (fillWith !== 0) b.fill(fillWith, a.length);
  return b;
}
