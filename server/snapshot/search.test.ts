import { describe, expect, it } from 'vitest';
import { compareCodes } from '../../core/codes.js';
import { type FundColumns, NULL_DAY } from '../../core/snapshot/columns.js';
import type { FundType } from '../../core/types.js';
import { seededRandom } from '../../test/seeded-random.js';
import { decodeCursor, encodeCursor } from '../api/cursor.js';
import { FundSearch, type SearchPage, type SearchQuery } from './search.js';

interface Row {
  code: string;
  name: string | null;
  type: FundType;
  country: string | null;
  exchange: string | null;
}

function columns(rows: Row[]): FundColumns {
  const sorted = [...rows].sort((a, b) => compareCodes(a.code, b.code));
  const F = sorted.length;
  return {
    length: F,
    code: sorted.map((r) => r.code),
    name: sorted.map((r) => r.name),
    country: sorted.map((r) => r.country),
    exchange: sorted.map((r) => r.exchange),
    currency: sorted.map(() => 'USD'),
    type: sorted.map((r) => r.type),
    isin: sorted.map(() => null),
    isInactive: new Uint8Array(F),
    inactiveDate: new Int32Array(F).fill(NULL_DAY),
    seriesOffset: Int32Array.from({ length: F }, (_, i) => i),
    seriesLength: new Int32Array(F).fill(1),
    lastClose: new Float64Array(F).fill(Number.NaN),
  };
}

const WORDS = [
  'Vanguard',
  'Total',
  'Stock',
  'Market',
  'Index',
  'Bond',
  'Growth',
  'Value',
  'Income',
  'Emerging',
  'Global',
  'Small',
  'Cap',
  'Société',
  'Générale',
  'Fönd',
  'Ünïcode',
  'İstanbul',
  'İSTANBUL',
  'Straße',
  'ΟΔΟΣ',
  'Σίγμα',
  '日本株式',
  '\u{1F4C8}',
  'Zürich',
  'Ærø',
  'Kraków',
  'Qux',
  'Trust',
  'ETF',
];
const COUNTRIES = ['USA', 'US', 'Canada', 'Türkiye', 'Ireland'];
const EXCHANGES = ['NYSE', 'NASDAQ', 'ARCA', 'BATS', 'İST'];
// Fixed codes: case variants, non-ASCII and astral codes exercise byte order (C18).
const SPECIAL_CODES = [
  'abc',
  'ABC',
  'Abc',
  'aBC',
  'É1',
  '\uFF21BC',
  '\u{1F600}X',
  'İX',
  'A',
  'ZZZZZ',
  'brk.b',
  'BRK.B',
];

function fixture(count: number, seed: number): FundColumns {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const codes = new Set<string>(SPECIAL_CODES);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.';
  while (codes.size < count) {
    let c = '';
    const n = 1 + Math.floor(rand() * 6);
    for (let i = 0; i < n; i++) c += alphabet[Math.floor(rand() * alphabet.length)];
    codes.add(c);
  }
  const rows: Row[] = [];
  for (const code of codes) {
    const words: string[] = [];
    const n = 1 + Math.floor(rand() * 5);
    for (let i = 0; i < n; i++) words.push(pick(WORDS));
    rows.push({
      code,
      name: rand() < 0.05 ? null : words.join(' '),
      type: rand() < 0.4 ? 'ETF' : 'FUND',
      country: rand() < 0.1 ? null : pick(COUNTRIES),
      exchange: rand() < 0.1 ? null : pick(EXCHANGES),
    });
  }
  return columns(rows);
}

/** C19 spelled out as directly as possible: filter everything, order by code, slice. */
function reference(funds: FundColumns, query: SearchQuery): SearchPage {
  const needle = query.q?.toLowerCase();
  const matches: number[] = [];
  for (let i = 0; i < funds.length; i++) {
    if (query.after !== undefined && compareCodes(funds.code[i], query.after) <= 0) continue;
    if (query.type !== undefined && funds.type[i] !== query.type) continue;
    if (query.country !== undefined && funds.country[i] !== query.country) continue;
    if (query.exchange !== undefined && funds.exchange[i] !== query.exchange) continue;
    if (needle !== undefined) {
      const name = funds.name[i];
      const hit =
        funds.code[i].toLowerCase().includes(needle) || name?.toLowerCase().includes(needle) === true;
      if (!hit) continue;
    }
    matches.push(i);
  }
  matches.sort((a, b) => compareCodes(funds.code[a], funds.code[b]));
  return { indices: matches.slice(0, query.limit), more: matches.length > query.limit };
}

const funds = fixture(400, 42);
const search = new FundSearch(funds);

function randomQuery(rand: () => number): string {
  const kind = Math.floor(rand() * 6);
  if (kind === 5) {
    // Random strings: mostly misses, sometimes a rare hit.
    const alphabet = 'abcxyzqİiσς日\u0307 .';
    let s = '';
    const n = 1 + Math.floor(rand() * 5);
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
    return s.trim() === '' ? 'x' : s.trim();
  }
  // Substrings of real names and codes, of 1, 2, 3 or more units, in varied case.
  let source: string | null = null;
  while (source === null) {
    const i = Math.floor(rand() * funds.length);
    source = rand() < 0.2 ? funds.code[i] : funds.name[i];
  }
  const len = kind < 3 ? kind + 1 : 4 + Math.floor(rand() * 8);
  const from = Math.floor(rand() * Math.max(1, source.length - len + 1));
  let q = source.slice(from, from + len).trim();
  if (q === '') q = source.trim() || 'a';
  const c = rand();
  return c < 0.3 ? q.toUpperCase() : c < 0.6 ? q.toLowerCase() : q;
}

type Filters = Pick<SearchQuery, 'type' | 'country' | 'exchange'>;

function filterCombos(rand: () => number): Filters[] {
  const combos: Filters[] = [];
  for (let mask = 0; mask < 8; mask++) {
    const f: Filters = {};
    if (mask & 1) f.type = rand() < 0.5 ? 'ETF' : 'FUND';
    if (mask & 2) f.country = rand() < 0.1 ? 'Atlantis' : COUNTRIES[Math.floor(rand() * COUNTRIES.length)];
    if (mask & 4) f.exchange = rand() < 0.1 ? 'NOWHERE' : EXCHANGES[Math.floor(rand() * EXCHANGES.length)];
    combos.push(f);
  }
  return combos;
}

function randomAfter(rand: () => number): string | undefined {
  const r = rand();
  if (r < 0.4) return undefined;
  if (r < 0.7) return funds.code[Math.floor(rand() * funds.length)];
  // Codes that are not in the data, landing between existing ones or past either end.
  const absent = ['', 'AAAAAAA', 'M~', 'a', 'zzzzzzzz', '0', '\u{10FFFF}', 'Éa', 'abd', 'ABCD'];
  const base = funds.code[Math.floor(rand() * funds.length)];
  return rand() < 0.5 ? absent[Math.floor(rand() * absent.length)] : `${base}\u0001`;
}

/** Follows pages the way a client follows next_cursor, through the real cursor codec. */
function walk(s: FundSearch, cols: FundColumns, query: Omit<SearchQuery, 'after' | 'limit'>, limit: number) {
  const pages: number[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = s.page({ ...query, after, limit });
    pages.push(page.indices);
    if (!page.more) break;
    // A cursor that does not move forward would otherwise loop forever.
    if (pages.length > cols.length) throw new Error('pagination does not terminate');
    const cursor = encodeCursor(cols.code[page.indices[page.indices.length - 1]]);
    after = decodeCursor(cursor) ?? undefined;
    expect(after).toBeDefined();
  }
  return pages;
}

describe('FundSearch (C18, C19)', () => {
  it('matches the brute-force reference for random q, filters, cursors and limits', () => {
    const rand = seededRandom(1);
    let nonEmpty = 0;
    let withMore = 0;
    for (let n = 0; n < 600; n++) {
      const q = rand() < 0.85 ? randomQuery(rand) : undefined;
      for (const filters of filterCombos(rand)) {
        const query: SearchQuery = {
          q,
          ...filters,
          after: randomAfter(rand),
          limit: 1 + Math.floor(rand() * 50),
        };
        const got = search.page(query);
        expect(got, JSON.stringify(query)).toEqual(reference(funds, query));
        if (got.indices.length > 0) nonEmpty++;
        if (got.more) withMore++;
      }
    }
    // The random mix must actually exercise hits and multi-page answers.
    expect(nonEmpty).toBeGreaterThan(1000);
    expect(withMore).toBeGreaterThan(300);
  });

  it('matches the reference for every 1- and 2-unit query drawn from the data (C19)', () => {
    const grams = new Set<string>();
    for (let i = 0; i < funds.length; i++) {
      for (const s of [funds.code[i], funds.name[i] ?? '']) {
        for (let k = 0; k + 1 <= s.length; k++) grams.add(s.slice(k, k + 1));
        for (let k = 0; k + 2 <= s.length; k++) grams.add(s.slice(k, k + 2));
      }
    }
    for (const g of grams) {
      const q = g.trim();
      if (q === '') continue;
      for (const limit of [1, 7, 1000]) {
        expect(search.page({ q, limit }), q).toEqual(reference(funds, { q, limit }));
      }
    }
  });

  it('lists every fund in code order from the cursor when there is no q and no filter (C18)', () => {
    expect(search.page({ limit: 1000 }).indices).toEqual(Array.from({ length: funds.length }, (_, i) => i));
    expect(search.page({ limit: funds.length })).toEqual({
      indices: Array.from({ length: funds.length }, (_, i) => i),
      more: false,
    });
    expect(search.page({ limit: funds.length - 1 }).more).toBe(true);
    expect(search.page({ after: funds.code[funds.length - 1], limit: 10 })).toEqual({
      indices: [],
      more: false,
    });
    expect(search.page({ after: funds.code[3], limit: 2 })).toEqual({ indices: [4, 5], more: true });
  });

  it('pages visit every match exactly once, with no gaps, no duplicates and no empty last page (C18)', () => {
    const rand = seededRandom(2);
    const queries: (string | undefined)[] = [
      undefined,
      'a',
      'an',
      'ind',
      'growth',
      'İ',
      'st',
      'x',
      'ΟΔΟΣ',
      'Σ',
    ];
    for (const q of queries) {
      for (const filters of filterCombos(rand)) {
        for (const limit of [1, 3, 17, 50]) {
          const pages = walk(search, funds, { q, ...filters }, limit);
          const all = reference(funds, { q, ...filters, limit: 1_000_000 }).indices;
          expect(pages.flat()).toEqual(all);
          // Only a first page may be empty, and only when nothing matches at all.
          for (const [k, page] of pages.entries()) {
            if (k > 0 || all.length > 0) expect(page.length).toBeGreaterThan(0);
            if (k < pages.length - 1) expect(page.length).toBe(limit);
          }
          expect(pages.length).toBe(Math.max(1, Math.ceil(all.length / limit)));
        }
      }
    }
  });

  it('continues strictly after a cursor code that no longer exists in refreshed data (C18)', () => {
    const old = fixture(300, 9);
    const doomed = new Set([old.code[10], old.code[11], old.code[150], old.code[299]]);
    const rows: Row[] = [];
    for (let i = 0; i < old.length; i++) {
      if (doomed.has(old.code[i])) continue;
      rows.push({
        code: old.code[i],
        name: old.name[i],
        type: old.type[i],
        country: old.country[i],
        exchange: old.exchange[i],
      });
    }
    rows.push({
      code: `${old.code[10]}0`,
      name: 'Newly Listed',
      type: 'ETF',
      country: 'USA',
      exchange: 'NYSE',
    });
    const fresh = columns(rows);
    const s = new FundSearch(fresh);
    for (const gone of doomed) {
      const after = decodeCursor(encodeCursor(gone));
      expect(after).toBe(gone);
      const got = s.page({ after: after ?? undefined, limit: 5 });
      expect(got).toEqual(reference(fresh, { after: gone, limit: 5 }));
      for (const i of got.indices) expect(compareCodes(fresh.code[i], gone)).toBeGreaterThan(0);
    }
    // The fund listed after the deleted code in the meantime is not skipped.
    const next = s.page({ after: old.code[10], limit: 1 }).indices[0];
    expect(fresh.code[next]).toBe(`${old.code[10]}0`);
  });

  it('matches case-insensitively on code or name, listing case-variant codes in byte order (C19)', () => {
    const codes = (p: SearchPage) => p.indices.map((i) => funds.code[i]);
    const abc = codes(search.page({ q: 'abc', limit: 1000 }));
    expect(abc.filter((c) => c.toLowerCase() === 'abc')).toEqual(['ABC', 'Abc', 'aBC', 'abc']);
    expect(codes(search.page({ q: 'ABC', limit: 1000 }))).toEqual(abc);
    expect(codes(search.page({ q: 'BRK.B', limit: 1000 }))).toEqual(['BRK.B', 'brk.b']);
    const astral = codes(search.page({ q: '\u{1F600}', limit: 10 }));
    expect(astral).toEqual(['\u{1F600}X']);
  });

  it("lower-cases q and text alike, so length-changing mappings like 'İ' match consistently (C19)", () => {
    expect('İ'.toLowerCase()).toHaveLength(2);
    for (const q of [
      'İ',
      'İstanbul',
      'İSTANBUL',
      'i̇stanbul',
      'İX',
      'İST',
      'ΟΔΟΣ',
      'σ',
      'ς',
      'straße',
      'STRASSE',
    ]) {
      for (const limit of [1, 1000]) {
        expect(search.page({ q, limit }), q).toEqual(reference(funds, { q, limit }));
      }
    }
    expect(search.page({ q: 'İstanbul', limit: 1000 }).indices.length).toBeGreaterThan(0);
    // 'İ' lower-cases to 'i' + U+0307, so plain 'istanbul' is not a substring of a lower-cased 'İstanbul'.
    const s = new FundSearch(
      columns([{ code: 'IST', name: 'İstanbul Fund', type: 'FUND', country: null, exchange: null }]),
    );
    expect(s.page({ q: 'İSTANBUL', limit: 5 }).indices).toEqual([0]);
    expect(s.page({ q: 'i\u0307stanbul', limit: 5 }).indices).toEqual([0]);
    expect(s.page({ q: 'İ', limit: 5 }).indices).toEqual([0]);
    expect(s.page({ q: 'stanbul', limit: 5 }).indices).toEqual([0]);
    expect(s.page({ q: 'istanbul', limit: 5 }).indices).toEqual([]);
  });

  it('does not match across the boundary between code and name (C19)', () => {
    const cols = columns([
      { code: 'XY', name: 'Zed Fund', type: 'ETF', country: null, exchange: null },
      { code: 'XYZED', name: null, type: 'FUND', country: null, exchange: null },
    ]);
    const s = new FundSearch(cols);
    expect(s.page({ q: 'yz', limit: 10 }).indices).toEqual([1]);
    expect(s.page({ q: 'xyzed', limit: 10 }).indices).toEqual([1]);
    expect(s.page({ q: 'y\u0000z', limit: 10 }).indices).toEqual([]);
    expect(s.page({ q: 'zed f', limit: 10 }).indices).toEqual([0]);
  });

  it('verifies trigram candidates, since sharing every trigram is not a substring match (C19)', () => {
    const cols = columns([
      { code: 'A', name: 'abcd bcde', type: 'ETF', country: null, exchange: null },
      { code: 'B', name: 'abcde', type: 'ETF', country: null, exchange: null },
      { code: 'C', name: 'aaaa', type: 'FUND', country: null, exchange: null },
      { code: 'D', name: 'aaa', type: 'FUND', country: null, exchange: null },
    ]);
    const s = new FundSearch(cols);
    expect(s.page({ q: 'abcde', limit: 10 }).indices).toEqual([1]);
    expect(s.page({ q: 'aaaa', limit: 10 }).indices).toEqual([2]);
    expect(s.page({ q: 'aaa', limit: 10 }).indices).toEqual([2, 3]);
  });

  it('combines filters with AND and treats unknown filter values and grams as no match (C19)', () => {
    const etfUsa = search.page({ type: 'ETF', country: 'USA', limit: 1000 }).indices;
    expect(etfUsa.length).toBeGreaterThan(0);
    for (const i of etfUsa) {
      expect(funds.type[i]).toBe('ETF');
      expect(funds.country[i]).toBe('USA');
    }
    expect(search.page({ country: 'Atlantis', limit: 10 })).toEqual({ indices: [], more: false });
    expect(search.page({ q: 'qqqqqqq', limit: 10 })).toEqual({ indices: [], more: false });
    expect(search.page({ q: '\u2603', limit: 10 })).toEqual({ indices: [], more: false });
    // Filters are exact: case and prefixes do not match.
    expect(search.page({ country: 'usa', limit: 10 }).indices).toEqual([]);
    expect(search.page({ exchange: 'NYS', limit: 10 }).indices).toEqual([]);
  });

  it('handles an empty universe and a single fund', () => {
    const none = new FundSearch(columns([]));
    expect(none.page({ limit: 5 })).toEqual({ indices: [], more: false });
    expect(none.page({ q: 'a', type: 'ETF', limit: 5 })).toEqual({ indices: [], more: false });
    const one = new FundSearch(
      columns([{ code: 'Q', name: null, type: 'ETF', country: null, exchange: null }]),
    );
    expect(one.page({ q: 'q', limit: 1 })).toEqual({ indices: [0], more: false });
    expect(one.page({ q: 'q', after: 'Q', limit: 1 })).toEqual({ indices: [], more: false });
    expect(one.page({ country: 'USA', limit: 1 })).toEqual({ indices: [], more: false });
  });

  it('rejects a limit that is not a positive integer', () => {
    expect(() => search.page({ limit: 0 })).toThrow(RangeError);
    expect(() => search.page({ limit: 1.5 })).toThrow(RangeError);
  });

  it('answers identically from bitset and sorted-array lists, across 32-bit word boundaries', () => {
    const stats = search.stats();
    expect(stats.denseLists).toBeGreaterThan(0);
    expect(stats.sparseMembers).toBeGreaterThan(0);
    const hits = new Set([0, 31, 32, 63, 64, 69]);
    const rows: Row[] = Array.from({ length: 70 }, (_, i) => ({
      code: `C${String(i).padStart(3, '0')}`,
      name: hits.has(i) ? 'Qx Fund' : 'Plain Fund',
      type: i % 2 === 0 ? 'ETF' : 'FUND',
      country: null,
      exchange: null,
    }));
    const cols = columns(rows);
    const s = new FundSearch(cols);
    expect(s.stats().denseLists).toBeGreaterThan(0);
    for (const q of ['qx', 'q', 'x fund', 'qx fund']) {
      for (const limit of [1, 2, 5]) {
        const pages = walk(s, cols, { q }, limit);
        expect(pages.flat()).toEqual([...hits]);
        expect(walk(s, cols, { q, type: 'ETF' }, limit).flat()).toEqual([0, 32, 64]);
      }
    }
  });

  it('builds a 32,000-fund index well under a second and still matches the reference there', () => {
    const big = fixture(32_000, 3);
    const t0 = performance.now();
    const s = new FundSearch(big);
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(1000);
    const rand = seededRandom(4);
    const queries = ['ünï', 'zür', 'ο', 'i̇s', 'bond index', 'growth', 'qux', 'x', 'ab', '日本', '\u{1F4C8}'];
    for (let n = 0; n < 120; n++) {
      const query: SearchQuery = {
        q: rand() < 0.9 ? queries[Math.floor(rand() * queries.length)] : undefined,
        limit: 1 + Math.floor(rand() * 100),
      };
      if (rand() < 0.4) query.type = 'ETF';
      if (rand() < 0.3) query.country = 'Türkiye';
      if (rand() < 0.3) query.exchange = 'İST';
      if (rand() < 0.5) query.after = big.code[Math.floor(rand() * big.length)];
      expect(s.page(query), JSON.stringify(query)).toEqual(reference(big, query));
    }
  });
});
