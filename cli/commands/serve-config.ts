/**
 * `fundreturns serve` configuration: flags, then FUNDRETURNS_<FLAG> variables,
 * then defaults; each bad value is refused with a message naming it.
 */
import { resolve } from 'node:path';
import { isPossibleCode } from '../../core/codes.js';
import { localBaseUrl, type ServeConfig } from '../../server/config.js';
import { mailFromProblem, smtpUrlProblem } from '../../server/dashboard/mailer.js';
import { parseTrustedProxies } from '../../server/http/client-address.js';
import { baseUrlProblem } from '../../server/public/response.js';
import { flagLabel, type ParsedArgs, UsageError } from '../shared/args.js';
import { parseCommand } from '../shared/command.js';
import { SNAPSHOTS } from '../shared/flags.js';
import { STORE_OR_REDIS } from '../shared/store-flag.js';
import {
  ACCESS_LOG_SAMPLE,
  ADMIN_HOST,
  ADMIN_PORT,
  BASE_URL,
  BENCHMARK,
  CLAIM_FILE,
  CLAIM_NAME,
  DASHBOARD,
  FRESHNESS_HOURS,
  HOST,
  MAIL_FROM,
  MAX_KEYS,
  MCP_ORIGINS,
  PLANS,
  POLL_MS,
  PORT,
  SERVE_FORMS,
  SERVE_THREADS,
  SMTP_URL,
  TRUST_PROXY,
} from './serve-flags.js';

export function parseServeConfig(argv: string[], env: NodeJS.ProcessEnv): ServeConfig {
  const args = parseCommand({ forms: SERVE_FORMS }, argv, env);
  if (args.positionals.length > 0)
    throw new UsageError(`serve: unexpected argument ${JSON.stringify(args.positionals[0])}`);
  const host = hostFlag(args, HOST.name, HOST.read(args));
  const port = PORT.read(args);
  const threads = SERVE_THREADS.read(args);
  const freshnessHours = freshnessFlag(args);
  const baseUrl = baseUrlFlag(args, host, port);
  const claimName = claimNameFlag(args);
  const claimFile = CLAIM_FILE.read(args);
  const store = STORE_OR_REDIS.read(args);
  const plansFile = PLANS.read(args);
  const mcpOrigins = parseOrigins(MCP_ORIGINS.read(args), flagLabel(args, MCP_ORIGINS.name));
  const admin = adminFlags(args, port);
  const dashboard = DASHBOARD.read(args);
  if (dashboard !== 'on' && dashboard !== 'off')
    throw new UsageError(
      `${flagLabel(args, DASHBOARD.name)} must be on or off, not ${JSON.stringify(dashboard)}`,
    );
  const mail = mailFlags(args);
  const trust = trustFlag(args);
  return {
    host,
    port,
    snapshots: resolve(SNAPSHOTS.read(args)),
    threads,
    // The URL's own serialization: ASCII (punycode host, percent-encoded path), as
    // headers (Link) and problem `type` URLs need it.
    baseUrl: baseUrl.href.replace(/\/+$/, ''),
    baseUrlDerived: BASE_URL.read(args) === undefined,
    freshnessHours,
    claimFile: claimFile === undefined ? null : resolve(claimFile),
    claimName,
    pollMs: POLL_MS.read(args),
    accessLogSample: ACCESS_LOG_SAMPLE.read(args),
    store,
    plansFile: plansFile === undefined ? null : resolve(plansFile),
    mcpOrigins,
    ...admin,
    dashboard: dashboard === 'on',
    ...mail,
    maxKeys: MAX_KEYS.read(args),
    trustProxy: trust,
    benchmark: benchmarkFlag(args),
  };
}

function hostFlag(args: ParsedArgs, name: string, host: string): string {
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host))
    throw new UsageError(
      `${flagLabel(args, name)} must be a host name or address, not ${JSON.stringify(host)}`,
    );
  return host;
}

function freshnessFlag(args: ParsedArgs): number {
  const text = FRESHNESS_HOURS.read(args);
  const hours = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(hours > 0)) {
    throw new UsageError(
      `${flagLabel(args, FRESHNESS_HOURS.name)} must be a positive number of hours, not ${JSON.stringify(text)}`,
    );
  }
  return hours;
}

/** `--base-url`, else the listening address: published in every problem body, the catalog and OpenAPI. */
function baseUrlFlag(args: ParsedArgs, host: string, port: number): URL {
  const defaultBase = localBaseUrl(host, port);
  // A host the URL parser refuses (999.1.1.1) is the host's fault when no base URL was given.
  if (!args.flags.has(BASE_URL.name) && !URL.canParse(defaultBase))
    throw new UsageError(
      `${flagLabel(args, HOST.name)} is not a valid host name or address: ${JSON.stringify(host)}`,
    );
  const baseUrl = (BASE_URL.read(args) ?? defaultBase).replace(/\/+$/, '');
  const problem = baseUrlProblem(baseUrl);
  if (problem !== null) throw new UsageError(`${flagLabel(args, BASE_URL.name)} ${problem}`);
  return new URL(baseUrl);
}

function claimNameFlag(args: ParsedArgs): string {
  const claimName = CLAIM_NAME.read(args);
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(claimName)) {
    throw new UsageError(
      `${flagLabel(args, CLAIM_NAME.name)} must be 1 to 64 lower-case letters, digits, '.', '_' or '-', not ${JSON.stringify(claimName.length > 80 ? `${claimName.slice(0, 77)}...` : claimName)}`,
    );
  }
  return claimName;
}

function adminFlags(args: ParsedArgs, port: number): Pick<ServeConfig, 'adminPort' | 'adminHost'> {
  const adminPort = ADMIN_PORT.read(args) ?? null;
  const adminHost = hostFlag(args, ADMIN_HOST.name, ADMIN_HOST.read(args));
  if (adminPort !== null && adminPort !== 0 && adminPort === port)
    throw new UsageError(
      `${flagLabel(args, ADMIN_PORT.name)} must differ from ${flagLabel(args, PORT.name)}: /metrics is never served on the public port`,
    );
  return { adminPort, adminHost };
}

function mailFlags(args: ParsedArgs): Pick<ServeConfig, 'smtpUrl' | 'mailFrom'> {
  const smtpUrl = SMTP_URL.read(args) ?? null;
  const mailFrom = MAIL_FROM.read(args) ?? null;
  const mailProblem =
    (smtpUrl === null ? null : smtpUrlProblem(smtpUrl)) ??
    (mailFrom === null ? null : mailFromProblem(mailFrom)) ??
    (smtpUrl !== null && mailFrom === null
      ? '--smtp-url needs --mail-from: the address account emails come from'
      : null);
  if (mailProblem !== null) throw new UsageError(mailProblem);
  return { smtpUrl, mailFrom };
}

function benchmarkFlag(args: ParsedArgs): string | null {
  const benchmark = BENCHMARK.read(args) ?? null;
  if (benchmark !== null && !isPossibleCode(benchmark))
    throw new UsageError(
      `${flagLabel(args, BENCHMARK.name)} takes a fund code (1 to 32 characters, no control characters): ${JSON.stringify(benchmark)}`,
    );
  return benchmark;
}

function trustFlag(args: ParsedArgs): ServeConfig['trustProxy'] {
  const trustText = TRUST_PROXY.read(args);
  const trust = trustText === undefined ? null : parseTrustedProxies(trustText);
  if (typeof trust === 'string')
    throw new UsageError(
      `${flagLabel(args, TRUST_PROXY.name)} takes comma-separated addresses or CIDR ranges of the proxies in front (127.0.0.1,10.0.0.0/8): ${trust}`,
    );
  return trust === null ? [] : trust.ranges;
}

/**
 * `--mcp-origins`: `*`, or comma-separated origins (`https://app.example.com`), each
 * kept in the form browsers send in `Origin` (lower-case scheme and host, no default
 * port, no path).
 */
function parseOrigins(text: string, label: string): readonly string[] | '*' {
  if (text.trim() === '*') return '*';
  const origins: string[] = [];
  for (const part of text.split(',')) {
    const o = part.trim();
    if (o === '') continue;
    let u: URL | null = null;
    try {
      u = new URL(o);
    } catch {
      u = null;
    }
    const bare = u !== null && (u.pathname === '/' || u.pathname === '') && u.search === '' && u.hash === '';
    if (
      u === null ||
      (u.protocol !== 'http:' && u.protocol !== 'https:') ||
      !bare ||
      u.username !== '' ||
      u.password !== ''
    )
      throw new UsageError(
        `${label} takes * or comma-separated origins such as https://app.example.com (scheme, host and port only), not ${JSON.stringify(o.length > 80 ? `${o.slice(0, 77)}...` : o)}`,
      );
    origins.push(u.origin);
  }
  return origins;
}
