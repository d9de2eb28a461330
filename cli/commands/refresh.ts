/**
 * `fundreturns refresh`: the daily refresh, the first load from nothing (an empty
 * source and snapshots directory), `--estimate` and `--redo DAY`. Exit codes: 0
 * published, up to date or estimated; 1 failed; 2 usage error; 4 stopped at a limit
 * (`--max-calls` or the provider's daily limit): run the same command again after the
 * provider's daily reset to continue; 130 interrupted (Ctrl-C), likewise resumable.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { BuildError } from '../../builder/build.js';
import { CallBudgetReached } from '../../builder/refresh/call-meter.js';
import { DailyLimitReached } from '../../builder/refresh/eodhd.js';
import { LoadStopped } from '../../builder/refresh/first-load.js';
import { changeLines } from '../../builder/refresh/redo.js';
import { type ParsedArgs, UsageError } from '../shared/args.js';
import { type Command, noPositionals, parseCommand } from '../shared/command.js';
import { dayOption, JSON_OUTPUT, SNAPSHOTS, switchOption } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { loadProgress } from './load-progress.js';
import { checkProvider, DATE, REFRESH_SOURCE_FLAGS, refreshConfig } from './refresh-config.js';
import { redoOnce, refreshOnce, resultLine, runSummary } from './refresh-run.js';

/** Stopped at a limit, nothing lost: the same command continues after the provider's daily reset. */
const EXIT_LIMIT = 4;
const EXIT_INTERRUPTED = 130;

const REDO = dayOption('redo', {
  value: 'YYYY-MM-DD',
  text: '',
  help: 'fetch that day and every trading day after it again, rebuild, publish, and list what changed',
});
const ESTIMATE = switchOption('estimate', {
  help: 'say what the run would cost in API calls (and time, at --max-rate), then stop',
});
const NO_WAIT = switchOption('no-wait', {
  help: 'fail at once, instead of waiting, when another build holds the snapshots directory',
});

export const refresh: Command = {
  name: 'refresh',
  summary:
    'fetch the missing trading days from a provider, check them and publish once; from nothing, load the whole universe',
  forms: [{ flags: [...REFRESH_SOURCE_FLAGS, SNAPSHOTS, DATE, REDO, ESTIMATE, NO_WAIT, JSON_OUTPUT] }],
  run: runRefresh,
};

async function runRefresh(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(refresh, argv, io.env);
  noPositionals(args, 'refresh');
  const cfg = refreshConfig(args);
  checkProvider(cfg, io.env);
  const snapshots = resolve(SNAPSHOTS.read(args));
  const redoDay = REDO.read(args);
  const date = DATE.read(args);
  const estimate = ESTIMATE.read(args);
  if (redoDay !== undefined && date !== undefined)
    throw new UsageError('--redo and --date do not go together');
  if (redoDay !== undefined && estimate) throw new UsageError('--redo and --estimate do not go together');
  const say = (l: string) => io.err(`fundreturns: ${l}`);
  // The first load's build reads the price files on every core, as `build` does.
  const run = {
    snapshots,
    wait: !NO_WAIT.read(args),
    env: io.env,
    say,
    threads: availableParallelism(),
  };
  if (redoDay !== undefined) return await redoCommand(args, io, () => redoOnce(cfg, run, redoDay));

  // Ctrl-C: a first load stops after the requests in flight, keeping all it fetched.
  const abort = new AbortController();
  const onSigint = () => {
    if (abort.signal.aborted) process.exit(EXIT_INTERRUPTED);
    abort.abort();
    say('stopping after the requests in flight (Ctrl-C again to quit at once; nothing fetched is lost)');
  };
  process.on('SIGINT', onSigint);
  const progress = loadProgress(io);
  try {
    const r = await refreshOnce(cfg, {
      ...run,
      date,
      estimate,
      signal: abort.signal,
      onProgress: progress.update,
    });
    progress.stop();
    if (r.outcome === 'published') io.err(r.report.summary());
    const failed = r.load?.failed ?? [];
    for (const f of failed.slice(0, 20)) say(`left out ${f.code}: ${f.reason} (${f.detail})`);
    if (failed.length > 20)
      say(`… and ${failed.length - 20} more left out (all in ${cfg.source}/load-report.json)`);
    say(resultLine(r));
    if (JSON_OUTPUT.read(args))
      io.out(
        JSON.stringify(r.load === undefined ? runSummary(r) : { ...runSummary(r), load: loadJson(r.load) }),
      );
    return 0;
  } catch (e) {
    progress.stop();
    if (e instanceof BuildError && !(e instanceof LoadStopped)) io.err(e.report.summary());
    const limit =
      (e instanceof LoadStopped && (e.why === 'budget' || e.why === 'daily_limit')) ||
      e instanceof CallBudgetReached ||
      e instanceof DailyLimitReached;
    const interrupted = e instanceof LoadStopped && e.why === 'interrupted';
    io.err(`fundreturns: refresh ${limit || interrupted ? 'stopped' : 'failed'}: ${(e as Error).message}`);
    if (JSON_OUTPUT.read(args) && e instanceof LoadStopped)
      io.out(JSON.stringify({ outcome: 'stopped', why: e.why, load: loadJson(e.summary) }));
    return limit ? EXIT_LIMIT : interrupted ? EXIT_INTERRUPTED : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function loadJson(l: NonNullable<Awaited<ReturnType<typeof refreshOnce>>['load']>) {
  return {
    listed: l.listed,
    current: l.current,
    delisted: l.delisted,
    loaded: l.loaded,
    leftOut: l.failed.length,
    days: l.days,
    apiCalls: l.calls,
    requests: l.requests,
    estimate: l.estimate,
  };
}

async function redoCommand(
  args: ParsedArgs,
  io: CliIo,
  run: () => ReturnType<typeof redoOnce>,
): Promise<number> {
  try {
    const r = await run();
    io.err(r.report.summary());
    for (const line of changeLines(r)) io.err(`fundreturns: ${line}`);
    if (JSON_OUTPUT.read(args))
      io.out(
        JSON.stringify({
          outcome: 'published',
          id: r.id,
          asOf: r.asOf,
          days: r.days,
          rowsBefore: r.rowsBefore,
          rowsAfter: r.rowsAfter,
          changed: r.changed,
        }),
      );
    return 0;
  } catch (e) {
    if (e instanceof BuildError) io.err(e.report.summary());
    io.err(`fundreturns: redo failed: ${(e as Error).message}`);
    return e instanceof DailyLimitReached || e instanceof CallBudgetReached ? EXIT_LIMIT : 1;
  }
}
