/**
 * Fund search for GET /v1/funds (C18, C19), built once per snapshot.
 *
 * Every fund is known by its position in FundColumns, which is sorted by code in
 * byte order, so "ascending code order" is ascending index order and "strictly after
 * a cursor code" is "index ≥ the code's upper bound" (a binary search, so a cursor
 * code that has since disappeared still works). Every list below is a set of fund
 * indices (a sorted Int32Array, or a bitset when dense), and a page is the first
 * `limit + 1` members of an intersection of such sets from that start position: the
 * extra one only answers `more`, so a cursor is handed out only when a next page
 * really has rows.
 *
 * Text index: the distinct 1-, 2- and 3-grams (UTF-16 units) of the lower-cased code
 * and, separately, the lower-cased name, so no gram spans the two and a match on
 * "code or name" never comes from their junction. Matching is "lower-cased text
 * includes lower-cased q" (C19), applied on both sides in the same way; that keeps
 * case mappings that change length ('İ' → 'i̇') consistent.
 *  - q of 1 to 3 units: the posting list of q itself is exactly the answer set, so
 *    these need no verification and never scan, even for a rare character.
 *  - longer q: intersect the posting lists of its trigrams, then confirm each
 *    survivor with a real `includes`, since trigrams are necessary, not sufficient.
 * Filters (type, country, exchange) have their own posting lists, and each fund also
 * carries the list id of its value, so a filter that does not drive the walk costs
 * one integer compare per candidate.
 *
 * Cost of a page: the walk is driven by the shortest list and stops at `limit + 1`
 * matches; other lists are probed (galloping, or a bit test), and a failed probe
 * leapfrogs the driver to the probe's next member. The worst case is a short-ish
 * driver whose members mostly fail the other conditions (e.g. two common trigrams
 * that rarely occur together, or a filter value combined with a q it rarely goes
 * with): the walk is then bounded by the shortest list, not by F, and every step is
 * an integer compare, a bit test or a gallop rather than a string scan.
 */
import { compareCodes } from '../../core/codes.js';
import type { FundColumns } from '../../core/snapshot/columns.js';
import type { FundType } from '../../core/types.js';

export interface SearchQuery {
  /** Trimmed and non-empty (the caller drops an empty q). */
  q?: string;
  type?: FundType;
  country?: string;
  exchange?: string;
  /** Decoded cursor code; need not exist in the data (C18). */
  after?: string;
  /** 1..1000. */
  limit: number;
}

export interface SearchPage {
  /** Fund indices in ascending code order. */
  indices: number[];
  /** True iff at least one further fund matches after the last index. */
  more: boolean;
}

export interface SearchStats {
  /** Gram and filter lists. */
  lists: number;
  /** Lists stored as bitsets. */
  denseLists: number;
  /** Members of the lists stored as sorted Int32Arrays. */
  sparseMembers: number;
  /** Typed-array bytes plus a rough figure for the lower-cased strings. */
  approxBytes: number;
}

// A fresh object each time: callers own the page they get and may append to it.
const empty = (): SearchPage => ({ indices: [], more: false });

/**
 * Gram → list id, open addressing over typed arrays. A gram key is two int32 halves:
 * (-1, c) for one unit, (0, c0 << 16 | c1) for two, (c0 + 1, c1 << 16 | c2) for three.
 * Numeric keys that large would be heap numbers in a Map, and hashing millions of
 * them made the build several times slower.
 */
class GramTable {
  size = 0;
  private mask: number;
  private his: Int32Array;
  private los: Int32Array;
  /** -1 = empty slot. */
  private ids: Int32Array;

  constructor(capacity: number) {
    let cap = 1024;
    while (cap < capacity * 2) cap *= 2;
    this.mask = cap - 1;
    this.his = new Int32Array(cap);
    this.los = new Int32Array(cap);
    this.ids = new Int32Array(cap).fill(-1);
  }

  /** The id of the gram at s[at, at + n), or -1. */
  get(s: string, at: number, n: number): number {
    const hi = gramHi(s, at, n);
    const lo = gramLo(s, at, n);
    for (let slot = hash(hi, lo) & this.mask; ; slot = (slot + 1) & this.mask) {
      const id = this.ids[slot];
      if (id < 0 || (this.his[slot] === hi && this.los[slot] === lo)) return id;
    }
  }

  /** The id of the gram at s[at, at + n), assigning the next id to a new one. */
  intern(s: string, at: number, n: number): number {
    const hi = gramHi(s, at, n);
    const lo = gramLo(s, at, n);
    for (let slot = hash(hi, lo) & this.mask; ; slot = (slot + 1) & this.mask) {
      const id = this.ids[slot];
      if (id >= 0) {
        if (this.his[slot] === hi && this.los[slot] === lo) return id;
        continue;
      }
      const fresh = this.size++;
      this.his[slot] = hi;
      this.los[slot] = lo;
      this.ids[slot] = fresh;
      if (this.size * 2 > this.mask) this.rehash();
      return fresh;
    }
  }

  byteLength(): number {
    return this.his.byteLength + this.los.byteLength + this.ids.byteLength;
  }

  private rehash(): void {
    const { his, los, ids } = this;
    const cap = ids.length * 2;
    this.mask = cap - 1;
    this.his = new Int32Array(cap);
    this.los = new Int32Array(cap);
    this.ids = new Int32Array(cap).fill(-1);
    for (let old = 0; old < ids.length; old++) {
      if (ids[old] < 0) continue;
      let slot = hash(his[old], los[old]) & this.mask;
      while (this.ids[slot] >= 0) slot = (slot + 1) & this.mask;
      this.his[slot] = his[old];
      this.los[slot] = los[old];
      this.ids[slot] = ids[old];
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

/**
 * Past this many trigram lists besides the driver, probing costs more than it saves:
 * a survivor is verified with `includes` anyway, which covers the rest.
 */
const MAX_PROBES = 3;

/** First position in a[lo, hi) holding a value ≥ target (a[lo, hi) ascending), found by galloping from lo. */
function gallop(a: Int32Array, lo: number, hi: number, target: number): number {
  if (lo >= hi || a[lo] >= target) return lo;
  // Invariant: a[lo] < target. Double the step until overshooting, then bisect.
  let step = 1;
  let probe = lo + 1;
  while (probe < hi && a[probe] < target) {
    lo = probe;
    step *= 2;
    probe = lo + step;
  }
  let high = Math.min(probe, hi);
  let low = lo + 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (a[mid] < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** First fund ≥ x whose bit is set in the list's words bits[base ..], or F. */
function nextSetBit(bits: Int32Array, base: number, F: number, x: number): number {
  if (x >= F) return F;
  const words = (F + 31) >>> 5;
  let w = x >>> 5;
  let word = bits[base + w] & (-1 << (x & 31));
  while (word === 0) {
    if (++w >= words) return F;
    word = bits[base + w];
  }
  return (w << 5) + 31 - Math.clz32(word & -word);
}

export class FundSearch {
  private readonly count: number;
  private readonly codes: string[];
  private readonly lowerCode: string[];
  /** '' for a null name: it then matches nothing a non-empty q asks for. */
  private readonly lowerName: string[];

  /** Gram → list id; gram lists come first, then filter lists. */
  private readonly grams: GramTable;
  private readonly listCount: Int32Array;
  /**
   * A list with more than F/32 members is a bitset (F/8 bytes beats 4 bytes a member
   * there): its words are bits[bitsStart[l] ..], and sparseStart[l] is -1. Otherwise it
   * is postings[sparseStart[l] .. + listCount[l]). Dense lists hold most of the members
   * of a name index (common letters, "in", "und"), so this cuts memory about 3×.
   */
  private readonly sparseStart: Int32Array;
  private readonly bitsStart: Int32Array;
  private readonly postings: Int32Array;
  private readonly bits: Int32Array;

  private readonly typeLists: Map<string, number>;
  private readonly countryLists: Map<string, number>;
  private readonly exchangeLists: Map<string, number>;
  /** Per fund, the list id of its type / country / exchange; -1 for null. */
  private readonly typeOf: Int32Array;
  private readonly countryOf: Int32Array;
  private readonly exchangeOf: Int32Array;

  /** A page's trigram lists, walked lists and their positions, reused page after page. */
  private gramScratch = new Int32Array(64);
  private readonly walkedScratch = new Int32Array(MAX_PROBES + 1);
  private readonly posScratch = new Int32Array(MAX_PROBES + 1);

  constructor(funds: FundColumns) {
    const F = funds.length;
    this.count = F;
    this.codes = funds.code;
    const lowerCode: string[] = new Array(F);
    const lowerName: string[] = new Array(F);
    for (let i = 0; i < F; i++) {
      lowerCode[i] = funds.code[i].toLowerCase();
      lowerName[i] = funds.name[i]?.toLowerCase() ?? '';
    }
    this.lowerCode = lowerCode;
    this.lowerName = lowerName;

    // Pass 1: assign gram ids, count each fund once per gram, and remember each
    // fund's distinct gram ids so pass 2 need not hash every gram again.
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
    const G = grams.size;

    const typeLists = new Map<string, number>();
    const countryLists = new Map<string, number>();
    const exchangeLists = new Map<string, number>();
    const typeOf = new Int32Array(F);
    const countryOf = new Int32Array(F);
    const exchangeOf = new Int32Array(F);
    const filterCounts: number[] = [];
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
    assign(typeLists, funds.type, typeOf);
    assign(countryLists, funds.country, countryOf);
    assign(exchangeLists, funds.exchange, exchangeOf);

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
    const postings = new Int32Array(sparseTotal);
    const bits = new Int32Array(denseTotal);
    // Pass 2: funds in ascending order, so every sparse list comes out sorted.
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

    this.grams = grams;
    this.listCount = listCount;
    this.sparseStart = sparseStart;
    this.bitsStart = bitsStart;
    this.postings = postings;
    this.bits = bits;
    this.typeLists = typeLists;
    this.countryLists = countryLists;
    this.exchangeLists = exchangeLists;
    this.typeOf = typeOf;
    this.countryOf = countryOf;
    this.exchangeOf = exchangeOf;
  }

  page(query: SearchQuery): SearchPage {
    const limit = query.limit;
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a positive integer: ${limit}`);
    const F = this.count;
    const start = query.after === undefined ? 0 : this.upperBound(query.after);

    // Filters resolve to list ids; an unknown value matches nothing.
    let wantType = -1;
    let wantCountry = -1;
    let wantExchange = -1;
    if (query.type !== undefined) {
      const id = this.typeLists.get(query.type);
      if (id === undefined) return empty();
      wantType = id;
    }
    if (query.country !== undefined) {
      const id = this.countryLists.get(query.country);
      if (id === undefined) return empty();
      wantCountry = id;
    }
    if (query.exchange !== undefined) {
      const id = this.exchangeLists.get(query.exchange);
      if (id === undefined) return empty();
      wantExchange = id;
    }

    let needle = '';
    // Reused per page (a thread answers one request at a time): no arrays per request.
    let gramLists = this.gramScratch;
    let G = 0;
    if (query.q !== undefined && query.q !== '') {
      needle = query.q.toLowerCase();
      const n = needle.length;
      if (n <= 3) {
        const id = this.grams.get(needle, 0, n);
        if (id < 0) return empty();
        gramLists[G++] = id;
      } else {
        if (gramLists.length < n) gramLists = this.gramScratch = new Int32Array(n);
        for (let at = 0; at + 3 <= n; at++) {
          const id = this.grams.get(needle, at, 3);
          if (id < 0) return empty();
          let seen = false;
          for (let x = 0; x < G && !seen; x++) seen = gramLists[x] === id;
          if (!seen) gramLists[G++] = id;
        }
      }
    }
    const verify = needle.length > 3;

    if (G === 0 && wantType < 0 && wantCountry < 0 && wantExchange < 0) {
      const end = Math.min(start + limit, F);
      const indices: number[] = new Array(Math.max(0, end - start));
      for (let i = start; i < end; i++) indices[i - start] = i;
      return { indices, more: end < F };
    }

    const count = this.listCount;
    // Shortest first; a few lists, so an insertion sort (no comparator closure).
    for (let x = 1; x < G; x++) {
      const g = gramLists[x];
      let y = x - 1;
      for (; y >= 0 && count[gramLists[y]] > count[g]; y--) gramLists[y + 1] = gramLists[y];
      gramLists[y + 1] = g;
    }

    // The driver is the shortest of all lists; a filter that does not drive is checked
    // through typeOf & co., one compare, instead of as a probe.
    let driver = G > 0 ? gramLists[0] : -1;
    if (wantType >= 0 && (driver < 0 || count[wantType] < count[driver])) driver = wantType;
    if (wantCountry >= 0 && (driver < 0 || count[wantCountry] < count[driver])) driver = wantCountry;
    if (wantExchange >= 0 && (driver < 0 || count[wantExchange] < count[driver])) driver = wantExchange;
    // walked[0] is the driver, the rest are probes; pos holds each sparse list's position.
    const walked = this.walkedScratch;
    walked[0] = driver;
    let W = 1;
    for (let x = 0; x < G; x++) {
      const g = gramLists[x];
      if (g !== driver && W <= MAX_PROBES) walked[W++] = g;
    }
    const pos = this.posScratch;
    for (let j = 0; j < W; j++) pos[j] = this.sparseStart[walked[j]];

    const typeOf = this.typeOf;
    const countryOf = this.countryOf;
    const exchangeOf = this.exchangeOf;
    const indices: number[] = [];
    let i = this.next(driver, pos, 0, start);
    walk: while (i < F) {
      if (
        (wantType >= 0 && typeOf[i] !== wantType) ||
        (wantCountry >= 0 && countryOf[i] !== wantCountry) ||
        (wantExchange >= 0 && exchangeOf[i] !== wantExchange)
      ) {
        i = this.next(driver, pos, 0, i + 1);
        continue;
      }
      for (let j = 1; j < W; j++) {
        const member = this.next(walked[j], pos, j, i);
        // An exhausted probe list means no later fund can match either.
        if (member >= F) break walk;
        if (member !== i) {
          // Leapfrog: nothing before `member` can be in this probe list.
          i = this.next(driver, pos, 0, member);
          continue walk;
        }
      }
      if (!verify || this.lowerCode[i].includes(needle) || this.lowerName[i].includes(needle)) {
        if (indices.length === limit) return { indices, more: true };
        indices.push(i);
      }
      i = this.next(driver, pos, 0, i + 1);
    }
    return { indices, more: false };
  }

  /** Sizes of the index, for logs and the benchmark. */
  stats(): SearchStats {
    let chars = 0;
    for (let i = 0; i < this.count; i++) chars += this.lowerCode[i].length + this.lowerName[i].length;
    const typed =
      this.postings.byteLength +
      this.bits.byteLength +
      this.listCount.byteLength +
      this.sparseStart.byteLength +
      this.bitsStart.byteLength +
      this.typeOf.byteLength +
      this.countryOf.byteLength +
      this.exchangeOf.byteLength +
      this.grams.byteLength();
    let dense = 0;
    for (let l = 0; l < this.listCount.length; l++) if (this.sparseStart[l] < 0) dense++;
    // A string costs roughly a 16-byte header plus its units (one byte each when Latin-1).
    const approxBytes = typed + this.count * 2 * 16 + chars * 2;
    return {
      lists: this.listCount.length,
      denseLists: dense,
      sparseMembers: this.postings.length,
      approxBytes,
    };
  }

  /**
   * The first member ≥ x of list l, or F. A sparse list gallops from its saved
   * position pos[j]; calls for one list within a page never go backwards.
   */
  private next(l: number, pos: Int32Array, j: number, x: number): number {
    const s = this.sparseStart[l];
    if (s < 0) return nextSetBit(this.bits, this.bitsStart[l], this.count, x);
    const end = s + this.listCount[l];
    const at = gallop(this.postings, pos[j], end, x);
    pos[j] = at;
    return at < end ? this.postings[at] : this.count;
  }

  /** First fund index whose code is strictly after `code` in byte order (C18). */
  private upperBound(code: string): number {
    const codes = this.codes;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCodes(codes[mid], code) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function grow(a: Int32Array, fillWith: number): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  if (fillWith !== 0) b.fill(fillWith, a.length);
  return b;
}
