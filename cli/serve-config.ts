/**
 * `fundreturns serve` configuration: flags, then FUNDRETURNS_<FLAG> variables,
 * then defaults; each bad value is refused with a message naming it.
 */

import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { isPossibleCode } from '../core/codes.js';
import { localBaseUrl, type ServeConfig } from '../server/config.js';
import { mailFromProblem, smtpUrlProblem } from '../server/dashboard/mailer.js';
import { parseTrustedProxies } from '../server/http/client-address.js';
import { flagLabel, intFlag, parseArgs, stringFlag, UsageError } from './args.js';
import { storeFlag } from './store-flag.js';
import { flagSpec } from './usage.js';

const SERVE_FLAGS = flagSpec('serve');

export function parseServeConfig(argv: string[], env: NodeJS.ProcessEnv): ServeConfig {
  const args = parseArgs(argv, SERVE_FLAGS, env);
  if (args.positionals.length > 0)
    throw new UsageError(`serve: unexpected argument ${JSON.stringify(args.positionals[0])}`);
  const host = stringFlag(args, 'host', '127.0.0.1');
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host))
    throw new UsageError(
      `${flagLabel(args, 'host')} must be a host name or address, not ${JSON.stringify(host)}`,
    );
  const port = intFlag(args, 'port', 8080, 0, 65535);
  const threads = intFlag(args, 'threads', availableParallelism(), 1, 64);
  const freshnessText = stringFlag(args, 'freshness-hours', '120');
  const freshnessHours = Number(freshnessText);
  if (!/^\d+(\.\d+)?$/.test(freshnessText) || !(freshnessHours > 0)) {
    throw new UsageError(
      `${flagLabel(args, 'freshness-hours')} must be a positive number of hours, not ${JSON.stringify(freshnessText)}`,
    );
  }
  const defaultBase = localBaseUrl(host, port);
  // A host the URL parser refuses (999.1.1.1) is the host's fault when no base URL was given.
  if (!args.flags.has('base-url') && !URL.canParse(defaultBase))
    throw new UsageError(
      `${flagLabel(args, 'host')} is not a valid host name or address: ${JSON.stringify(host)}`,
    );
  const baseUrl = stringFlag(args, 'base-url', defaultBase).replace(/\/+$/, '');
  const baseFlag = flagLabel(args, 'base-url');
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new UsageError(`${baseFlag} must be an absolute http(s) URL, not ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${baseFlag} must be an http or https URL, not ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new UsageError(`${baseFlag} cannot have a query or fragment: ${JSON.stringify(baseUrl)}`);
  }
  // It is published in every problem body, the catalog and OpenAPI: never a password.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new UsageError(`${baseFlag} cannot carry a user name or password: ${JSON.stringify(baseUrl)}`);
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(baseUrl)) {
    throw new UsageError(`${baseFlag} has a malformed %-escape: ${JSON.stringify(baseUrl)}`);
  }
  const claimName = stringFlag(args, 'claim-name', 'glama');
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(claimName)) {
    throw new UsageError(
      `${flagLabel(args, 'claim-name')} must be 1 to 64 lower-case letters, digits, '.', '_' or '-', not ${JSON.stringify(claimName.length > 80 ? `${claimName.slice(0, 77)}...` : claimName)}`,
    );
  }
  const claimFile = stringFlag(args, 'claim-file');
  const store = storeFlag(args);
  const plansFile = stringFlag(args, 'plans');
  const mcpOrigins = parseOrigins(stringFlag(args, 'mcp-origins', ''), flagLabel(args, 'mcp-origins'));
  const adminPort = args.flags.has('admin-port') ? intFlag(args, 'admin-port', 0, 0, 65535) : null;
  const adminHost = stringFlag(args, 'admin-host', '127.0.0.1');
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(adminHost))
    throw new UsageError(
      `${flagLabel(args, 'admin-host')} must be a host name or address, not ${JSON.stringify(adminHost)}`,
    );
  if (adminPort !== null && adminPort !== 0 && adminPort === port)
    throw new UsageError(
      `${flagLabel(args, 'admin-port')} must differ from ${flagLabel(args, 'port')}: /metrics is never served on the public port`,
    );
  const dashboard = stringFlag(args, 'dashboard', 'on');
  if (dashboard !== 'on' && dashboard !== 'off')
    throw new UsageError(
      `${flagLabel(args, 'dashboard')} must be on or off, not ${JSON.stringify(dashboard)}`,
    );
  const smtpUrl = stringFlag(args, 'smtp-url') ?? null;
  const mailFrom = stringFlag(args, 'mail-from') ?? null;
  const mailProblem =
    (smtpUrl === null ? null : smtpUrlProblem(smtpUrl)) ??
    (mailFrom === null ? null : mailFromProblem(mailFrom)) ??
    (smtpUrl !== null && mailFrom === null
      ? '--smtp-url needs --mail-from: the address account emails come from'
      : null);
  if (mailProblem !== null) throw new UsageError(mailProblem);
  const trustText = stringFlag(args, 'trust-proxy');
  const trust = trustText === undefined ? null : parseTrustedProxies(trustText);
  if (typeof trust === 'string')
    throw new UsageError(
      `${flagLabel(args, 'trust-proxy')} takes comma-separated addresses or CIDR ranges of the proxies in front (127.0.0.1,10.0.0.0/8): ${trust}`,
    );
  const benchmark = stringFlag(args, 'benchmark') ?? null;
  if (benchmark !== null && !isPossibleCode(benchmark))
    throw new UsageError(
      `${flagLabel(args, 'benchmark')} takes a fund code (1 to 32 characters, no control characters): ${JSON.stringify(benchmark)}`,
    );
  return {
    host,
    port,
    snapshots: resolve(stringFlag(args, 'snapshots', './snapshots')),
    threads,
    // The URL's own serialization: ASCII (punycode host, percent-encoded path), as
    // headers (Link) and problem `type` URLs need it.
    baseUrl: parsed.href.replace(/\/+$/, ''),
    baseUrlDerived: stringFlag(args, 'base-url') === undefined,
    freshnessHours,
    claimFile: claimFile === undefined ? null : resolve(claimFile),
    claimName,
    pollMs: intFlag(args, 'poll-ms', 500, 50, 60_000),
    accessLogSample: intFlag(args, 'access-log-sample', 1000, 0, 1_000_000_000),
    store,
    plansFile: plansFile === undefined ? null : resolve(plansFile),
    mcpOrigins,
    adminPort,
    adminHost,
    dashboard: dashboard === 'on',
    smtpUrl,
    mailFrom,
    maxKeys: intFlag(args, 'max-keys', 10, 1, 1000),
    trustProxy: trust === null ? [] : trust.ranges,
    benchmark,
  };
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
