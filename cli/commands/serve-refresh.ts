/**
 * `serve --refresh-cron EXPR`: the schedule inside the server process, for a one-box
 * deployment. Each refresh runs as a child `fundreturns refresh` (its own memory and
 * event loop, so the server's requests never wait on a build); the server swaps to the
 * new snapshot the way it always does, by watching CURRENT. The flags are the refresh's
 * own, prefixed `--refresh-`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type RunSummary, type Schedule, startSchedule } from '../../builder/refresh/schedule.js';
import { now } from '../../core/clock.js';
import { type ParsedArgs, parseArgs, UsageError } from '../shared/args.js';
import { flagKinds } from '../shared/flags.js';
import {
  checkProvider,
  REFRESH_SOURCE_FLAGS,
  refreshConfig,
  SCHEDULE_TIME_FLAGS,
  scheduleConfig,
} from './refresh-config.js';

const PREFIX = 'refresh-';

/** Splits serve's argv into the refresh's `--refresh-*` flags and the rest (all refresh flags take a value). */
export function splitRefreshArgs(argv: readonly string[]): { refresh: string[]; rest: string[] } {
  const refresh: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith(`--${PREFIX}`)) {
      rest.push(a);
      continue;
    }
    refresh.push(a);
    if (!a.includes('=') && i + 1 < argv.length && !argv[i + 1].startsWith('--')) refresh.push(argv[++i]);
  }
  return { refresh, rest };
}

export interface ServeRefresh {
  /** The log line saying what runs when. */
  describe(): string;
  stop(): Promise<void>;
}

const REFRESH_FLAGS = flagKinds(REFRESH_SOURCE_FLAGS);
/** The refresh's and the schedule's flags under the prefix. */
const SPEC = Object.fromEntries(
  Object.entries({ ...REFRESH_FLAGS, ...flagKinds(SCHEDULE_TIME_FLAGS) }).map(([k, v]) => [
    `${PREFIX}${k}`,
    v,
  ]),
);

/** Parses the `--refresh-*` flags; null when `--refresh-cron` is not given (no schedule). */
export function parseServeRefresh(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedArgs | null {
  const args = parseArgs(argv, SPEC, env);
  if (args.positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(args.positionals[0])}`);
  if (!args.flags.has(`${PREFIX}cron`)) {
    const stray = [...args.flags.keys()][0];
    if (stray !== undefined)
      throw new UsageError(`--${stray} needs --${PREFIX}cron EXPR (the schedule to run on)`);
    return null;
  }
  // Checked now: a typo or a missing token is a usage error at start, not a failed run at 18:30.
  checkProvider(refreshConfig(args, PREFIX), env);
  return args;
}

export function startServeRefresh(
  args: ParsedArgs,
  snapshots: string,
  log: (line: string) => void,
  cli: string = process.argv[1],
): ServeRefresh {
  const cfg = refreshConfig(args, PREFIX);
  const sched = scheduleConfig(args, PREFIX);
  // The child gets the refresh's flags without the prefix; the schedule's stay here.
  const childArgs: string[] = ['refresh', '--snapshots', snapshots, '--json'];
  for (const [name, value] of args.flags) {
    const bare = name.slice(PREFIX.length);
    if (bare in REFRESH_FLAGS && typeof value === 'string') childArgs.push(`--${bare}`, value);
  }
  let child: ChildProcess | null = null;
  const run = (): Promise<RunSummary> =>
    new Promise((resolve, reject) => {
      const c = spawn(process.execPath, [cli, ...childArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      let out = '';
      let err = '';
      c.stdout?.on('data', (d) => {
        out += d;
      });
      c.stderr?.on('data', (d) => {
        err += d;
      });
      c.on('error', reject);
      c.on('exit', (code, signal) => {
        child = null;
        if (code === 0) {
          try {
            resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as RunSummary);
          } catch {
            reject(new Error('the refresh ended without its summary'));
          }
          return;
        }
        const last = err
          .trim()
          .split('\n')
          .filter((l) => l.includes('refresh failed:'))
          .at(-1);
        reject(
          new Error(
            last?.replace(/^fundreturns: refresh failed: /, '') ??
              `the refresh exited with ${code ?? signal}`,
          ),
        );
      });
    });
  const schedule: Schedule = startSchedule({ ...sched, now, log, run });
  return {
    describe: () =>
      `refresh schedule ${JSON.stringify(sched.cron)} in ${sched.tz} (NYSE trading days only), provider ${cfg.provider}, ` +
      `source ${cfg.source}; next at ${schedule.nextTick()?.toISOString() ?? 'never'}`,
    stop: async () => {
      // A refresh cut short publishes nothing (staging is removed by the next build).
      (child as ChildProcess | null)?.kill('SIGTERM');
      await schedule.stop();
    },
  };
}
