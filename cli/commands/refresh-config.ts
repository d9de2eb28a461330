/**
 * The refresh's flags, read the same way by `refresh`, `schedule` and (prefixed
 * `--refresh-`) `serve --refresh-cron`: one place says what they mean and checks them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CallMeter, DEFAULT_MAX_RATE } from '../../builder/refresh/call-meter.js';
import { DEFAULT_EODHD_URL, eodhdProvider } from '../../builder/refresh/eodhd.js';
import { DEFAULT_GATES, type RefreshGates } from '../../builder/refresh/gates.js';
import { inboxProvider } from '../../builder/refresh/inbox.js';
import type { Provider } from '../../builder/refresh/provider.js';
import {
  cronProblem,
  DEFAULT_CRON,
  DEFAULT_RETRY_MINUTES,
  DEFAULT_TZ,
  tzProblem,
} from '../../builder/refresh/schedule.js';
import { syntheticProvider } from '../../builder/refresh/synthetic.js';
import { type ParsedArgs, UsageError } from '../shared/args.js';
import {
  dayOption,
  type Flag,
  intOption,
  KEEP,
  MAX_BAD_SHARE,
  numberOption,
  optionalIntOption,
  stringOption,
  stringOptionOr,
} from '../shared/flags.js';

/** The environment variable holding the EODHD API token (never a flag: flags show in `ps`). */
const TOKEN_ENV = 'FUNDRETURNS_EODHD_TOKEN';

const SOURCE = stringOption('source', {
  value: 'DIR',
  required: true,
  help: 'the source directory to refresh (funds.csv, prices/, daily/): created by a first load',
});
const PROVIDER = stringOptionOr('provider', 'inbox', {
  value: 'inbox|eodhd|synthetic',
  help: 'where the days come from: an inbox directory, the EODHD API, or the synthetic universe (demo)',
});
const INBOX = stringOption('inbox', {
  value: 'DIR',
  help: "the inbox provider's directory of daily files",
});
const EODHD_URL = stringOptionOr('eodhd-url', DEFAULT_EODHD_URL, {
  help: "the EODHD API's base URL (a stand-in's, for tests)",
});
const TOKEN_FILE = stringOption('token-file', {
  value: 'FILE',
  text: '[--token-file FILE (or FUNDRETURNS_EODHD_TOKEN)]',
  help: 'a file whose first line is the EODHD API token (else FUNDRETURNS_EODHD_TOKEN)',
});
const MAX_RATE = intOption('max-rate', {
  default: DEFAULT_MAX_RATE,
  min: 1,
  max: 1_000_000,
  help: 'requests a minute to the provider, spaced evenly',
});
const CONCURRENCY = intOption('concurrency', {
  // 800 requests a minute is 13 a second: 16 at once reach it while a history takes up to a second.
  default: 16,
  min: 1,
  max: 64,
  help: 'histories a first load fetches at once',
});
const MAX_CALLS = optionalIntOption('max-calls', {
  value: 'N',
  min: 1,
  max: 1_000_000_000,
  help: 'API calls this run may spend, as the provider counts them; it stops before passing it (exit 4), and the same command continues later',
});
const MAX_MOVE = numberOption('max-move', {
  default: DEFAULT_GATES.maxMove,
  min: 0,
  max: 1_000_000,
  help: 'hold back a day whose rows move a fund by more than this share without a split',
});
const MIN_COVERAGE = numberOption('min-coverage', {
  default: DEFAULT_GATES.minCoverage,
  min: 0,
  max: 1,
  help: "refuse a day whose rows cover less than this share of the live snapshot's active funds",
});

/** Where a refresh's days come from and the gates they pass (refresh, schedule, serve --refresh-*). */
export const REFRESH_SOURCE_FLAGS: readonly Flag[] = [
  SOURCE,
  PROVIDER,
  INBOX,
  EODHD_URL,
  TOKEN_FILE,
  MAX_RATE,
  CONCURRENCY,
  MAX_CALLS,
  MAX_MOVE,
  MIN_COVERAGE,
  MAX_BAD_SHARE,
  KEEP,
];

const CRON = stringOptionOr('cron', DEFAULT_CRON, {
  value: `'${DEFAULT_CRON}'`,
  help: 'when to run, a cron expression in --tz (trading days only)',
});
const TZ = stringOptionOr('tz', DEFAULT_TZ, { help: 'the time zone of --cron' });
const RETRY_MINUTES = stringOptionOr('retry-minutes', DEFAULT_RETRY_MINUTES.join(','), {
  help: 'after a failed run, try again after these waits in minutes (or none)',
});

/** When a schedule runs a refresh (schedule, serve --refresh-*). */
export const SCHEDULE_TIME_FLAGS: readonly Flag[] = [CRON, TZ, RETRY_MINUTES];

/** `--date`: one trading day to fetch again (refresh). */
export const DATE = dayOption('date', {
  value: 'YYYY-MM-DD',
  text: '[--date YYYY-MM-DD | --redo YYYY-MM-DD]',
  help: 'fetch that one trading day only (after loosening a gate)',
});

type ProviderName = 'inbox' | 'eodhd' | 'synthetic';

export interface RefreshConfig {
  source: string;
  provider: ProviderName;
  inbox?: string;
  eodhdUrl: string;
  tokenFile?: string;
  keep: number;
  maxBadShare: number;
  gates: RefreshGates;
  /** Requests per minute to the provider. */
  maxRate: number;
  /** Histories fetched at once by a first load. */
  concurrency: number;
  /** API calls one run may spend; undefined: no budget. */
  maxCalls?: number;
}

export interface ScheduleConfig {
  cron: string;
  tz: string;
  retryMinutes: number[];
}

/** The refresh's flags, as `refresh` names them or under `prefix` (`refresh-`, for serve). */
export function refreshConfig(args: ParsedArgs, prefix = ''): RefreshConfig {
  const f = (name: string): string => `${prefix}${name}`;
  const source = SOURCE.read(args, prefix);
  if (source === undefined)
    throw new UsageError(`--${f('source')} DIR is required (the source directory to refresh)`);
  const provider = PROVIDER.read(args, prefix);
  if (provider !== 'inbox' && provider !== 'eodhd' && provider !== 'synthetic')
    throw new UsageError(
      `--${f('provider')} must be inbox, eodhd or synthetic, not ${JSON.stringify(provider)}`,
    );
  const inbox = INBOX.read(args, prefix);
  if (provider === 'inbox' && inbox === undefined)
    throw new UsageError(`--${f('provider')} inbox needs --${f('inbox')} DIR`);
  const eodhdUrl = EODHD_URL.read(args, prefix);
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(eodhdUrl))
    throw new UsageError(
      `--${f('eodhd-url')} must be an http(s) base URL without query, not ${JSON.stringify(eodhdUrl)}`,
    );
  const tokenFile = TOKEN_FILE.read(args, prefix);
  const maxCalls = MAX_CALLS.read(args, prefix);
  return {
    source: resolve(source),
    provider,
    inbox: inbox === undefined ? undefined : resolve(inbox),
    eodhdUrl,
    tokenFile: tokenFile === undefined ? undefined : resolve(tokenFile),
    keep: KEEP.read(args, prefix),
    maxBadShare: MAX_BAD_SHARE.read(args, prefix),
    gates: { maxMove: MAX_MOVE.read(args, prefix), minCoverage: MIN_COVERAGE.read(args, prefix) },
    maxRate: MAX_RATE.read(args, prefix),
    concurrency: CONCURRENCY.read(args, prefix),
    maxCalls,
  };
}

/** When a schedule runs, as `schedule` names its flags or under `prefix` (`refresh-`, for serve). */
export function scheduleConfig(args: ParsedArgs, prefix = ''): ScheduleConfig {
  const cronExpr = CRON.read(args, prefix);
  const bad = cronProblem(cronExpr);
  if (bad !== null) throw new UsageError(`--${prefix}cron: ${bad}`);
  const tz = TZ.read(args, prefix);
  const badTz = tzProblem(tz);
  if (badTz !== null) throw new UsageError(`--${prefix}tz: ${badTz}`);
  // Only a given value is parsed: the default is the list itself.
  const retryText = args.flags.has(`${prefix}retry-minutes`) ? RETRY_MINUTES.read(args, prefix) : undefined;
  let retryMinutes = DEFAULT_RETRY_MINUTES;
  if (retryText !== undefined) {
    if (!/^(\d+(\.\d+)?)(,\d+(\.\d+)?)*$/.test(retryText) && retryText !== 'none')
      throw new UsageError(
        `--${prefix}retry-minutes must be waits in minutes separated by commas (5,15,45) or none, not ${JSON.stringify(retryText)}`,
      );
    retryMinutes = retryText === 'none' ? [] : retryText.split(',').map(Number);
  }
  return { cron: cronExpr, tz, retryMinutes };
}

/** The EODHD token: the token file's first line, else FUNDRETURNS_EODHD_TOKEN. Its value is never printed. */
function readToken(cfg: RefreshConfig, env: NodeJS.ProcessEnv): string {
  if (cfg.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(cfg.tokenFile, 'utf8');
    } catch (e) {
      throw new UsageError(
        `--token-file ${cfg.tokenFile} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    const token = text.split(/\r?\n/)[0].trim();
    if (token === '') throw new UsageError(`--token-file ${cfg.tokenFile} is empty`);
    return token;
  }
  const token = env[TOKEN_ENV]?.trim();
  if (token === undefined || token === '')
    throw new UsageError(`the eodhd provider needs a token: --token-file FILE or ${TOKEN_ENV}`);
  return token;
}

/**
 * What the provider needs before it can run, checked at start as usage: a missing,
 * unreadable or empty token is exit 2 now, not a refresh failing every evening.
 * The token is read again by each run (a rotated token file is picked up).
 */
export function checkProvider(cfg: RefreshConfig, env: NodeJS.ProcessEnv): void {
  if (cfg.provider === 'eodhd') readToken(cfg, env);
}

/** The provider a run asks, and the meter pacing and counting its requests (the eodhd provider's). */
export function openProvider(
  cfg: RefreshConfig,
  env: NodeJS.ProcessEnv,
  say?: (line: string) => void,
): { provider: Provider; meter?: CallMeter } {
  switch (cfg.provider) {
    case 'inbox':
      return { provider: inboxProvider(cfg.inbox as string) };
    case 'synthetic':
      return { provider: syntheticProvider(cfg.source) };
    case 'eodhd': {
      const meter = new CallMeter({ maxRate: cfg.maxRate, maxCalls: cfg.maxCalls });
      return {
        provider: eodhdProvider({ baseUrl: cfg.eodhdUrl, token: readToken(cfg, env), say, meter }),
        meter,
      };
    }
  }
}
