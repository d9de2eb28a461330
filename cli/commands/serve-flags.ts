/**
 * `fundreturns serve`'s flags, declared once: the command (serve.ts) shows them and
 * the configuration (serve-config.ts) reads them.
 */
import { availableParallelism } from 'node:os';
import { DEFAULT_MAX_KEYS } from '../../accounts/key-actions.js';
import type { Form } from '../shared/command.js';
import { intOption, optionalIntOption, SNAPSHOTS, stringOption, stringOptionOr } from '../shared/flags.js';
import { STORE_OR_REDIS } from '../shared/store-flag.js';

export const HOST = stringOptionOr('host', '127.0.0.1', { help: 'the address to listen on' });
export const PORT = intOption('port', {
  default: 8080,
  min: 0,
  max: 65535,
  help: 'the port (0: any free one)',
});
export const SERVE_THREADS = intOption('threads', {
  default: availableParallelism(),
  min: 1,
  max: 64,
  value: '<cores>',
  help: 'event loops sharing the port and one copy of the snapshot (default: one per core)',
});
export const BASE_URL = stringOption('base-url', {
  value: 'URL',
  help: 'the public address in problem types, the API catalog and OpenAPI (default http://HOST:PORT)',
});
export const FRESHNESS_HOURS = stringOptionOr('freshness-hours', '120', {
  help: 'how old the data may be (from 16:00 New York time on its as_of) before /healthz answers 503',
});
export const CLAIM_FILE = stringOption('claim-file', {
  value: 'FILE',
  help: "an MCP directory's ownership file, served at /.well-known/<claim-name>.json",
});
export const CLAIM_NAME = stringOptionOr('claim-name', 'glama', {
  help: 'the name of the claim file served',
});
export const POLL_MS = intOption('poll-ms', {
  default: 500,
  min: 50,
  max: 60_000,
  help: 'how often CURRENT is checked for a new snapshot, in milliseconds',
});
export const ACCESS_LOG_SAMPLE = intOption('access-log-sample', {
  default: 1000,
  min: 0,
  max: 1_000_000_000,
  help: 'write one access-log line per N requests (0: none)',
});
export const PLANS = stringOption('plans', {
  value: 'FILE',
  help: "a JSON file of the plans' limits (default: the built-in ones)",
});
export const MCP_ORIGINS = stringOptionOr('mcp-origins', '', {
  value: 'ORIGIN,... | *',
  help: "browser origins /mcp accepts besides the --base-url's own (* any)",
});
export const ADMIN_PORT = optionalIntOption('admin-port', {
  value: 'N',
  min: 0,
  max: 65535,
  help: 'serve Prometheus /metrics on this port (never the public one); no metrics without it',
});
export const ADMIN_HOST = stringOptionOr('admin-host', '127.0.0.1', {
  help: 'the address of the --admin-port listener',
});
export const DASHBOARD = stringOptionOr('dashboard', 'on', {
  value: 'on|off',
  help: 'the account dashboard (/account): sign-up, keys, usage',
});
export const SMTP_URL = stringOption('smtp-url', {
  value: 'smtp://USER:PASS@HOST:PORT',
  help: "the mail server for the dashboard's emails (needs --mail-from)",
});
export const MAIL_FROM = stringOption('mail-from', {
  value: 'ADDRESS',
  help: "the address the dashboard's emails come from",
});
export const MAX_KEYS = intOption('max-keys', {
  default: DEFAULT_MAX_KEYS,
  min: 1,
  max: 1000,
  help: 'keys one account may hold at once in the dashboard',
});
export const TRUST_PROXY = stringOption('trust-proxy', {
  value: 'CIDR,...',
  help: 'the proxies in front, whose X-Forwarded-For names the client (default: none)',
});
export const BENCHMARK = stringOption('benchmark', {
  value: 'CODE',
  help: 'the fund that beta and correlation are measured against when a request names none (default: none)',
});
/** Shown for the whole family of `--refresh-<flag>`, which cli/commands/serve-refresh.ts parses. */
const REFRESH_CRON = stringOption('refresh-cron', {
  value: 'EXPR',
  text: '[--refresh-cron EXPR --refresh-source DIR (every refresh and schedule flag as --refresh-<flag>)]',
  help: 'run the refresh schedule inside the server; each refresh and schedule flag goes as --refresh-<flag>',
});

export const SERVE_FORMS: readonly Form[] = [
  {
    flags: [
      HOST,
      PORT,
      SNAPSHOTS,
      SERVE_THREADS,
      BASE_URL,
      FRESHNESS_HOURS,
      CLAIM_FILE,
      CLAIM_NAME,
      POLL_MS,
      ACCESS_LOG_SAMPLE,
      STORE_OR_REDIS,
      PLANS,
      MCP_ORIGINS,
      ADMIN_PORT,
      ADMIN_HOST,
      DASHBOARD,
      SMTP_URL,
      MAIL_FROM,
      MAX_KEYS,
      TRUST_PROXY,
      BENCHMARK,
      REFRESH_CRON,
    ],
  },
];
