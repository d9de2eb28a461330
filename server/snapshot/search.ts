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
import { buildSearchIndex, type GramTable } from './search-index.js';

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
  readonly #count: number;
  readonly #codes: string[];
  readonly #lowerCode: string[];
  /** '' for a null name: it then matches nothing a non-empty q asks for. */
  readonly #lowerName: string[];

  /** Gram → list id; gram lists come first, then filter lists. */
  readonly #grams: GramTable;
  readonly #listCount: Int32Array;
  /** How each list is stored (search-index.ts). */
  readonly #sparseStart: Int32Array;
  readonly #bitsStart: Int32Array;
  readonly #postings: Int32Array;
  readonly #bits: Int32Array;

  readonly #typeLists: Map<string, number>;
  readonly #countryLists: Map<string, number>;
  readonly #exchangeLists: Map<string, number>;
  /** Per fund, the list id of its type / country / exchange; -1 for null. */
  readonly #typeOf: Int32Array;
  readonly #countryOf: Int32Array;
  readonly #exchangeOf: Int32Array;

  /** A page's trigram lists, walked lists and their positions, reused page after page. */
  #gramScratch = new Int32Array(64);
  readonly #walkedScratch = new Int32Array(MAX_PROBES + 1);
  readonly #posScratch = new Int32Array(MAX_PROBES + 1);
  /** The list ids of the type, country and exchange a page asks for (-1: any). */
  readonly #want = new Int32Array(3);

  constructor(funds: FundColumns) {
    const index = buildSearchIndex(funds);
    this.#count = index.count;
    this.#codes = index.codes;
    this.#lowerCode = index.lowerCode;
    this.#lowerName = index.lowerName;
    this.#grams = index.grams;
    this.#listCount = index.listCount;
    this.#sparseStart = index.sparseStart;
    this.#bitsStart = index.bitsStart;
    this.#postings = index.postings;
    this.#bits = index.bits;
    this.#typeLists = index.typeLists;
    this.#countryLists = index.countryLists;
    this.#exchangeLists = index.exchangeLists;
    this.#typeOf = index.typeOf;
    this.#countryOf = index.countryOf;
    this.#exchangeOf = index.exchangeOf;
  }

  page(query: SearchQuery): SearchPage {
    const limit = query.limit;
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a positive integer: ${limit}`);
    const start = query.after === undefined ? 0 : this.#upperBound(query.after);
    const want = this.#want;
    if (!this.#filters(query, want)) return empty();
    const needle = query.q !== undefined && query.q !== '' ? query.q.toLowerCase() : '';
    const G = this.#gramLists(needle);
    if (G < 0) return empty();
    if (G === 0 && want[0] < 0 && want[1] < 0 && want[2] < 0) return this.#everything(start, limit);
    const W = this.#plan(G, want);
    return this.#walk(W, want, start, limit, needle);
  }

  /**
   * The list ids of the type, country and exchange asked for into want[0..2] (-1: no
   * filter); false when one is a value no fund has, which matches nothing.
   */
  #filters(query: SearchQuery, want: Int32Array): boolean {
    want[0] = -1;
    want[1] = -1;
    want[2] = -1;
    if (query.type !== undefined) {
      const id = this.#typeLists.get(query.type);
      if (id === undefined) return false;
      want[0] = id;
    }
    if (query.country !== undefined) {
      const id = this.#countryLists.get(query.country);
      if (id === undefined) return false;
      want[1] = id;
    }
    if (query.exchange !== undefined) {
      const id = this.#exchangeLists.get(query.exchange);
      if (id === undefined) return false;
      want[2] = id;
    }
    return true;
  }

  /**
   * The distinct gram lists `needle` must be in, into #gramScratch: itself when 1 to 3
   * units, else its trigrams. Their number, or -1 when one is a gram no fund has.
   */
  #gramLists(needle: string): number {
    // Reused per page (a thread answers one request at a time): no arrays per request.
    let gramLists = this.#gramScratch;
    let G = 0;
    const n = needle.length;
    if (n === 0) return 0;
    if (n <= 3) {
      const id = this.#grams.get(needle, 0, n);
      if (id < 0) return -1;
      gramLists[G++] = id;
      return G;
    }
    if (gramLists.length < n) gramLists = this.#gramScratch = new Int32Array(n);
    for (let at = 0; at + 3 <= n; at++) {
      const id = this.#grams.get(needle, at, 3);
      if (id < 0) return -1;
      let seen = false;
      for (let x = 0; x < G && !seen; x++) seen = gramLists[x] === id;
      if (!seen) gramLists[G++] = id;
    }
    return G;
  }

  /** No q and no filter: the funds after `start` in order. */
  #everything(start: number, limit: number): SearchPage {
    const F = this.#count;
    const end = Math.min(start + limit, F);
    const indices: number[] = new Array(Math.max(0, end - start));
    for (let i = start; i < end; i++) indices[i - start] = i;
    return { indices, more: end < F };
  }

  /**
   * The lists to walk into #walkedScratch, the driver first, and their positions into
   * #posScratch; their number.
   */
  #plan(G: number, want: Int32Array): number {
    const gramLists = this.#gramScratch;
    const count = this.#listCount;
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
    for (let f = 0; f < 3; f++) {
      const w = want[f];
      if (w >= 0 && (driver < 0 || count[w] < count[driver])) driver = w;
    }
    // walked[0] is the driver, the rest are probes; pos holds each sparse list's position.
    const walked = this.#walkedScratch;
    walked[0] = driver;
    let W = 1;
    for (let x = 0; x < G; x++) {
      const g = gramLists[x];
      if (g !== driver && W <= MAX_PROBES) walked[W++] = g;
    }
    const pos = this.#posScratch;
    for (let j = 0; j < W; j++) pos[j] = this.#sparseStart[walked[j]];
    return W;
  }

  /** The page: the driver's members from `start` that pass the filters, the probes and (long q) `includes`. */
  #walk(W: number, want: Int32Array, start: number, limit: number, needle: string): SearchPage {
    const F = this.#count;
    const verify = needle.length > 3;
    const walked = this.#walkedScratch;
    const pos = this.#posScratch;
    const driver = walked[0];
    const wantType = want[0];
    const wantCountry = want[1];
    const wantExchange = want[2];
    const typeOf = this.#typeOf;
    const countryOf = this.#countryOf;
    const exchangeOf = this.#exchangeOf;
    const indices: number[] = [];
    let i = this.#next(driver, pos, 0, start);
    walk: while (i < F) {
      if (
        (wantType >= 0 && typeOf[i] !== wantType) ||
        (wantCountry >= 0 && countryOf[i] !== wantCountry) ||
        (wantExchange >= 0 && exchangeOf[i] !== wantExchange)
      ) {
        i = this.#next(driver, pos, 0, i + 1);
        continue;
      }
      for (let j = 1; j < W; j++) {
        const member = this.#next(walked[j], pos, j, i);
        // An exhausted probe list means no later fund can match either.
        if (member >= F) break walk;
        if (member !== i) {
          // Leapfrog: nothing before `member` can be in this probe list.
          i = this.#next(driver, pos, 0, member);
          continue walk;
        }
      }
      if (!verify || this.#lowerCode[i].includes(needle) || this.#lowerName[i].includes(needle)) {
        if (indices.length === limit) return { indices, more: true };
        indices.push(i);
      }
      i = this.#next(driver, pos, 0, i + 1);
    }
    return { indices, more: false };
  }

  /** Sizes of the index, for logs and the benchmark. */
  stats(): SearchStats {
    let chars = 0;
    for (let i = 0; i < this.#count; i++) chars += this.#lowerCode[i].length + this.#lowerName[i].length;
    const typed =
      this.#postings.byteLength +
      this.#bits.byteLength +
      this.#listCount.byteLength +
      this.#sparseStart.byteLength +
      this.#bitsStart.byteLength +
      this.#typeOf.byteLength +
      this.#countryOf.byteLength +
      this.#exchangeOf.byteLength +
      this.#grams.byteLength();
    let dense = 0;
    for (let l = 0; l < this.#listCount.length; l++) if (this.#sparseStart[l] < 0) dense++;
    // A string costs roughly a 16-byte header plus its units (one byte each when Latin-1).
    const approxBytes = typed + this.#count * 2 * 16 + chars * 2;
    return {
      lists: this.#listCount.length,
      denseLists: dense,
      sparseMembers: this.#postings.length,
      approxBytes,
    };
  }

  /**
   * The first member ≥ x of list l, or F. A sparse list gallops from its saved
   * position pos[j]; calls for one list within a page never go backwards.
   */
  #next(l: number, pos: Int32Array, j: number, x: number): number {
    const s = this.#sparseStart[l];
    if (s < 0) return nextSetBit(this.#bits, this.#bitsStart[l], this.#count, x);
    const end = s + this.#listCount[l];
    const at = gallop(this.#postings, pos[j], end, x);
    pos[j] = at;
    return at < end ? this.#postings[at] : this.#count;
  }

  /** First fund index whose code is strictly after `code` in byte order (C18). */
  #upperBound(code: string): number {
    const codes = this.#codes;
    let lo = 0;
    let hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCodes(codes[mid], code) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
