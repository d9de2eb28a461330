/**
 * The command line's usage, written once: `--help`, a usage error's reminder, the
 * parsers' flag lists (flagSpec) and the guide's "Command line" block (usageMarkdown,
 * `npm run usage`) are all made from this table.
 */
import type { FlagKind } from './args.js';

export interface FlagUse {
  readonly name: string;
  /** What follows the flag (a placeholder or the default); none for a switch. */
  readonly value?: string;
  /** Shown without brackets: the command needs it. */
  readonly required?: boolean;
  /** How the synopsis shows it, when not `[--name value]` ('' leaves it to another flag's text). */
  readonly text?: string;
}

export interface FormUse {
  /** Subcommand and positional arguments, as shown. */
  readonly args?: string;
  readonly flags: readonly FlagUse[];
}

export interface CommandUse {
  readonly command: string;
  /** What it does, in one line. */
  readonly summary: string;
  readonly forms: readonly FormUse[];
}

const SNAPSHOTS: FlagUse = { name: 'snapshots', value: './snapshots' };
const STORE: FlagUse = { name: 'store', value: './var/store' };
const JSON_OUT: FlagUse = { name: 'json' };
const THREADS: FlagUse = { name: 'threads', value: 'N' };

/** Where a refresh's days come from and the gates they pass (refresh, schedule, serve --refresh-*). */
export const REFRESH_SOURCE_FLAGS: readonly FlagUse[] = [
  { name: 'source', value: 'DIR', required: true },
  { name: 'provider', value: 'inbox|eodhd|synthetic' },
  { name: 'inbox', value: 'DIR' },
  { name: 'eodhd-url', value: 'https://eodhd.com' },
  { name: 'token-file', value: 'FILE', text: '[--token-file FILE (or FUNDRETURNS_EODHD_TOKEN)]' },
  { name: 'max-rate', value: '800' },
  { name: 'concurrency', value: '16' },
  { name: 'max-calls', value: 'N' },
  { name: 'max-move', value: '0.5' },
  { name: 'min-coverage', value: '0.9' },
  { name: 'max-bad-share', value: '0.01' },
  { name: 'keep', value: '5' },
];

/** When a schedule runs a refresh (schedule, serve --refresh-*). */
export const SCHEDULE_TIME_FLAGS: readonly FlagUse[] = [
  { name: 'cron', value: "'30 18 * * 1-5'" },
  { name: 'tz', value: 'America/New_York' },
  { name: 'retry-minutes', value: '5,15,45' },
];

export const COMMANDS: readonly CommandUse[] = [
  {
    command: 'generate',
    summary: 'write a synthetic source universe (funds.csv, price files, daily files)',
    forms: [
      {
        flags: [
          { name: 'out', value: 'DIR', required: true },
          { name: 'funds', value: '32000' },
          { name: 'seed', value: '1' },
          { name: 'from', value: '1970-01-01' },
          { name: 'to', value: 'last-close' },
          { name: 'daily-days', value: '0' },
          // Plan the universe to here and write it as it stands on --to: refresh --provider
          // synthetic then delivers the days after --to.
          { name: 'horizon', value: 'YYYY-MM-DD' },
          THREADS,
        ],
      },
    ],
  },
  {
    command: 'build',
    summary: 'build and publish a snapshot from a source directory, or append daily files to the live one',
    forms: [
      {
        flags: [
          { name: 'source', value: 'DIR', text: '--source DIR | --daily FILE|DIR' },
          { name: 'daily', value: 'FILE|DIR', text: '' },
          SNAPSHOTS,
          { name: 'keep', value: '5' },
          { name: 'max-bad-share', value: '0.01' },
          { name: 'allow-shrink' },
          THREADS,
        ],
      },
    ],
  },
  {
    command: 'refresh',
    summary:
      'fetch the missing trading days from a provider, check them and publish once; from nothing, load the whole universe',
    forms: [
      {
        flags: [
          ...REFRESH_SOURCE_FLAGS,
          SNAPSHOTS,
          { name: 'date', value: 'YYYY-MM-DD', text: '[--date YYYY-MM-DD | --redo YYYY-MM-DD]' },
          { name: 'redo', value: 'YYYY-MM-DD', text: '' },
          { name: 'estimate' },
          { name: 'no-wait' },
          JSON_OUT,
        ],
      },
    ],
  },
  {
    command: 'schedule',
    summary: 'run refresh on a cron schedule in New York time, trading days only, with retries',
    forms: [{ flags: [...REFRESH_SOURCE_FLAGS, SNAPSHOTS, ...SCHEDULE_TIME_FLAGS] }],
  },
  {
    command: 'query',
    summary: "print one fund's row from the live snapshot (exit 3 when there is none)",
    forms: [
      {
        args: 'fund|trailing|calendar CODE',
        flags: [{ name: 'as-of', value: 'YYYY-MM-DD' }, { name: 'year', value: 'YYYY' }, SNAPSHOTS],
      },
    ],
  },
  {
    command: 'inspect',
    summary: 'describe the live snapshot (its manifest with --json)',
    forms: [{ flags: [SNAPSHOTS, JSON_OUT] }],
  },
  {
    command: 'serve',
    summary: 'serve REST and MCP over HTTP from the snapshots directory',
    forms: [
      {
        flags: [
          { name: 'host', value: '127.0.0.1' },
          { name: 'port', value: '8080' },
          SNAPSHOTS,
          { name: 'threads', value: '<cores>' },
          { name: 'base-url', value: 'URL' },
          { name: 'freshness-hours', value: '120' },
          { name: 'claim-file', value: 'FILE' },
          { name: 'claim-name', value: 'glama' },
          { name: 'poll-ms', value: '500' },
          { name: 'access-log-sample', value: '1000' },
          { name: 'store', value: './var/store | redis://HOST:PORT' },
          { name: 'plans', value: 'FILE' },
          { name: 'mcp-origins', value: 'ORIGIN,... | *' },
          { name: 'admin-port', value: 'N' },
          { name: 'admin-host', value: '127.0.0.1' },
          { name: 'dashboard', value: 'on|off' },
          { name: 'smtp-url', value: 'smtp://USER:PASS@HOST:PORT' },
          { name: 'mail-from', value: 'ADDRESS' },
          { name: 'max-keys', value: '10' },
          { name: 'trust-proxy', value: 'CIDR,...' },
          {
            name: 'refresh-cron',
            value: 'EXPR',
            text: '[--refresh-cron EXPR --refresh-source DIR (every refresh and schedule flag as --refresh-<flag>)]',
          },
        ],
      },
    ],
  },
  {
    command: 'mcp',
    summary: 'serve the MCP tools on stdin/stdout for a local agent',
    forms: [{ flags: [{ name: 'stdio', required: true }, SNAPSHOTS, { name: 'poll-ms', value: '2000' }] }],
  },
  {
    command: 'accounts',
    summary: 'create, list and change accounts, show their usage, decide plan requests',
    forms: [
      {
        args: 'create NAME',
        flags: [{ name: 'plan', value: 'free|developer|pro|business', required: true }, JSON_OUT, STORE],
      },
      { args: 'list | show NAME', flags: [{ name: 'plans', value: 'FILE' }, JSON_OUT, STORE] },
      {
        args: 'usage NAME',
        flags: [
          { name: 'daily', text: '[--daily [--days 90]]' },
          { name: 'days', value: '90', text: '' },
          { name: 'plans', value: 'FILE' },
          JSON_OUT,
          STORE,
        ],
      },
      {
        args: 'set-plan NAME PLAN | set-status NAME active|none|canceled|past_due',
        flags: [JSON_OUT, STORE],
      },
      {
        args: 'requests | approve REQUEST_ID | decline REQUEST_ID',
        flags: [{ name: 'all' }, JSON_OUT, STORE],
      },
    ],
  },
  {
    command: 'keys',
    summary: 'create, list, revoke and rotate API keys',
    forms: [
      {
        args: 'create ACCOUNT | list [ACCOUNT] | revoke KEY_ID | rotate KEY_ID',
        flags: [{ name: 'grace', value: '86400' }, JSON_OUT, STORE],
      },
    ],
  },
  {
    command: 'users',
    summary:
      'list and show dashboard users; verify, disable or enable one; grant or revoke the admin role; create one',
    forms: [
      { args: 'list | show EMAIL|ID', flags: [JSON_OUT, STORE] },
      {
        args: 'create EMAIL',
        flags: [
          { name: 'account', value: 'NAME' },
          { name: 'admin' },
          { name: 'password-file', value: 'FILE|-' },
          JSON_OUT,
          STORE,
        ],
      },
      {
        args: 'verify EMAIL|ID | disable EMAIL|ID | enable EMAIL|ID | admin EMAIL|ID',
        flags: [{ name: 'revoke' }, JSON_OUT, STORE],
      },
    ],
  },
  {
    command: 'store',
    summary: 'back up the whole access store into a directory while servers run, or restore one',
    forms: [
      { args: 'backup DIR', flags: [JSON_OUT, { name: 'store', value: './var/store | redis://HOST:PORT' }] },
      {
        args: 'restore DIR',
        flags: [{ name: 'force' }, JSON_OUT, { name: 'store', value: './var/store | redis://HOST:PORT' }],
      },
    ],
  },
  {
    command: 'bench',
    summary: 'load-test a local server (beside a trivial uWS baseline) or a deployment; compare two runs',
    forms: [
      {
        flags: [
          SNAPSHOTS,
          { name: 'url', value: 'URL', text: '[--url URL --key KEY]' },
          { name: 'key', value: 'KEY', text: '' },
          { name: 'scenarios', value: 'all' },
          { name: 'duration', value: '5' },
          { name: 'connections', value: '64' },
          { name: 'pairs', value: '3' },
          { name: 'threads', value: '2' },
          { name: 'load-threads', value: '2' },
          { name: 'max-requests', value: '1000000' },
          { name: 'tool', value: 'auto|wrk|autocannon' },
          { name: 'instructions', value: '500' },
          { name: 'out', value: './bench/results' },
          JSON_OUT,
        ],
      },
      { args: 'compare A.json B.json', flags: [{ name: 'noise-factor', value: '2' }] },
      { args: 'report RUN.json', flags: [] },
    ],
  },
];

const WIDTH = 110;

function flagText(f: FlagUse): string {
  if (f.text !== undefined) return f.text;
  const shown = f.value === undefined ? `--${f.name}` : `--${f.name} ${f.value}`;
  return f.required ? shown : `[${shown}]`;
}

/** One form's synopsis lines, wrapped at WIDTH with continuation lines under its first flag. */
function formLines(command: string, form: FormUse, indent: string): string[] {
  const head = `${indent}${command}${form.args ? ` ${form.args}` : ''}`;
  const pad = ' '.repeat(indent.length + command.length + 1);
  const lines: string[] = [];
  let line = head;
  for (const part of form.flags.map(flagText).filter((t) => t !== '')) {
    if (line.length + 1 + part.length > WIDTH && line !== head) {
      lines.push(line);
      line = `${pad}${part}`;
    } else line += ` ${part}`;
  }
  lines.push(line);
  return lines;
}

const ENV_NOTE = 'Every flag can also be set as FUNDRETURNS_<FLAG> (e.g. FUNDRETURNS_SNAPSHOTS); flags win.';

function synopsis(indent: string, prefix = ''): string[] {
  return COMMANDS.flatMap((c) => c.forms.flatMap((f) => formLines(`${prefix}${c.command}`, f, indent)));
}

/** `fundreturns --help`. */
export function usageText(): string {
  return ['usage: fundreturns <command> [flags]', '', ...synopsis('  '), '', ENV_NOTE].join('\n');
}

function find(command: string): CommandUse | undefined {
  return COMMANDS.find((c) => c.command === command);
}

/** One command's usage lines (`usage: fundreturns query …`), or null for no such command. */
export function commandUsage(command: string): string | null {
  const c = find(command);
  if (c === undefined) return null;
  const lines = c.forms.flatMap((f) => formLines(`fundreturns ${c.command}`, f, '       '));
  return `usage: ${lines.join('\n').slice('usage: '.length)}`;
}

/** The flags a command's parser accepts, from the same table (a switch is 'boolean'). */
export function flagSpec(command: string): Record<string, FlagKind> {
  const c = find(command);
  if (c === undefined) throw new Error(`no command ${command} in the usage table`);
  const spec: Record<string, FlagKind> = {};
  for (const f of c.forms.flatMap((x) => x.flags))
    spec[f.name] = f.value === undefined ? 'boolean' : 'string';
  return spec;
}

/** The guide's "Command line" block, in Markdown: what each command does, then the synopsis. */
export function usageMarkdown(): string {
  return [
    '| command | what it does |',
    '| ------- | ------------ |',
    ...COMMANDS.map((c) => `| \`fundreturns ${c.command}\` | ${c.summary} |`),
    '',
    '```text',
    ...synopsis('', 'fundreturns '),
    '```',
    '',
    ENV_NOTE,
  ].join('\n');
}
