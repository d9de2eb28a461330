/**
 * FundSearch.page() over a 32,000-fund synthetic universe: the per-request cost of
 * GET /v1/funds without the HTTP layer. Run: `npx tsx bench/search.bench.ts`
 * (add `node --expose-gc --import tsx` for a cleaner heap figure).
 */
import { Bench } from 'tinybench';
import { compareCodes } from '../core/codes.js';
import { type FundColumns, NULL_DAY } from '../core/snapshot/columns.js';
import type { FundType } from '../core/types.js';
import { FundSearch, type SearchQuery } from '../server/snapshot/search.js';
import { seededRandom } from '../test/seeded-random.js';

const FUNDS = 32_000;

const SPONSORS = [
  'Vanguard',
  'iShares',
  'Fidelity',
  'Schwab',
  'SPDR',
  'Invesco',
  'T. Rowe Price',
  'American Funds',
  'JPMorgan',
  'Franklin',
  'Nuveen',
  'PIMCO',
  'Dimensional',
  'WisdomTree',
  'First Trust',
  'Columbia',
  'Hartford',
  'Lord Abbett',
  'MFS',
  'Putnam',
  'Société Générale',
  'Zürcher Kantonalbank',
];
const STYLES = [
  'Total',
  'Core',
  'Select',
  'Enhanced',
  'Strategic',
  'Tactical',
  'Dynamic',
  'Premier',
  'Active',
];
const ASSETS = [
  'Stock Market',
  'Bond',
  'Municipal Bond',
  'Treasury',
  'High Yield',
  'Emerging Markets',
  'International',
  'Small Cap',
  'Mid Cap',
  'Large Cap',
  'Dividend',
  'Real Estate',
  'Technology',
  'Health Care',
  'Energy',
  'Balanced',
  'Target Retirement 2045',
  'Inflation-Protected',
];
const SUFFIXES = [
  'Index',
  'Fund',
  'ETF',
  'Portfolio',
  'Trust',
  'Growth',
  'Value',
  'Income',
  'Admiral Shares',
];
const SHARE_CLASSES = ['', ' Class A', ' Class C', ' Class I', ' Investor', ' Institutional'];
const RARE = ['Ωmega', 'Québec'];
const COUNTRIES = ['USA', 'USA', 'USA', 'USA', 'Canada', 'Ireland', 'Luxembourg'];
const EXCHANGES = ['NYSE', 'NASDAQ', 'NYSE ARCA', 'BATS', 'OTC'];

function universe(count: number): FundColumns {
  const rand = seededRandom(20250630);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const codes = new Set<string>();
  while (codes.size < count) {
    let c = '';
    const n = 3 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) c += String.fromCharCode(65 + Math.floor(rand() * 26));
    codes.add(c);
  }
  const code = [...codes].sort(compareCodes);
  const name: (string | null)[] = [];
  const type: FundType[] = [];
  const country: (string | null)[] = [];
  const exchange: (string | null)[] = [];
  for (let i = 0; i < count; i++) {
    const etf = rand() < 0.3;
    // One fund in a thousand carries a rare word, for the rare-gram cases.
    const rare = rand() < 0.001 ? ` ${pick(RARE)}` : '';
    name.push(
      rand() < 0.01
        ? null
        : `${pick(SPONSORS)} ${pick(STYLES)} ${pick(ASSETS)} ${pick(SUFFIXES)}${etf ? '' : pick(SHARE_CLASSES)}${rare}`,
    );
    type.push(etf ? 'ETF' : 'FUND');
    country.push(rand() < 0.02 ? null : pick(COUNTRIES));
    exchange.push(rand() < 0.02 ? null : pick(EXCHANGES));
  }
  return {
    length: count,
    code,
    name,
    country,
    exchange,
    currency: code.map(() => 'USD'),
    type,
    isin: code.map(() => null),
    isInactive: new Uint8Array(count),
    inactiveDate: new Int32Array(count).fill(NULL_DAY),
    seriesOffset: Int32Array.from({ length: count }, (_, i) => i),
    seriesLength: new Int32Array(count).fill(1),
    lastClose: new Float64Array(count).fill(Number.NaN),
  };
}

const gc = (globalThis as { gc?: () => void }).gc;
const funds = universe(FUNDS);
gc?.();
const heapBefore = process.memoryUsage();
const t0 = performance.now();
const search = new FundSearch(funds);
const buildMs = performance.now() - t0;
gc?.();
const heapAfter = process.memoryUsage();
const stats = search.stats();
const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
console.log(
  `build ${buildMs.toFixed(0)} ms for ${FUNDS} funds; ${stats.lists} lists (${stats.denseLists} bitsets), ` +
    `${stats.sparseMembers} sparse members, ` +
    `~${mb(stats.approxBytes)} MB by stats(); heap +${mb(heapAfter.heapUsed - heapBefore.heapUsed)} MB, ` +
    `array buffers +${mb(heapAfter.arrayBuffers - heapBefore.arrayBuffers)} MB${gc ? '' : ' (no --expose-gc: noisy)'}`,
);

const cases: [string, SearchQuery][] = [
  ['q 1-char "x"', { q: 'x', limit: 100 }],
  ['q 1-char rare "ω"', { q: 'ω', limit: 100 }],
  ['q 2-char "in"', { q: 'in', limit: 100 }],
  ['q 3-char common "ind"', { q: 'ind', limit: 100 }],
  ['q 3-char rare "qué"', { q: 'qué', limit: 100 }],
  ['q 8-char "treasury"', { q: 'treasury', limit: 100 }],
  ['q 8-char miss-heavy "bond etf"', { q: 'bond etf', limit: 100 }],
  ['q 5-char + filters', { q: 'rowth', type: 'ETF', country: 'Canada', limit: 100 }],
  ['filters type+country+exchange', { type: 'FUND', country: 'Ireland', exchange: 'OTC', limit: 100 }],
  ['filter type only', { type: 'ETF', limit: 100 }],
  ['no filters', { limit: 100 }],
  ['no filters, cursor mid-list', { after: funds.code[FUNDS >> 1], limit: 100 }],
  ['q 3-char, limit 1000', { q: 'ind', limit: 1000 }],
  // Adversarial: common grams or filter values whose combination is rare or absent,
  // so the walk runs to the end of its driver list.
  ['worst: "market bond" (no hit)', { q: 'market bond', limit: 100 }],
  [
    'worst: "etf" + FUND + Luxembourg + OTC',
    { q: 'etf', type: 'FUND', country: 'Luxembourg', exchange: 'OTC', limit: 100 },
  ],
  ['worst: "a" + ETF, cursor near end', { q: 'a', type: 'ETF', after: funds.code[FUNDS - 50], limit: 100 }],
];

const bench = new Bench({ time: 400, warmupTime: 100 });
let sink = 0;
for (const [name, query] of cases) {
  const page = search.page(query);
  console.log(`  ${name}: ${page.indices.length} rows, more=${page.more}`);
  bench.add(name, () => {
    sink += search.page(query).indices.length;
  });
}
await bench.run();

console.log(`\n${'case'.padEnd(34)}${'ops/s'.padStart(14)}${'mean µs'.padStart(12)}`);
for (const task of bench.tasks) {
  const r = task.result;
  if (r.state !== 'completed') {
    console.log(`${task.name.padEnd(34)} ${r.state}`);
    continue;
  }
  const ops = Math.round(r.throughput.mean).toLocaleString('en-US');
  console.log(`${task.name.padEnd(34)}${ops.padStart(14)}${(r.latency.mean * 1000).toFixed(2).padStart(12)}`);
}
if (sink < 0) console.log(sink);
