/**
 * The refresh's flags, read the same way by `refresh`, `schedule` and (prefixed
 * `--refresh-`) `serve --refresh-cron`: one place says what they mean and checks them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CallMeter, DEFAULT_MAX_RATE } from '../builder/refresh/call-meter.js';
import { DEFAULT_EODHD_URL, eodhdProvider } from '../builder/refresh/eodhd.js';
import { inboxProvider } from '../builder/refresh/inbox.js';
import type { Provider } from '../builder/refresh/provider.js';
import { DEFAULT_GATES, type RefreshGates } from '../builder/refresh/refresh.js';
import {
  cronProblem,
  DEFAULT_CRON,
  DEFAULT_RETRY_MINUTES,
  DEFAULT_TZ,
  tzProblem,
} from '../builder/refresh/schedule.js';
import { syntheticProvider } from '../builder/refresh/synthetic.js';
import type { Day } from '../core/dates.js';
import {
  dayFlag,
  type FlagKind,
  floatFlag,
  intFlag,
  type ParsedArgs,
  stringFlag,
  UsageError,
} from './args.js';
import { type FlagUse, REFRESH_SOURCE_FLAGS, SCHEDULE_TIME_FLAGS } from './usage.js';

/** The environment variable holding the EODHD API token (never a flag: flags show in `ps`). */
export const TOKEN_ENV = 'FUNDRETURNS_EODHD_TOKEN';

/** The refresh's own flags, from the usage table (cli/usage.ts), for refresh, schedule and serve --refresh-*. */
export const REFRESH_FLAGS: Record<string, FlagKind> = kinds(REFRESH_SOURCE_FLAGS);
export const SCHEDULE_FLAGS: Record<string, FlagKind> = kinds(SCHEDULE_TIME_FLAGS);

function kinds(flags: readonly FlagUse[]): Record<string, FlagKind> {
  return Object.fromEntries(flags.map((f) => [f.name, f.value === undefined ? 'boolean' : 'string']));
}

export type ProviderName = 'inbox' | 'eodhd' | 'synthetic';

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

/** The same flags under a prefix (`refresh-` for serve). */
export function prefixed(spec: Record<string, FlagKind>, prefix: string): Record<string, FlagKind> {
  return Object.fromEntries(Object.entries(spec).map(([k, v]) => [`${prefix}${k}`, v]));
}

export function refreshConfig(args: ParsedArgs, prefix = ''): RefreshConfig {
  const f = (name: string): string => `${prefix}${name}`;
  const source = stringFlag(args, f('source'));
  if (source === undefined)
    throw new UsageError(`--${f('source')} DIR is required (the source directory to refresh)`);
  const provider = stringFlag(args, f('provider'), 'inbox');
  if (provider !== 'inbox' && provider !== 'eodhd' && provider !== 'synthetic')
    throw new UsageError(
      `--${f('provider')} must be inbox, eodhd or synthetic, not ${JSON.stringify(provider)}`,
    );
  const inbox = stringFlag(args, f('inbox'));
  if (provider === 'inbox' && inbox === undefined)
    throw new UsageError(`--${f('provider')} inbox needs --${f('inbox')} DIR`);
  const eodhdUrl = stringFlag(args, f('eodhd-url'), DEFAULT_EODHD_URL);
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(eodhdUrl))
    throw new UsageError(
      `--${f('eodhd-url')} must be an http(s) base URL without query, not ${JSON.stringify(eodhdUrl)}`,
    );
  const tokenFile = stringFlag(args, f('token-file'));
  const maxCalls = args.flags.has(f('max-calls'))
    ? intFlag(args, f('max-calls'), 0, 1, 1_000_000_000)
    : undefined;
  return {
    source: resolve(source),
    provider,
    inbox: inbox === undefined ? undefined : resolve(inbox),
    eodhdUrl,
    tokenFile: tokenFile === undefined ? undefined : resolve(tokenFile),
    keep: intFlag(args, f('keep'), 5, 1, 1000),
    maxBadShare: floatFlag(args, f('max-bad-share'), 0.01, 0, 1),
    gates: {
      maxMove: floatFlag(args, f('max-move'), DEFAULT_GATES.maxMove, 0, 1_000_000),
      minCoverage: floatFlag(args, f('min-coverage'), DEFAULT_GATES.minCoverage, 0, 1),
    },
    maxRate: intFlag(args, f('max-rate'), DEFAULT_MAX_RATE, 1, 1_000_000),
    // 800 requests a minute is 13 a second: 16 at once reach it while a history takes up to a second.
    concurrency: intFlag(args, f('concurrency'), 16, 1, 64),
    maxCalls,
  };
}

export function scheduleConfig(
  args: ParsedArgs,
  names: { cron: string; tz: string; retry: string },
): ScheduleConfig {
  const cronExpr = stringFlag(args, names.cron, DEFAULT_CRON);
  const bad = cronProblem(cronExpr);
  if (bad !== null) throw new UsageError(`--${names.cron}: ${bad}`);
  const tz = stringFlag(args, names.tz, DEFAULT_TZ);
  const badTz = tzProblem(tz);
  if (badTz !== null) throw new UsageError(`--${names.tz}: ${badTz}`);
  const retryText = stringFlag(args, names.retry);
  let retryMinutes = DEFAULT_RETRY_MINUTES;
  if (retryText !== undefined) {
    if (!/^(\d+(\.\d+)?)(,\d+(\.\d+)?)*$/.test(retryText) && retryText !== 'none')
      throw new UsageError(
        `--${names.retry} must be waits in minutes separated by commas (5,15,45) or none, not ${JSON.stringify(retryText)}`,
      );
    retryMinutes = retryText === 'none' ? [] : retryText.split(',').map(Number);
  }
  return { cron: cronExpr, tz, retryMinutes };
}

/** `--date`: one trading day to fetch again. */
export function dateFlag(args: ParsedArgs): Day | undefined {
  return dayFlag(args, 'date');
}

/** The EODHD token: the token file's first line, else FUNDRETURNS_EODHD_TOKEN. Its value is never printed. */
export function readToken(cfg: RefreshConfig, env: NodeJS.ProcessEnv): string {
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
