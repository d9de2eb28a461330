/**
 * `fundreturns bench`: the HTTP load scenarios against a local server on a snapshot
 * (beside the trivial uWS baseline) or a deployment (--url), reports under
 * bench/results/; `fundreturns bench compare A.json B.json` flags regressions.
 * Exit codes: 0 done, 1 failed or (compare) a regression, 2 usage error.
 */
import { resolve } from 'node:path';
import { boolFlag, floatFlag, intFlag, parseArgs, stringFlag, UsageError } from './args.js';
import { compareRuns, compareText, readRun } from './bench/compare.js';
import { pickTool } from './bench/load.js';
import { markdownReport, rerender, writeReports } from './bench/report.js';
import { EXTRA_SCENARIOS, type ExtraScenario, runBench } from './bench/run.js';
import { SCENARIOS, type ScenarioName } from './bench/workload.js';
import type { CliIo } from './io.js';
import { flagSpec } from './usage.js';

const ALL: ReadonlyArray<ScenarioName | ExtraScenario> = [...SCENARIOS, ...EXTRA_SCENARIOS];

export async function runBenchCommand(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, flagSpec('bench'), io.env);
  const [sub, ...rest] = args.positionals;
  if (sub === 'compare') {
    if (rest.length !== 2) throw new UsageError('bench compare: two JSON files are needed, A.json B.json');
    const [a, b] = rest;
    const c = compareRuns(readRun(a), readRun(b), floatFlag(args, 'noise-factor', 2, 0, 100));
    io.out(compareText(c, 'A', 'B'));
    return c.regressions > 0 ? 1 : 0;
  }
  if (sub === 'report') {
    if (rest.length !== 1 || !rest[0].endsWith('.json'))
      throw new UsageError("bench report: one run's JSON file is needed, RUN.json");
    const paths = rerender(readRun(rest[0]), rest[0]);
    io.err(`bench: wrote ${paths.md} and ${paths.svg}`);
    return 0;
  }
  if (sub !== undefined) throw new UsageError(`bench: unexpected argument ${JSON.stringify(sub)}`);

  const url = stringFlag(args, 'url');
  const key = stringFlag(args, 'key');
  if (url !== undefined && key === undefined) throw new UsageError('bench: --url needs --key KEY');
  if (url === undefined && key !== undefined) throw new UsageError('bench: --key goes with --url');
  if (url !== undefined && args.flags.has('snapshots'))
    throw new UsageError('bench: --snapshots is for a local server, --url for a deployment: not both');
  const list = stringFlag(args, 'scenarios');
  const scenarios = list === undefined ? ALL : list.split(',').map((s) => s.trim());
  for (const s of scenarios)
    if (!(ALL as readonly string[]).includes(s))
      throw new UsageError(`bench: no scenario ${JSON.stringify(s)}; there are ${ALL.join(', ')}`);
  if (
    url !== undefined &&
    scenarios.some((s) => (EXTRA_SCENARIOS as readonly string[]).includes(s)) &&
    list !== undefined
  )
    throw new UsageError('bench: hot-swap and cold-start need a local server, not --url');

  const wanted = stringFlag(args, 'tool', 'auto');
  if (wanted !== 'auto' && wanted !== 'wrk' && wanted !== 'autocannon')
    throw new UsageError(`bench: --tool is auto, wrk or autocannon, not ${JSON.stringify(wanted)}`);
  const tool = await pickTool(wanted);
  if (tool === null)
    throw new Error(
      wanted === 'wrk'
        ? 'bench: wrk is not installed (Debian: apt-get install wrk)'
        : 'bench needs a load generator: install wrk (Debian: apt-get install wrk), or run `npm ci` for autocannon',
    );
  const progress = io.isTty ? progressWriter() : undefined;
  const result = await runBench({
    snapshots: stringFlag(args, 'snapshots', './snapshots'),
    url,
    key,
    scenarios: scenarios as ReadonlyArray<ScenarioName | ExtraScenario>,
    seconds: intFlag(args, 'duration', 5, 1, 600),
    connections: intFlag(args, 'connections', 64, 1, 10_000),
    pairs: intFlag(args, 'pairs', 3, 1, 20),
    serverThreads: intFlag(args, 'threads', 2, 1, 256),
    loadThreads: intFlag(args, 'load-threads', 2, 1, 64),
    maxRequests: intFlag(args, 'max-requests', 1_000_000, 1, 1_000_000_000),
    tool,
    instructionRequests: intFlag(args, 'instructions', 500, 0, 100_000),
    onProgress: progress,
  });
  const paths = writeReports(result, resolve(stringFlag(args, 'out', './bench/results')));
  io.out(boolFlag(args, 'json') ? JSON.stringify(result, null, 2) : markdownReport(result));
  io.err(`bench: wrote ${paths.md}, ${paths.json} and ${paths.svg}`);
  return 0;
}

/** One line on the terminal, redrawn: where the run is and how long it has taken. */
function progressWriter(): (done: number, total: number, what: string) => void {
  const started = performance.now();
  return (done, total, what) => {
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    const line = `bench: ${String(Math.floor((done / total) * 100)).padStart(3)} % ${what} (${secs} s)`;
    process.stderr.write(`\r\x1b[K${line}${done >= total ? '\n' : ''}`);
  };
}
