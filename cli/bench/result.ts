/** What a bench run reports: each scenario's pairs summed up, and the run's own facts. */
import { availableParallelism, loadavg } from 'node:os';
import type { LoadResult } from './load.js';
import { commitOf, packageRoot } from './processes.js';
import type { BenchOptions, BenchResult, ScenarioResult, ScenarioRun } from './run.js';
import { SCENARIO_LABELS, type ScenarioName } from './workload.js';

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
    rss_mib: m.rss === null || Number.isNaN(m.rss) ? null : Math.round(m.rss),
  };
}
