import { describe, expect, it } from 'vitest';
import { compareRuns, INSTRUCTIONS_ALLOWED, MIN_ALLOWED } from './compare.js';
import type { BenchResult, ScenarioResult } from './result.js';

const load = (rps: number) => ({
  rps,
  p50ms: 0.2,
  p90ms: 0.5,
  p99ms: 2,
  requests: rps * 5,
  errors: 0,
  non2xx: 0,
});

function scenario(name: ScenarioResult['name'], ratios: number[]): ScenarioResult {
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return {
    name,
    label: name,
    ours: load(50_000 * median),
    baseline: load(50_000),
    runs: ratios.map((r) => ({ rps: 50_000 * r, baselineRps: 50_000, ratio: r })),
    ratio: median,
    spread: (sorted.at(-1)! - sorted[0]) / median,
  };
}

function run(scenarios: ScenarioResult[], hotSwapErrors = 0): BenchResult {
  return {
    format: 1,
    started_at: '2026-11-23T15:00:00.000Z',
    seconds_total: 60,
    commit: 'abc1234',
    mode: 'local',
    target: '/tmp/snapshots',
    tool: 'wrk',
    machine: { cpus: 2, loadavg: [1, 1, 1], node: 'v20', platform: 'linux-x64' },
    settings: {
      seconds: 5,
      connections: 64,
      pairs: 3,
      server_threads: 2,
      load_threads: 2,
      max_requests: 1e6,
    },
    universe: { funds: 2000, snapshot: 'x' },
    scenarios,
    hot_swap: { requests: 1000, errors: hotSwapErrors, non2xx: 0, swaps: 2, served: [], rps: 1, p99ms: 1 },
    cold_start: null,
    rss_mib: null,
  };
}

describe('bench compare', () => {
  const a = run([scenario('trailing', [0.8, 0.82, 0.84]), scenario('fund', [0.9, 0.91, 0.92])]);

  it('passes a run against an equal run', () => {
    const c = compareRuns(a, structuredClone(a));
    expect(c.regressions).toBe(0);
    expect(c.rows.map((r) => r.change)).toEqual([0, 0]);
  });

  it('flags a planted regression, and only the scenario that dropped', () => {
    const b = run([scenario('trailing', [0.6, 0.61, 0.62]), scenario('fund', [0.9, 0.91, 0.92])]);
    const c = compareRuns(a, b);
    expect(c.regressions).toBe(1);
    expect(c.rows.find((r) => r.scenario === 'trailing')).toMatchObject({
      metric: 'ratio',
      regression: true,
    });
    expect(c.rows.find((r) => r.scenario === 'fund')?.regression).toBe(false);
  });

  it('forgives a drop within twice the runs’ combined spread, and flags the same drop when the runs were steady', () => {
    // 10 % down, but each run's pairs spread over 10 %: noise, not a regression.
    const noisyA = run([scenario('trailing', [0.75, 0.8, 0.83])]);
    const noisyB = run([scenario('trailing', [0.68, 0.72, 0.75])]);
    expect(compareRuns(noisyA, noisyB).regressions).toBe(0);
    const steadyA = run([scenario('trailing', [0.8, 0.8, 0.8])]);
    const steadyB = run([scenario('trailing', [0.72, 0.72, 0.72])]);
    const c = compareRuns(steadyA, steadyB);
    expect(c.rows[0].allowed).toBe(MIN_ALLOWED);
    expect(c.regressions).toBe(1);
  });

  it('counts failed requests during the hot swap as a regression', () => {
    expect(compareRuns(a, run(a.scenarios, 3)).regressions).toBe(1);
  });

  it('compares absolute throughput when a run has no baseline (--url), and lists scenarios only one run has', () => {
    const urlA = run([{ ...scenario('trailing', [1, 1, 1]), ratio: null }]);
    const urlB = run([
      { ...scenario('trailing', [0.5, 0.5, 0.5]), ratio: null },
      scenario('mcp', [0.1, 0.1, 0.1]),
    ]);
    const c = compareRuns(urlA, urlB);
    expect(c.rows[0]).toMatchObject({ metric: 'req/s', regression: true });
    expect(c.unmatched).toEqual(['mcp']);
  });

  it('compares instructions per request where both runs counted them: a rise over 5 % regresses, however steady the throughput', () => {
    const counted = (name: ScenarioResult['name'], ratios: number[], server: number) => ({
      ...scenario(name, ratios),
      instructions: {
        server,
        baseline: 10_000,
        ratio: server / 10_000,
        windows: [server],
        baseline_windows: [10_000],
        body_bytes: 500,
      },
    });
    const before = run([
      counted('trailing', [0.8, 0.8, 0.8], 18_000),
      counted('mcp', [0.1, 0.1, 0.1], 40_000),
    ]);
    // Throughput as good or better, but 10 % more instructions for trailing, 4 % for MCP.
    const after = run([
      counted('trailing', [0.9, 0.9, 0.9], 19_800),
      counted('mcp', [0.3, 0.3, 0.3], 41_600),
    ]);
    const c = compareRuns(before, after);
    expect(c.rows.map((r) => [r.scenario, r.metric, r.regression])).toEqual([
      ['trailing', 'instructions', true],
      ['mcp', 'instructions', false],
    ]);
    expect(c.rows[0].change).toBeCloseTo(0.1, 9);
    expect(c.rows[0].allowed).toBe(INSTRUCTIONS_ALLOWED);
    // Only one run counted them: its ratios are compared as before.
    const plain = compareRuns(run([scenario('trailing', [0.8, 0.8, 0.8])]), after);
    expect(plain.rows[0]).toMatchObject({ metric: 'ratio', regression: false });
  });
});
