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
type SingleScenario = Exclude<ScenarioName, 'mixed'>;

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
const MIXED_WEIGHTS: Readonly<Record<SingleScenario, number>> = {
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

/**
 * Draws over one universe from one seeded stream (the generator's, under the bench's
 * own stream number), so two runs send the same requests: every request takes its
 * random numbers from it in turn.
 */
class Draw {
  readonly #rng: Rng;
  readonly #codes: string[];
  readonly #withHistory: ServedFund[];
  readonly #words: string[];
  #id = 0;

  constructor(funds: readonly ServedFund[], seed: number) {
    this.#rng = new Rng(seed, BENCH_STREAM, 0);
    this.#codes = funds.map((f) => f.code);
    this.#withHistory = funds.filter((f) => f.first !== null && f.last !== null);
    this.#words = [
      ...new Set(funds.flatMap((f) => (f.name ?? '').split(/\s+/)).filter((w) => /^[A-Za-z]{3,}$/.test(w))),
    ];
  }

  rand(): number {
    return this.#rng.next();
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)];
  }

  times<T>(n: number, f: () => T): T[] {
    return Array.from({ length: n }, f);
  }

  rawCode(): string {
    return this.pick(this.#codes);
  }

  code(): string {
    return encodeURIComponent(this.rawCode());
  }

  /** A fund with history and a random day within it; null when no fund has history. */
  dated(): { code: string; day: string } | null {
    if (this.#withHistory.length === 0) return null;
    const f = this.pick(this.#withHistory);
    const from = Date.parse(f.first as string);
    const to = Date.parse(f.last as string);
    return {
      code: encodeURIComponent(f.code),
      day: new Date(from + Math.floor(this.rand() * (to - from + 1))).toISOString().slice(0, 10),
    };
  }

  /** A 3-6 letter piece of a word in a fund name (search is substring), or a code prefix. */
  query(): string {
    if (this.#words.length === 0 || this.rand() < 0.3) return encodeURIComponent(this.rawCode().slice(0, 3));
    const w = this.pick(this.#words).toLowerCase();
    const start = Math.floor(this.rand() * Math.max(1, w.length - 3));
    return encodeURIComponent(w.slice(start, start + 3 + Math.floor(this.rand() * 4)));
  }

  batch(): string {
    return JSON.stringify({ codes: this.times(BATCH_MAX_CODES, () => this.rawCode()) });
  }

  /** JSON-RPC ids count up over the whole run, as a client's would. */
  nextId(): number {
    return ++this.#id;
  }
}

/** How each scenario (but the mix) draws one request; the order is the order lists are drawn in. */
const SINGLE: Readonly<Record<SingleScenario, (d: Draw) => BenchRequest>> = {
  fund: (d) => ({ method: 'GET', path: `/v1/funds/${d.code()}` }),
  trailing: (d) => ({ method: 'GET', path: `/v1/funds/${d.code()}/trailing-returns` }),
  'as-of': (d) => {
    const f = d.dated();
    if (f === null) return { method: 'GET', path: `/v1/funds/${d.code()}/trailing-returns` };
    return { method: 'GET', path: `/v1/funds/${f.code}/trailing-returns?as_of=${f.day}` };
  },
  calendar: (d) => ({ method: 'GET', path: `/v1/funds/${d.code()}/calendar-returns` }),
  search: (d) => ({ method: 'GET', path: `/v1/funds?q=${d.query()}&limit=10` }),
  'batch-trailing': (d) => ({ method: 'POST', path: '/v1/trailing-returns/batch', body: d.batch() }),
  'batch-calendar': (d) => ({ method: 'POST', path: '/v1/calendar-returns/batch', body: d.batch() }),
  mcp: (d) => {
    const name = d.pick(MCP_TOOLS);
    return {
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: d.nextId(),
        method: 'tools/call',
        params: { name, arguments: { code: d.rawCode() } },
      }),
    };
  },
  // Two figure bounds and a sort, drawn so pages differ: what a screening client asks.
  screen: (d) => ({
    method: 'GET',
    path:
      `/v1/screen?return_1y_min=${Math.floor(d.rand() * 30) - 10}&history_years_min=${1 + Math.floor(d.rand() * 15)}` +
      `&sort=${d.pick(SCREEN_SORTS)}&limit=20`,
  }),
  compare: (d) => ({
    method: 'GET',
    path: `/v1/compare?codes=${d.times(10, () => d.code()).join(',')}&fields=return_1m,return_ytd,return_1y,return_3y,return_5y,history_years`,
  }),
};

const MIXED_KINDS = Object.entries(MIXED_WEIGHTS) as Array<[SingleScenario, number]>;
const MIXED_TOTAL = MIXED_KINDS.reduce((a, [, w]) => a + w, 0);

/** One scenario of the mix, drawn by weight. */
function mixedKind(d: Draw): SingleScenario {
  let r = d.rand() * MIXED_TOTAL;
  for (const [name, w] of MIXED_KINDS) {
    r -= w;
    if (r < 0) return name;
  }
  return 'trailing';
}

/** The requests of every scenario, over `funds`. */
export function scenarioRequests(
  funds: readonly ServedFund[],
  seed = 42,
): Record<ScenarioName, BenchRequest[]> {
  const d = new Draw(funds, seed);
  const out = {} as Record<ScenarioName, BenchRequest[]>;
  for (const [name, make] of Object.entries(SINGLE) as Array<[SingleScenario, (d: Draw) => BenchRequest]>)
    out[name] = d.times(name.startsWith('batch') ? BATCH_LIST : LIST, () => make(d));
  // Drawn by weight, request by request: the mix is interleaved, not in blocks.
  out.mixed = d.times(LIST, () => SINGLE[mixedKind(d)](d));
  return out;
}
