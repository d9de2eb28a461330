/**
 * The plain functions the command line calls for `refresh` and `schedule` (and `serve
 * --refresh-cron` through a child `refresh`): the wiring stays a flag parser.
 */

import type { CallMeter } from '../../builder/refresh/call-meter.js';
import type { LoadProgress } from '../../builder/refresh/first-load.js';
import { type RedoResult, redo } from '../../builder/refresh/redo.js';
import { type RefreshOptions, type RefreshResult, refresh } from '../../builder/refresh/refresh.js';
import { type RunSummary, startSchedule } from '../../builder/refresh/schedule.js';
import { now } from '../../core/clock.js';
import type { Day } from '../../core/dates.js';
import { recordRefresh } from '../../core/refresh-stats.js';
import { openProvider, type RefreshConfig, type ScheduleConfig } from './refresh-config.js';

export interface RefreshRun {
  snapshots: string;
  date?: Day;
  wait?: boolean;
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
  clock?: () => number;
  /** Say the cost in API calls and stop. */
  estimate?: boolean;
  /** A first load's progress (a bar on a terminal, JSON lines elsewhere). */
  onProgress?: (p: LoadProgress) => void;
  /** Ctrl-C: a first load stops after its requests in flight. */
  signal?: AbortSignal;
  threads?: number;
}

export async function refreshOnce(cfg: RefreshConfig, run: RefreshRun): Promise<RefreshResult> {
  const started = Date.now();
  // What the run did goes to the snapshots directory for the server's /metrics
  // (core/refresh-stats.ts); a stats file that cannot be written costs a warning, never the refresh.
  const record = (outcome: string, rows: number) => {
    try {
      recordRefresh(
        run.snapshots,
        { outcome, seconds: (Date.now() - started) / 1000, rows },
        (run.clock ?? now)(),
      );
    } catch (e) {
      run.say(`warning: cannot record the run for /metrics: ${(e as Error).message}`);
    }
  };
  let result: RefreshResult;
  try {
    result = await refreshRun(cfg, run);
  } catch (e) {
    record('failed', 0);
    throw e;
  }
  if (result.outcome !== 'estimate') record(result.outcome === 'published' ? 'ok' : 'unchanged', result.rows);
  return result;
}

/** What every run of the provider is given: where, which provider (opened once), the gates and the clock. */
function runOptions(cfg: RefreshConfig, run: RefreshRun): RefreshOptions & { meter?: CallMeter } {
  const { provider, meter } = openProvider(cfg, run.env, run.say);
  return {
    source: cfg.source,
    snapshots: run.snapshots,
    provider,
    meter,
    keep: cfg.keep,
    maxBadShare: cfg.maxBadShare,
    gates: cfg.gates,
    now: run.clock ?? now,
    wait: run.wait,
    say: run.say,
  };
}

function refreshRun(cfg: RefreshConfig, run: RefreshRun): Promise<RefreshResult> {
  const { meter, ...opts } = runOptions(cfg, run);
  return refresh({
    ...opts,
    date: run.date,
    estimate: run.estimate,
    load: {
      concurrency: cfg.concurrency,
      meter,
      maxRate: cfg.maxRate,
      threads: run.threads,
      signal: run.signal,
      onProgress: run.onProgress,
    },
  });
}

/** `refresh --redo DAY`: that day and the ones after it fetched again, the source's rows replaced, rebuilt. */
export async function redoOnce(cfg: RefreshConfig, run: RefreshRun, day: Day): Promise<RedoResult> {
  const { meter: _unused, ...opts } = runOptions(cfg, run);
  return await redo({ ...opts, redo: day });
}

export function runSummary(r: RefreshResult): RunSummary {
  return {
    outcome: r.outcome,
    days: r.outcome === 'published' ? r.days : [],
    rows: r.rows,
    newFunds: r.newFunds,
    inactive: r.inactive,
    refused: r.refused,
    asOf: r.asOf,
  };
}

/** The one line a refresh ends with. */
export function resultLine(r: RefreshResult): string {
  if (r.outcome === 'up_to_date') return `up to date: ${r.id} (as_of ${r.asOf}) stays live`;
  if (r.outcome === 'estimate') return 'estimate only: nothing fetched but the fund lists, nothing published';
  const l = r.load;
  if (l !== undefined)
    return (
      `published ${r.id} (as_of ${r.asOf}): first load of ${l.loaded} funds (the lists named ${l.listed}, ${l.delisted} of them delisted), ` +
      `${l.failed.length} left out, ${r.days.length} bulk days, ${l.calls} API calls in ${l.requests} requests, ` +
      `${(r.durationMs / 1000).toFixed(1)} s`
    );
  return (
    `published ${r.id} (as_of ${r.asOf}): ${r.days.length} days ${r.days[0]}..${r.days[r.days.length - 1]}, ` +
    `${r.rows} rows, ${r.newFunds} new funds, ${r.inactive} turned inactive, ${r.refused} refused rows, ` +
    `${(r.durationMs / 1000).toFixed(1)} s`
  );
}

/**
 * `fundreturns schedule`: refreshes in this process on the schedule until SIGTERM or
 * SIGINT, then waits for a refresh in progress to finish (it publishes whole or not).
 */
export async function runScheduleUntilSignal(
  cfg: RefreshConfig,
  sched: ScheduleConfig,
  snapshots: string,
  io: { err: (s: string) => void; env: NodeJS.ProcessEnv },
): Promise<void> {
  const log = (line: string): void => io.err(`${new Date(now()).toISOString()} fundreturns: ${line}`);
  const schedule = startSchedule({
    cron: sched.cron,
    tz: sched.tz,
    retryMinutes: sched.retryMinutes,
    now,
    log,
    run: async () => runSummary(await refreshOnce(cfg, { snapshots, env: io.env, say: log })),
  });
  log(
    `schedule: ${JSON.stringify(sched.cron)} in ${sched.tz} (NYSE trading days only), provider ${cfg.provider}, ` +
      `next at ${schedule.nextTick()?.toISOString() ?? 'never'}`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  log('schedule: stopping (waiting for a refresh in progress)');
  await schedule.stop();
}
