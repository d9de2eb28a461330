/**
 * One bench run: against a local server started on a snapshot, with the trivial uWS
 * baseline beside it in alternating pairs (every figure has its ratio), plus a hot
 * swap under load and a cold start; or against a deployment (--url), absolute figures.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { now } from '../../core/clock.js';
import {
  type CountCase,
  type CountSettings,
  casesOf,
  countBaseline,
  countServer,
  hasCallgrind,
  INSTRUCTION_CASES,
  INSTRUCTION_WINDOWS,
  instructionCases,
} from './instructions.js';
import { BenchError, type BenchRequest, checkTarget, type LoadResult, runLoad } from './load.js';
import { coldStartOf, hotSwapUnderLoad, type Local, startLocal } from './local-server.js';
import { baselineCommand, freePort, rssMiB, type Started, startProcess } from './processes.js';
import {
  type BenchOptions,
  type BenchResult,
  benchResult,
  EXTRA_SCENARIOS,
  type ExtraScenario,
  type InstructionFigures,
  type ScenarioResult,
  scenarioResult,
} from './result.js';
import { fetchUniverse, SCENARIOS, type ScenarioName, scenarioRequests } from './workload.js';

/** The least warm-up before counting instructions (requests; a batch a tenth of it). */
const MIN_INSTRUCTION_WARMUP = 5000;

/** Scenarios whose answers are several KB: their baseline answers with a body of the same size. */
const SIZED_SCENARIOS: ReadonlySet<ScenarioName> = new Set(['screen', 'compare']);

export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const started = performance.now();
  // The service's clock (a test moves it): the run's name and time.
  const startedAt = new Date(now()).toISOString();
  const work = mkdtempSync(join(tmpdir(), 'fundreturns-bench-'));
  const children: Started[] = [];
  /** Started outside startProcess (the cold start). */
  const loose = new Set<ChildProcess>();
  const interrupted = onInterrupt(children, loose, work);
  try {
    const local = o.url === undefined ? await startLocal(o, work) : null;
    if (local !== null) children.push(local.server);
    const { url, key } = local ?? deployment(o);
    const headers = { Authorization: `Bearer ${key}`, Accept: 'application/json' };
    const funds = await fetchUniverse(url, headers);
    const lists = scenarioRequests(funds);
    const wanted = SCENARIOS.filter((s) => o.scenarios.includes(s));

    let baseline: Baseline | null = null;
    if (local !== null && wanted.length > 0) {
      baseline = await startBaseline(url, headers, lists['batch-trailing'][0].body, o.serverThreads);
      children.push(baseline.proc);
    }

    const extra = EXTRA_SCENARIOS.filter((s) => local !== null && o.scenarios.includes(s));
    const counting =
      local !== null && o.instructionRequests > 0 && hasCallgrind()
        ? instructionCases(wanted.filter((s) => INSTRUCTION_CASES.some((c) => c.name === s)))
        : [];
    const total =
      wanted.length * o.pairs * (baseline ? 2 : 1) +
      (wanted.length > 0 ? 1 : 0) +
      extra.length +
      (counting.length > 0 ? 1 : 0);
    let done = 0;
    const run: Run = {
      o,
      url,
      headers,
      lists,
      load: loader(o, headers, work, local === null),
      step: (what) => o.onProgress?.(done++, total, what),
    };

    const scenarios = await measureScenarios(run, wanted, baseline);
    if (baseline) await baseline.proc.stop();
    const rss = local === null ? null : rssMiB(local.server.child.pid!);
    const extras =
      local === null
        ? { hotSwap: null, coldStart: null, instructions: null }
        : await localExtras(run, local, { extra, counting, scenarios, work, loose });
    o.onProgress?.(total, total, 'done');
    const target = local === null ? url : resolve(o.snapshots);
    const facts = { startedAt, started, target, local: local !== null, funds: funds.length };
    const snapshot = local?.current ?? null;
    return benchResult(o, facts, snapshot, { scenarios, ...extras, rss });
  } finally {
    interrupted.off();
    for (const c of children) await c.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** What every step of a run uses: its options, target, requests, load runner and progress. */
interface Run {
  o: BenchOptions;
  url: string;
  headers: Record<string, string>;
  lists: Record<ScenarioName, BenchRequest[]>;
  load: Load;
  step: (what: string) => void;
}

/** Both JITs warmed, then each wanted scenario in pairs with the baseline (when there is one). */
async function measureScenarios(
  run: Run,
  wanted: readonly ScenarioName[],
  baseline: Baseline | null,
): Promise<ScenarioResult[]> {
  const { o, url, headers, lists, load, step } = run;
  // Both JITs warm before anything counts.
  if (wanted.length > 0) {
    step('warming up');
    const warm = Math.min(2, o.seconds);
    if (baseline) await load(baseline.url, 'warm-baseline', lists.mixed, warm);
    await load(url, 'warm', lists.mixed, warm);
  }
  const scenarios: ScenarioResult[] = [];
  for (const name of wanted) {
    const baseRequests =
      baseline && SIZED_SCENARIOS.has(name) ? await sizedRequests(url, lists[name], headers) : lists[name];
    scenarios.push(
      await measurePairs(name, o.pairs, baseline?.url ?? null, url, lists[name], baseRequests, load, step),
    );
  }
  return scenarios;
}

interface Extras {
  hotSwap: BenchResult['hot_swap'];
  coldStart: BenchResult['cold_start'];
  instructions: BenchResult['instructions'];
}

/**
 * What only a local server allows, after the scenarios: a hot swap under load, then
 * (the server stopped) a cold start and the instruction counts, which are added to
 * the scenarios they belong to.
 */
async function localExtras(
  run: Run,
  local: Local,
  parts: {
    extra: readonly ExtraScenario[];
    counting: typeof INSTRUCTION_CASES;
    scenarios: ScenarioResult[];
    work: string;
    loose: Set<ChildProcess>;
  },
): Promise<Extras> {
  const { o, url, headers, lists, load, step } = run;
  const { extra, counting, scenarios, work, loose } = parts;
  let hotSwap: Extras['hotSwap'] = null;
  if (extra.includes('hot-swap')) {
    step('hot swap under load');
    hotSwap = await hotSwapUnderLoad(
      local,
      url,
      lists.trailing,
      (requests, seconds) => load(url, 'hot-swap', requests, seconds),
      Math.max(3, o.seconds),
    );
  }
  await local.server.stop();
  let coldStart: Extras['coldStart'] = null;
  if (extra.includes('cold-start')) {
    step('cold start');
    coldStart = await coldStartOf(local, headers, lists.trailing[0].path, loose);
  }
  let instructions: Extras['instructions'] = null;
  if (counting.length > 0) {
    step('instructions per request under callgrind');
    // V8 is still compiling the path's functions a few thousand requests in: a shorter
    // warm-up counts its compiles, not the path (bench/reports/instructions.md).
    const warmup = Math.max(o.instructionRequests * 10, MIN_INSTRUCTION_WARMUP);
    const settings = { requests: o.instructionRequests, warmup, windows: INSTRUCTION_WINDOWS };
    const figures = await countInstructions(local, casesOf(counting, lists), settings, headers, work);
    for (const s of scenarios) {
      const f = figures.get(s.name);
      if (f !== undefined) s.instructions = f;
    }
    instructions = settings;
  }
  return { hotSwap, coldStart, instructions };
}

interface Baseline {
  url: string;
  proc: Started;
}

/** The trivial uWS server beside ours; its POST answers with a body the size of our batch answer. */
async function startBaseline(
  url: string,
  headers: Record<string, string>,
  batchBody: string | undefined,
  threads: number,
): Promise<Baseline> {
  const res = await fetch(`${url}/v1/trailing-returns/batch`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: batchBody,
  });
  const postBytes = (await res.arrayBuffer()).byteLength;
  const port = await freePort();
  const proc = await startProcess(
    [...baselineCommand(), String(port), String(threads), String(postBytes)],
    /baseline listening/,
  );
  return { url: `http://127.0.0.1:${port}`, proc };
}

/** Interrupted (Ctrl-C, a kill): the servers a run started go with it, and so does the scratch directory. */
function onInterrupt(children: readonly Started[], loose: ReadonlySet<ChildProcess>, work: string) {
  const interrupted = (signal: NodeJS.Signals) => {
    for (const c of children) c.child.kill('SIGKILL');
    for (const c of loose) c.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  return {
    off: () => {
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
    },
  };
}

/** `--url` and `--key`: a deployment to load instead of a local server. */
function deployment(o: BenchOptions): { url: string; key: string } {
  const url = checkTarget(o.url as string, true).href.replace(/\/$/, '');
  if (o.key === undefined) throw new BenchError('BENCH_NO_KEY', '--url needs --key KEY');
  return { url, key: o.key };
}

type Load = (
  target: string,
  name: string,
  requests: readonly BenchRequest[],
  seconds?: number,
) => Promise<LoadResult>;

/** One load run against `target` with the run's settings (`seconds` for the warm-up and hot swap). */
function loader(o: BenchOptions, headers: Record<string, string>, workDir: string, remote: boolean): Load {
  return (target, name, requests, seconds = o.seconds) =>
    runLoad(o.tool, {
      url: target,
      requests,
      headers,
      seconds,
      connections: o.connections,
      threads: o.loadThreads,
      maxRequests: o.maxRequests,
      workDir,
      name,
      allowRemote: remote,
    });
}

/** One scenario's pairs: the baseline then ours, back to back, so a pair shares what else the machine does. */
async function measurePairs(
  name: ScenarioName,
  pairs: number,
  baselineUrl: string | null,
  url: string,
  requests: readonly BenchRequest[],
  baselineRequests: readonly BenchRequest[],
  load: Load,
  step: (what: string) => void,
): Promise<ScenarioResult> {
  const ours: LoadResult[] = [];
  const base: LoadResult[] = [];
  for (let p = 0; p < pairs; p++) {
    if (baselineUrl !== null) {
      step(`${name}: baseline, pair ${p + 1}/${pairs}`);
      base.push(await load(baselineUrl, `${name}-baseline`, baselineRequests));
    }
    step(`${name}${baselineUrl !== null ? `: ours, pair ${p + 1}/${pairs}` : `: run ${p + 1}/${pairs}`}`);
    ours.push(await load(url, name, requests));
  }
  return scenarioResult(name, ours, base);
}

/** The baseline's requests for answers of several KB: a body of the same size (/sized/N), not its small one. */
async function sizedRequests(
  url: string,
  requests: readonly BenchRequest[],
  headers: Record<string, string>,
): Promise<BenchRequest[]> {
  const res = await fetch(`${url}${requests[0].path}`, { headers });
  const bytes = (await res.arrayBuffer()).byteLength;
  return requests.map(() => ({ method: 'GET', path: `/sized/${bytes}` }));
}

/**
 * Each case counted on one server thread under callgrind (the served snapshot and
 * store of the run), then on the trivial server for bodies of the same sizes.
 */
async function countInstructions(
  local: Local,
  cases: CountCase[],
  settings: CountSettings,
  headers: Record<string, string>,
  work: string,
): Promise<Map<string, InstructionFigures>> {
  const dumps = join(work, 'callgrind');
  mkdirSync(dumps);
  const counted = await countServer(
    (port) => [...local.serveArgs(port, 1), '--access-log-sample', '0'],
    /serving on http/,
    () => cases,
    settings,
    dumps,
    headers,
  );
  const base = await countBaseline(counted, cases, settings, dumps);
  const out = new Map<string, InstructionFigures>();
  for (const c of counted) {
    const b = base.find((x) => x.name === c.name);
    if (b === undefined) continue;
    const server = Math.min(...c.windows);
    const baseline = Math.min(...b.windows);
    out.set(c.name, {
      server: Math.round(server),
      baseline: Math.round(baseline),
      ratio: server / baseline,
      windows: c.windows.map(Math.round),
      baseline_windows: b.windows.map(Math.round),
      body_bytes: c.bodyBytes,
    });
  }
  return out;
}
