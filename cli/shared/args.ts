/**
 * Flag parsing for every subcommand: `--flag value` or `--flag=value`, each flag
 * also read from FUNDRETURNS_<FLAG> (flags win), unknown or malformed flags a usage
 * error (exit 2) naming the flag.
 */
import { parseDay } from '../../core/dates.js';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `--help` (or `-h`) after a command: its usage is printed, exit 0. */
export class HelpRequested extends UsageError {
  constructor() {
    super('help');
    this.name = 'HelpRequested';
  }
}

export type FlagKind = 'string' | 'boolean';

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
  /** Flags whose value came from the environment, so messages name the variable. */
  fromEnv: Set<string>;
}

/** How a message names a flag: `--port`, or `FUNDRETURNS_PORT (--port)` when the value came from there. */
export function flagLabel(args: ParsedArgs, name: string): string {
  return args.fromEnv.has(name) ? `${envName(name)} (--${name})` : `--${name}`;
}

function envName(flag: string): string {
  return `FUNDRETURNS_${flag.toUpperCase().replace(/-/g, '_')}`;
}

export function parseArgs(
  argv: readonly string[],
  spec: Record<string, FlagKind>,
  env: NodeJS.ProcessEnv = process.env,
): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  const fromEnv = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') throw new HelpRequested();
    if (!a.startsWith('--') || a === '--') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    const kind = spec[name];
    if (kind === undefined) throw new UsageError(`unknown flag --${name}`);
    if (kind === 'boolean') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = a.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) value = argv[++i];
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  for (const [name, kind] of Object.entries(spec)) {
    if (flags.has(name)) continue;
    const v = env[envName(name)];
    if (v === undefined || v === '') continue;
    if (kind === 'boolean') {
      if (!/^(1|true|yes)$/i.test(v) && !/^(0|false|no)$/i.test(v)) {
        throw new UsageError(`${envName(name)} (--${name}) must be true or false, not ${JSON.stringify(v)}`);
      }
      if (/^(1|true|yes)$/i.test(v)) flags.set(name, true);
    } else {
      flags.set(name, v);
    }
    fromEnv.add(name);
  }
  return { positionals, flags, fromEnv };
}

export function stringFlag(args: ParsedArgs, name: string, fallback: string): string;
export function stringFlag(args: ParsedArgs, name: string): string | undefined;
export function stringFlag(args: ParsedArgs, name: string, fallback?: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : fallback;
}

export function intFlag(args: ParsedArgs, name: string, fallback: number, min: number, max: number): number {
  const v = args.flags.get(name);
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !/^\d+$/.test(v))
    throw new UsageError(`${flagLabel(args, name)} must be a whole number, not ${JSON.stringify(v)}`);
  const n = Number(v);
  if (n < min || n > max)
    throw new UsageError(`${flagLabel(args, name)} must be between ${min} and ${max}, not ${n}`);
  return n;
}

export function floatFlag(
  args: ParsedArgs,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = args.flags.get(name);
  if (v === undefined) return fallback;
  const n = typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(
      `${flagLabel(args, name)} must be a number from ${min} to ${max}, not ${JSON.stringify(v)}`,
    );
  return n;
}

export function dayFlag(args: ParsedArgs, name: string): number | undefined {
  const v = stringFlag(args, name);
  if (v === undefined) return undefined;
  const d = parseDay(v);
  if (d === null)
    throw new UsageError(`${flagLabel(args, name)} must be a date YYYY-MM-DD, not ${JSON.stringify(v)}`);
  return d;
}

export function boolFlag(args: ParsedArgs, name: string): boolean {
  return args.flags.get(name) === true;
}
