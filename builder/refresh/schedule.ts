/**
 * The refresh on a schedule, for months: a cron expression (node-cron's
 * syntax and matcher, the design card's package) in a time zone, skipping the days the
 * NYSE is closed (C0). At start a run catches up whatever was missed while the
 * machine was down (the refresh fills every missing day). A failed run is retried
 * after each of `retryMinutes`; after the last one the error is logged and the live
 * snapshot stays as it was. Runs never overlap: a tick during a run (or its retries) is
 * skipped and said, and across processes the builds' lock keeps refreshes apart.
 *
 * The clock and the timer are parameters so tests drive days of schedule in
 * milliseconds; node-cron's own timers are not used for that reason.
 */
import cron from 'node-cron';
import { isTradingDay } from '../../core/calendar.js';
import { type Day, parseDay } from '../../core/dates.js';

export const DEFAULT_CRON = '30 18 * * 1-5';
export const DEFAULT_TZ = 'America/New_York';
export const DEFAULT_RETRY_MINUTES = [5, 15, 45];

/** What one successful run did, for its log line. */
export interface RunSummary {
  outcome: 'published' | 'up_to_date' | 'estimate';
  days: string[];
  rows: number;
  newFunds: number;
  inactive: number;
  refused: number;
  asOf: string;
}

export interface Timer {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimer: Timer = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface ScheduleOptions {
  cron: string;
  tz: string;
  /** One refresh; throws when it failed (nothing published). */
  run: () => Promise<RunSummary>;
  /** Waits before each retry of a failed run. */
  retryMinutes: readonly number[];
  log: (line: string) => void;
  /** The service's clock in ms. */
  now: () => number;
  timer?: Timer;
  /** Run once at start to catch up missed days (default true). */
  catchUp?: boolean;
}

export interface Schedule {
  /** When the next tick is due (null once stopped). */
  nextTick(): Date | null;
  /** Resolves when no run is in progress. */
  idle(): Promise<void>;
  /** No more ticks; waits for a run in progress to end. */
  stop(): Promise<void>;
}

/** Why a cron expression cannot drive the schedule, or null. */
export function cronProblem(expr: string): string | null {
  if (!cron.validate(expr))
    return `${JSON.stringify(expr)} is not a cron expression (minute hour day month weekday)`;
  const seconds = cron.parse(expr).second;
  if (seconds.length !== 1 || seconds[0] !== 0)
    return `${JSON.stringify(expr)} has a seconds field: minutes are the finest step`;
  return null;
}

/** Why a time zone name cannot be used, or null. */
export function tzProblem(tz: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return null;
  } catch {
    return `${JSON.stringify(tz)} is not a time zone (e.g. America/New_York)`;
  }
}

const nyDate = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/New_York',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** The New York calendar date at an instant: the market's day. */
export function newYorkDay(ms: number): Day {
  return parseDay(nyDate.format(ms)) as Day;
}

const MINUTE = 60_000;
/** A year of minutes: an expression that matches nothing in it (Feb 30) is refused. */
const SEARCH_LIMIT = 366 * 24 * 60;

/** The first whole minute strictly after `afterMs` that `matches`, or null. */
function nextMatch(matches: (d: Date) => boolean, afterMs: number): number | null {
  let t = Math.floor(afterMs / MINUTE) * MINUTE + MINUTE;
  for (let i = 0; i < SEARCH_LIMIT; i++, t += MINUTE) if (matches(new Date(t))) return t;
  return null;
}

export function startSchedule(opts: ScheduleOptions): Schedule {
  const problem = cronProblem(opts.cron) ?? tzProblem(opts.tz);
  if (problem !== null) throw new Error(problem);
  const timer = opts.timer ?? realTimer;
  // createTask is node-cron's parser and matcher; the task is never started.
  const matcher = cron.createTask(opts.cron, () => {}, { timezone: opts.tz });
  let stopped = false;
  let tickHandle: unknown = null;
  let due: number | null = null;
  let running: Promise<void> | null = null;
  // A retry's wait, ended early by stop().
  let sleeping: { handle: unknown; wake: () => void } | null = null;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const wake = (): void => {
        sleeping = null;
        resolve();
      };
      sleeping = { handle: timer.set(wake, ms), wake };
    });

  const launch = (why: string): void => {
    if (running !== null) {
      opts.log(`refresh ${why}: skipped, the previous refresh is still running`);
      return;
    }
    running = runWithRetries(opts, why, sleep, () => stopped).finally(() => {
      running = null;
    });
  };

  const arm = (): void => {
    if (stopped) return;
    const from = opts.now();
    due = nextMatch((d) => matcher.match(d), from);
    if (due === null) {
      opts.log(`error: ${JSON.stringify(opts.cron)} never fires within a year: schedule stopped`);
      return;
    }
    const at = due;
    tickHandle = timer.set(() => tick(at), Math.max(0, at - from));
  };

  const tick = (at: number): void => {
    const day = newYorkDay(at);
    if (isTradingDay(day)) launch(`at ${new Date(at).toISOString()}`);
    else opts.log(`refresh at ${new Date(at).toISOString()}: skipped, the NYSE is closed that day`);
    arm();
  };

  if (opts.catchUp ?? true) launch('at start (catching up)');
  arm();
  return {
    nextTick: () => (stopped ? null : due === null ? null : new Date(due)),
    idle: async () => {
      while (running !== null) await running;
    },
    stop: async () => {
      stopped = true;
      if (tickHandle !== null) timer.clear(tickHandle);
      const s = sleeping as { handle: unknown; wake: () => void } | null;
      if (s !== null) {
        timer.clear(s.handle);
        s.wake();
      }
      due = null;
      await matcher.destroy();
      while (running !== null) await running;
    },
  };
}

/** One run with its retries, each said in the log; never throws. */
async function runWithRetries(
  opts: ScheduleOptions,
  why: string,
  sleep: (ms: number) => Promise<void>,
  stopped: () => boolean,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const started = Date.now();
    try {
      const s = await opts.run();
      opts.log(runLine(why, s, started));
      return;
    } catch (e) {
      const reason = (e as Error).message;
      const wait = opts.retryMinutes[attempt];
      if (wait === undefined || stopped()) {
        opts.log(
          `error: refresh ${why} failed after ${attempt + 1} attempts, ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
            `${reason}; the live snapshot is unchanged`,
        );
        return;
      }
      opts.log(`refresh ${why} failed (${reason}); retrying in ${wait} min`);
      await sleep(wait * MINUTE);
      if (stopped()) return;
    }
  }
}

/** A successful run's log line. */
function runLine(why: string, s: RunSummary, started: number): string {
  const span = s.days.length === 0 ? '' : ` (${s.days[0]}..${s.days[s.days.length - 1]})`;
  return (
    `refresh ${why}: ${s.outcome === 'published' ? 'published' : 'up to date'}, ${s.days.length} days${span}, ` +
    `${s.rows} rows, ${s.newFunds} new funds, ${s.inactive} turned inactive, ${s.refused} refused rows, ` +
    `${((Date.now() - started) / 1000).toFixed(1)} s, as_of ${s.asOf}`
  );
}
