/** What a bench run reports: each scenario's pairs summed up, and the run's own facts. */
import { availableParallelism, loadavg } from 'node:os';
import type { LoadResult, LoadTool } from './load.js';
import { commitOf, packageRoot } from './processes.js';
import { SCENARIO_LABELS, type ScenarioName } from './workload.js';

/** Scenarios beyond the request mixes: only against a local server. */
export const EXTRA_SCENARIOS = ['hot-swap', 'cold-start'] as const;
export type ExtraScenario = (typeof EXTRA_SCENARIOS)[number];

export interface BenchOptions {
  /** Local mode: the snapshots directory to serve (its CURRENT). */
  snapshots: string;
  /** Deployment mode: its base URL and an API key. */
  url?: string;
  key?: string;
  scenarios: ReadonlyArray<ScenarioName | ExtraScenario>;
  /** Seconds per measured run. */
  seconds: number;
  connections: number;
  /** Alternating pairs per scenario (runs per scenario against a URL). */
  pairs: number;
  /** Worker threads of the local server and the baseline. */
  serverThreads: number;
  /** wrk threads. */
  loadThreads: number;
  maxRequests: number;
  tool: LoadTool;
  /**
   * Requests per counted window of the instruction count (warm-up: ten times as many, at least 5,000);
   * 0: none. Counted only against a local server, where valgrind is installed.
   */
  instructionRequests: number;
  /** Called between runs with what it is doing (the progress line). */
  onProgress?: (done: number, total: number, what: string) => void;
}

interface ScenarioRun {
  rps: number;
  baselineRps: number | null;
  ratio: number | null;
}

export interface ScenarioResult {
  name: ScenarioName;
  label: string;
  /** The median run's figures (by throughput). */
  ours: LoadResult;
  baseline: LoadResult | null;
  runs: ScenarioRun[];
  /** Median of the pairs' ratios; null against a URL. */
  ratio: number | null;
  /**
   * Run-to-run noise: (max − min) / median of the pairs' ratios (of throughput against
   * a URL). `compare` judges a drop against it.
   */
  spread: number;
  /**
   * Server instructions per request (callgrind, instructions.ts): the least of the
   * counted windows, beside the trivial server's for a body of the same size; absent
   * when not counted.
   */
  instructions?: InstructionFigures;
}

export interface InstructionFigures {
  server: number;
  baseline: number;
  /** server ÷ baseline. */
  ratio: number;
  windows: number[];
  baseline_windows: number[];
  body_bytes: number;
}

export interface BenchResult {
  format: 1;
  started_at: string;
  seconds_total: number;
  commit: string | null;
  mode: 'local' | 'url';
  target: string;
  tool: LoadTool;
  machine: { cpus: number; loadavg: number[]; node: string; platform: string };
  settings: {
    seconds: number;
    connections: number;
    pairs: number;
    server_threads: number | null;
    load_threads: number;
    max_requests: number;
  };
  universe: { funds: number; snapshot: string | null };
  scenarios: ScenarioResult[];
  hot_swap: {
    requests: number;
    errors: number;
    non2xx: number;
    swaps: number;
    /** Snapshot ids /healthz reported while the load ran, in order. */
    served: string[];
    rps: number;
    p99ms: number;
  } | null;
  cold_start: { ms: number; rss_mib: number } | null;
  /** How the instructions were counted (each scenario's figures are with it); null: not counted. */
  instructions?: { requests: number; warmup: number; windows: number } | null;
  /** Our server's RSS after the load runs (local). */
  rss_mib: number | null;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const relRange = (xs: readonly number[]) => {
  const m = median(xs);
  return m > 0 ? (Math.max(...xs) - Math.min(...xs)) / m : 0;
};

/** A scenario's pairs: each run's ratio, the median run of each side, the median ratio and the spread. */
export function scenarioResult(name: ScenarioName, ours: LoadResult[], base: LoadResult[]): ScenarioResult {
  const runs: ScenarioRun[] = ours.map((r, i) => ({
    rps: r.rps,
    baselineRps: base[i]?.rps ?? null,
    ratio: base[i] ? r.rps / base[i].rps : null,
  }));
  const byRps = (xs: LoadResult[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor((xs.length - 1) / 2)];
  const ratios = runs.flatMap((r) => (r.ratio === null ? [] : [r.ratio]));
  return {
    name,
    label: SCENARIO_LABELS[name],
    ours: byRps(ours),
    baseline: base.length > 0 ? byRps(base) : null,
    runs,
    ratio: ratios.length > 0 ? median(ratios) : null,
    spread: relRange(ratios.length > 0 ? ratios : runs.map((r) => r.rps)),
  };
}

interface RunFacts {
  startedAt: string;
  started: number;
  target: string;
  local: boolean;
  funds: number;
}

interface Measured {
  scenarios: ScenarioResult[];
  hotSwap: BenchResult['hot_swap'];
  coldStart: BenchResult['cold_start'];
  instructions: BenchResult['instructions'];
  rss: number | null;
}

/** The run's report: what was measured, on what machine, with which settings. */
export function benchResult(
  o: BenchOptions,
  run: RunFacts,
  snapshot: BenchResult['universe']['snapshot'],
  m: Measured,
): BenchResult {
  return {
    format: 1,
    started_at: run.startedAt,
    seconds_total: Math.round((performance.now() - run.started) / 100) / 10,
    commit: commitOf(packageRoot()),
    mode: run.local ? 'local' : 'url',
    target: run.target,
    tool: o.tool,
    machine: {
      cpus: availableParallelism(),
      loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
    settings: {
      seconds: o.seconds,
      connections: o.connections,
      pairs: o.pairs,
      server_threads: run.local ? o.serverThreads : null,
      load_threads: o.loadThreads,
      max_requests: o.maxRequests,
    },
    universe: { funds: run.funds, snapshot },
    scenarios: m.scenarios,
    hot_swap: m.hotSwap,
    cold_start: m.coldStart,
    instructions: m.instructions,
    rss_mib: m.rss === null || Number.isNaN(m.rss) ? null : Math.round(m.rss),
  };
}
