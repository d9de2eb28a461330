/**
 * What the bench asks: the served universe (read from `/v1/funds` pages, the same way
 * for a local server and a deployment), and per scenario a pre-generated list of
 * requests over random codes drawn from it, never one hot key. Seeded, so two runs
 * send the same requests.
 */
import { Rng } from '../../builder/generate/prng.js';
import { BATCH_MAX_CODES, LIMIT_MAX } from '../../schemas/common.js';
import type { BenchRequest } from './load.js';
import { BenchError } from './load.js';

export interface ServedFund {
  code: string;
  name: string | null;
  /** First and last dates with returns, YYYY-MM-DD; null for a fund without history. */
  first: string | null;
  last: string | null;
}

/** Every fund a server lists, page by page. */
export async function fetchUniverse(url: string, headers: Record<string, string>): Promise<ServedFund[]> {
  const funds: ServedFund[] = [];
  for (let cursor: string | null = null, pages = 0; ; pages++) {
    // Bounded: a server that kept returning a cursor must not keep the bench here.
    if (pages > 10_000) throw new BenchError('BENCH_UNIVERSE', 'more than 10,000 pages of funds');
    const res = await fetch(
      `${url.replace(/\/$/, '')}/v1/funds?limit=${LIMIT_MAX}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { headers, signal: AbortSignal.timeout(30_000) },
    );
    if (res.status !== 200)
      throw new BenchError(
        'BENCH_UNIVERSE',
        `listing funds: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`,
      );
    const page = (await res.json()) as {
      data: Array<{
        code: string;
        name: string | null;
        min_return_date: string | null;
        max_return_date: string | null;
      }>;
      next_cursor: string | null;
    };
    for (const f of page.data)
      funds.push({ code: f.code, name: f.name, first: f.min_return_date, last: f.max_return_date });
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  if (funds.length === 0) throw new BenchError('BENCH_UNIVERSE', 'the server lists no funds');
  return funds;
}

export const SCENARIOS = [
  'fund',
  'trailing',
  'as-of',
  'calendar',
  'search',
  'batch-trailing',
  'batch-calendar',
  'mcp',
  'screen',
  'compare',
  'mixed',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const SCENARIO_LABELS: Record<ScenarioName, string> = {
  fund: 'fund metadata',
  trailing: 'latest trailing',
  'as-of': 'trailing as_of (random dates)',
  calendar: 'calendar (default year)',
  search: 'search q, limit 10',
  'batch-trailing': 'batch of 100, trailing',
  'batch-calendar': 'batch of 100, calendar',
  mcp: 'MCP tools/call',
  screen: 'screen: 2 filters, sort, 20 rows',
  compare: 'compare 10 funds × 6 figures',
  mixed: 'mixed workload',
};

/**
 * The mixed workload: what an API like this one sees, single lookups first (by
 * weight, in percent of requests). Documented in docs/benchmarks.md.
 */
const MIXED_WEIGHTS: Readonly<Record<Exclude<ScenarioName, 'mixed'>, number>> = {
  trailing: 35,
  fund: 15,
  'as-of': 15,
  calendar: 10,
  search: 10,
  'batch-trailing': 5,
  'batch-calendar': 3,
  mcp: 7,
  // Newer than the measured mix: kept out of it so its figures stay comparable.
  screen: 0,
  compare: 0,
};

/** Requests per scenario list: long enough that a rotation spreads over the universe. */
const LIST = 2000;
const BATCH_LIST = 100;

/** Not one of the universe's streams (builder/generate/prng.ts Stream): the bench's own. */
const BENCH_STREAM = 0xbe;

const MCP_TOOLS = ['getTrailingReturns', 'getFund', 'getCalendarReturns'] as const;
const SCREEN_SORTS = ['-return_5y', '-return_1y', 'return_3y', '-return_10y'] as const;

/** The requests of every scenario, over `funds`. */
export function scenarioRequests(
  funds: readonly ServedFund[],
  seed = 42,
): Record<ScenarioName, BenchRequest[]> {
  // The generator's own seeded stream (its own stream number), so two runs send the same requests.
  const rng = new Rng(seed, BENCH_STREAM, 0);
  const rand = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const codes = funds.map((f) => f.code);
  const withHistory = funds.filter((f) => f.first !== null && f.last !== null);
  const code = () => encodeURIComponent(pick(codes));
  const day = (f: ServedFund) => {
    const from = Date.parse(f.first as string);
    const to = Date.parse(f.last as string);
    return new Date(from + Math.floor(rand() * (to - from + 1))).toISOString().slice(0, 10);
  };
  const words = [
    ...new Set(funds.flatMap((f) => (f.name ?? '').split(/\s+/)).filter((w) => /^[A-Za-z]{3,}$/.test(w))),
  ];
  // A 3-6 letter piece of a word in a fund name (search is substring), or a code prefix.
  const query = () => {
    if (words.length === 0 || rand() < 0.3) return encodeURIComponent(pick(codes).slice(0, 3));
    const w = pick(words).toLowerCase();
    const start = Math.floor(rand() * Math.max(1, w.length - 3));
    return encodeURIComponent(w.slice(start, start + 3 + Math.floor(rand() * 4)));
  };
  const batch = () => JSON.stringify({ codes: Array.from({ length: BATCH_MAX_CODES }, () => pick(codes)) });
  const times = <T>(n: number, f: () => T) => Array.from({ length: n }, f);
  let id = 0;
  const mcp = (): BenchRequest => {
    const name = pick(MCP_TOOLS);
    return {
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name, arguments: { code: pick(codes) } },
      }),
    };
  };
  const single: Record<Exclude<ScenarioName, 'mixed'>, () => BenchRequest> = {
    fund: () => ({ method: 'GET', path: `/v1/funds/${code()}` }),
    trailing: () => ({ method: 'GET', path: `/v1/funds/${code()}/trailing-returns` }),
    'as-of': () => {
      if (withHistory.length === 0) return { method: 'GET', path: `/v1/funds/${code()}/trailing-returns` };
      const f = pick(withHistory);
      return {
        method: 'GET',
        path: `/v1/funds/${encodeURIComponent(f.code)}/trailing-returns?as_of=${day(f)}`,
      };
    },
    calendar: () => ({ method: 'GET', path: `/v1/funds/${code()}/calendar-returns` }),
    search: () => ({ method: 'GET', path: `/v1/funds?q=${query()}&limit=10` }),
    'batch-trailing': () => ({ method: 'POST', path: '/v1/trailing-returns/batch', body: batch() }),
    'batch-calendar': () => ({ method: 'POST', path: '/v1/calendar-returns/batch', body: batch() }),
    mcp,
    // Two figure bounds and a sort, drawn so pages differ: what a screening client asks.
    screen: () => ({
      method: 'GET',
      path:
        `/v1/screen?return_1y_min=${Math.floor(rand() * 30) - 10}&history_years_min=${1 + Math.floor(rand() * 15)}` +
        `&sort=${pick(SCREEN_SORTS)}&limit=20`,
    }),
    compare: () => ({
      method: 'GET',
      path: `/v1/compare?codes=${times(10, code).join(',')}&fields=return_1m,return_ytd,return_1y,return_3y,return_5y,history_years`,
    }),
  };
  const out = {} as Record<ScenarioName, BenchRequest[]>;
  for (const [name, make] of Object.entries(single) as Array<
    [Exclude<ScenarioName, 'mixed'>, () => BenchRequest]
  >)
    out[name] = times(name.startsWith('batch') ? BATCH_LIST : LIST, make);
  // Drawn by weight, request by request: the mix is interleaved, not in blocks.
  const total = Object.values(MIXED_WEIGHTS).reduce((a, b) => a + b, 0);
  const kinds = Object.entries(MIXED_WEIGHTS) as Array<[Exclude<ScenarioName, 'mixed'>, number]>;
  out.mixed = times(LIST, () => {
    let r = rand() * total;
    for (const [name, w] of kinds) {
      r -= w;
      if (r < 0) return single[name]();
    }
    return single.trailing();
  });
  return out;
}
