/**
 * `bench compare A.json B.json`: which scenarios got slower from run A to run B by
 * more than the runs' own noise. Where both runs counted server instructions per
 * request (callgrind), those are compared: as a multiple of the trivial server's for
 * the same body, they repeat within about a percent, so a rise beyond
 * INSTRUCTIONS_ALLOWED is a regression. Otherwise each run measured its noise (the
 * spread of its alternating pairs); a drop counts as a regression when it exceeds
 * `factor` times the two spreads combined, and never below a floor, so two noiseless
 * runs do not flag a 1 % wobble.
 */
import { readFileSync } from 'node:fs';
import { BenchError } from './load.js';
import type { BenchResult } from './result.js';

interface Comparison {
  scenario: string;
  /**
   * 'instructions' (server ÷ baseline instructions per request) when both runs counted
   * them, else 'ratio' when both have baseline ratios, else 'req/s'.
   */
  metric: 'instructions' | 'ratio' | 'req/s';
  a: number;
  b: number;
  /** (b − a) / a. */
  change: number;
  /** The drop (a rise, for instructions) beyond which this scenario regressed. */
  allowed: number;
  regression: boolean;
}

export interface CompareResult {
  rows: Comparison[];
  /** Scenarios in only one of the runs. */
  unmatched: string[];
  /** Hot-swap errors in B (any is a regression: a swap must drop no request). */
  hotSwapErrors: number;
  regressions: number;
}

/** The smallest drop ever flagged. */
export const MIN_ALLOWED = 0.03;

/**
 * The rise in instructions flagged: a run's least window repeats within about a
 * percent (bench/reports/instructions.md); the rest is room for a JIT that settled a
 * little differently.
 */
export const INSTRUCTIONS_ALLOWED = 0.05;

export function readRun(path: string): BenchResult {
  let r: Partial<BenchResult>;
  try {
    r = JSON.parse(readFileSync(path, 'utf8')) as Partial<BenchResult>;
  } catch (e) {
    throw new BenchError('BENCH_BAD_RUN', `${path}: cannot read a bench run (${(e as Error).message})`);
  }
  if (r.format !== 1 || !Array.isArray(r.scenarios))
    throw new BenchError('BENCH_BAD_RUN', `${path} is not a fundreturns bench JSON file (format 1)`);
  return r as BenchResult;
}

export function compareRuns(a: BenchResult, b: BenchResult, factor = 2): CompareResult {
  const rows: Comparison[] = [];
  const inB = new Map(b.scenarios.map((s) => [s.name, s]));
  const unmatched: string[] = b.scenarios
    .filter((s) => !a.scenarios.some((x) => x.name === s.name))
    .map((s) => s.name);
  for (const sa of a.scenarios) {
    const sb = inB.get(sa.name);
    if (sb === undefined) {
      unmatched.push(sa.name);
      continue;
    }
    if (sa.instructions !== undefined && sb.instructions !== undefined) {
      const va = sa.instructions.ratio;
      const vb = sb.instructions.ratio;
      const change = (vb - va) / va;
      rows.push({
        scenario: sa.name,
        metric: 'instructions',
        a: va,
        b: vb,
        change,
        allowed: INSTRUCTIONS_ALLOWED,
        regression: change > INSTRUCTIONS_ALLOWED,
      });
      continue;
    }
    const byRatio = sa.ratio !== null && sb.ratio !== null;
    const va = byRatio ? (sa.ratio as number) : sa.ours.rps;
    const vb = byRatio ? (sb.ratio as number) : sb.ours.rps;
    const change = va > 0 ? (vb - va) / va : 0;
    const allowed = Math.max(MIN_ALLOWED, factor * Math.hypot(sa.spread, sb.spread));
    rows.push({
      scenario: sa.name,
      metric: byRatio ? 'ratio' : 'req/s',
      a: va,
      b: vb,
      change,
      allowed,
      regression: -change > allowed,
    });
  }
  const hotSwapErrors = b.hot_swap ? b.hot_swap.errors + b.hot_swap.non2xx : 0;
  return {
    rows,
    unmatched,
    hotSwapErrors,
    regressions: rows.filter((r) => r.regression).length + (hotSwapErrors > 0 ? 1 : 0),
  };
}

export function compareText(c: CompareResult, aName: string, bName: string): string {
  const fmt = (r: Comparison, v: number) =>
    r.metric === 'instructions'
      ? `${v.toFixed(2)}× instr`
      : r.metric === 'ratio'
        ? `${(v * 100).toFixed(1)} %`
        : `${Math.round(v).toLocaleString('en-US')}/s`;
  return [
    // Allowed: the drop in a ratio or req/s, the rise in instructions, that still passes.
    `| scenario | ${aName} | ${bName} | change | allowed | verdict |`,
    '|---|---|---|---|---|---|',
    ...c.rows.map(
      (r) =>
        `| ${r.scenario} | ${fmt(r, r.a)} | ${fmt(r, r.b)} | ${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)} % | ${(r.allowed * 100).toFixed(1)} % | ${r.regression ? 'REGRESSION' : 'ok'} |`,
    ),
    ...(c.unmatched.length > 0 ? ['', `In one run only (not compared): ${c.unmatched.join(', ')}.`] : []),
    ...(c.hotSwapErrors > 0
      ? ['', `REGRESSION: ${c.hotSwapErrors} failed requests during the hot swap in ${bName}.`]
      : []),
    '',
    c.regressions === 0 ? 'No regression beyond the measured noise.' : `${c.regressions} regression(s).`,
  ].join('\n');
}
