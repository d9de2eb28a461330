/**
 * `fundreturns bench`: the HTTP load scenarios against a local server on a snapshot
 * (beside the trivial uWS baseline) or a deployment (--url), reports under
 * bench/results/; `fundreturns bench compare A.json B.json` flags regressions.
 * Exit codes: 0 done, 1 failed or (compare) a regression, 2 usage error.
 */
import { resolve } from 'node:path';
import { compareRuns, compareText, readRun } from '../bench/compare.js';
import { pickTool } from '../bench/load.js';
import { markdownReport, rerender, writeReports } from '../bench/report.js';
import { EXTRA_SCENARIOS, type ExtraScenario } from '../bench/result.js';
import { runBench } from '../bench/run.js';
import { SCENARIOS, type ScenarioName } from '../bench/workload.js';
import { type ParsedArgs, UsageError } from '../shared/args.js';
import { type Command, parseCommand } from '../shared/command.js';
import {
  intOption,
  JSON_OUTPUT,
  numberOption,
  SNAPSHOTS,
  stringOption,
  stringOptionOr,
} from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';

const ALL: ReadonlyArray<ScenarioName | ExtraScenario> = [...SCENARIOS, ...EXTRA_SCENARIOS];

const URL_FLAG = stringOption('url', {
  value: 'URL',
  text: '[--url URL --key KEY]',
  help: 'load-test this deployment instead of a local server (with --key)',
});
const KEY = stringOption('key', { value: 'KEY', text: '', help: 'the API key for --url' });
const SCENARIOS_FLAG = stringOptionOr('scenarios', 'all', {
  help: `the scenarios to run, comma-separated (${ALL.join(', ')})`,
});
const DURATION = intOption('duration', { default: 5, min: 1, max: 600, help: 'seconds per run' });
const CONNECTIONS = intOption('connections', {
  default: 64,
  min: 1,
  max: 10_000,
  help: 'connections the load generator keeps open',
});
const PAIRS = intOption('pairs', {
  default: 3,
  min: 1,
  max: 20,
  help: 'alternating runs of the server and the baseline per scenario',
});
const SERVER_THREADS = intOption('threads', {
  default: 2,
  min: 1,
  max: 256,
  help: "the local server's threads",
});
const LOAD_THREADS = intOption('load-threads', {
  default: 2,
  min: 1,
  max: 64,
  help: "the load generator's threads",
});
const MAX_REQUESTS = intOption('max-requests', {
  default: 1_000_000,
  min: 1,
  max: 1_000_000_000,
  help: 'requests per run at most',
});
const INSTRUCTIONS = intOption('instructions', {
  default: 500,
  min: 0,
  max: 100_000,
  help: 'requests per case whose server instructions are counted under valgrind, when it is installed (0: none)',
});
const TOOL = stringOptionOr('tool', 'auto', {
  value: 'auto|wrk|autocannon',
  help: 'the load generator (auto: wrk when installed, else autocannon)',
});
const OUT = stringOptionOr('out', './bench/results', { help: 'where the reports are written' });
const NOISE_FACTOR = numberOption('noise-factor', {
  default: 2,
  min: 0,
  max: 100,
  help: "compare: a drop is a regression beyond this many times the two runs' spreads combined",
});

export const bench: Command = {
  name: 'bench',
  summary: 'load-test a local server (beside a trivial uWS baseline) or a deployment; compare two runs',
  forms: [
    {
      flags: [
        SNAPSHOTS,
        URL_FLAG,
        KEY,
        SCENARIOS_FLAG,
        DURATION,
        CONNECTIONS,
        PAIRS,
        SERVER_THREADS,
        LOAD_THREADS,
        MAX_REQUESTS,
        INSTRUCTIONS,
        TOOL,
        OUT,
        JSON_OUTPUT,
      ],
    },
    { args: 'compare A.json B.json', flags: [NOISE_FACTOR] },
    { args: 'report RUN.json', flags: [] },
  ],
  run: runBenchCommand,
};

async function runBenchCommand(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(bench, argv, io.env);
  const [sub, ...rest] = args.positionals;
  if (sub === 'compare') {
    if (rest.length !== 2) throw new UsageError('bench compare: two JSON files are needed, A.json B.json');
    const [a, b] = rest;
    const c = compareRuns(readRun(a), readRun(b), NOISE_FACTOR.read(args));
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
  return await runLoad(args, io);
}

async function runLoad(args: ParsedArgs, io: CliIo): Promise<number> {
  const url = URL_FLAG.read(args);
  const key = KEY.read(args);
  if (url !== undefined && key === undefined) throw new UsageError('bench: --url needs --key KEY');
  if (url === undefined && key !== undefined) throw new UsageError('bench: --key goes with --url');
  if (url !== undefined && args.flags.has('snapshots'))
    throw new UsageError('bench: --snapshots is for a local server, --url for a deployment: not both');
  const list = SCENARIOS_FLAG.read(args);
  // All of them by default; against --url, those a deployment can run (runBench leaves the others out).
  const every = list.trim() === 'all';
  const scenarios = every ? ALL : list.split(',').map((s) => s.trim());
  for (const s of scenarios)
    if (!(ALL as readonly string[]).includes(s))
      throw new UsageError(`bench: no scenario ${JSON.stringify(s)}; there are ${ALL.join(', ')}`);
  if (
    url !== undefined &&
    scenarios.some((s) => (EXTRA_SCENARIOS as readonly string[]).includes(s)) &&
    !every
  )
    throw new UsageError('bench: hot-swap and cold-start need a local server, not --url');

  const wanted = TOOL.read(args);
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
    snapshots: SNAPSHOTS.read(args),
    url,
    key,
    scenarios: scenarios as ReadonlyArray<ScenarioName | ExtraScenario>,
    seconds: DURATION.read(args),
    connections: CONNECTIONS.read(args),
    pairs: PAIRS.read(args),
    serverThreads: SERVER_THREADS.read(args),
    loadThreads: LOAD_THREADS.read(args),
    maxRequests: MAX_REQUESTS.read(args),
    instructionRequests: INSTRUCTIONS.read(args),
    tool,
    onProgress: progress,
  });
  const paths = writeReports(result, resolve(OUT.read(args)));
  io.out(JSON_OUTPUT.read(args) ? JSON.stringify(result, null, 2) : markdownReport(result));
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
