/**
 * A flag declared once: its name, what the synopsis shows (its default, or a
 * placeholder), one line of help, and how its value is read and checked. The usage
 * text, the parser's flag list, `fundreturns help COMMAND` and docs/cli.md are all made
 * from these declarations (cli/usage.ts), so a default is written in one place.
 */
import { availableParallelism } from 'node:os';
import { type Day, parseDay } from '../../core/dates.js';
import { boolFlag, dayFlag, type FlagKind, floatFlag, intFlag, type ParsedArgs, stringFlag } from './args.js';

export interface Flag<T = unknown> {
  readonly name: string;
  readonly kind: FlagKind;
  /** What the synopsis shows after `--name`: its default, or a placeholder; none for a switch. */
  readonly value?: string;
  /** Shown without brackets: the command needs it. */
  readonly required?: boolean;
  /** How the synopsis shows it, when not `[--name value]` ('' leaves it to another flag's text). */
  readonly text?: string;
  /** What it does, in one line (`fundreturns help COMMAND`, docs/cli.md). */
  readonly help: string;
  /** Its value, else its default; `prefix` reads it as serve's `--refresh-<name>`. */
  read(args: ParsedArgs, prefix?: string): T;
}

/** How a flag is shown: its help, and where the synopsis is not `[--name value]`, how. */
export interface Shown {
  readonly help: string;
  readonly required?: boolean;
  readonly text?: string;
}

/** A value with no default: undefined when not given. */
export function stringOption(name: string, o: Shown & { value: string }): Flag<string | undefined> {
  return { name, kind: 'string', ...o, read: (args, p = '') => stringFlag(args, p + name) };
}

/** A value with a default; the synopsis shows the default unless `value` says otherwise. */
export function stringOptionOr(name: string, fallback: string, o: Shown & { value?: string }): Flag<string> {
  return {
    name,
    kind: 'string',
    value: fallback,
    ...o,
    read: (args, p = '') => stringFlag(args, p + name, fallback),
  };
}

interface Range extends Shown {
  readonly default: number;
  readonly min: number;
  readonly max: number;
  /** A placeholder shown instead of the default, where the machine decides it. */
  readonly value?: string;
}

type RangeReader = (args: ParsedArgs, name: string, fallback: number, min: number, max: number) => number;

function rangeOption(name: string, o: Range, reader: RangeReader): Flag<number> {
  const { default: fallback, min, max, ...shown } = o;
  return {
    name,
    kind: 'string',
    value: String(fallback),
    ...shown,
    read: (args, p = '') => reader(args, p + name, fallback, min, max),
  };
}

/** A whole number from `min` to `max`. */
export function intOption(name: string, o: Range): Flag<number> {
  return rangeOption(name, o, intFlag);
}

/** A whole number from `min` to `max`, undefined when not given. */
export function optionalIntOption(
  name: string,
  o: Shown & { value: string; min: number; max: number },
): Flag<number | undefined> {
  const { min, max, ...shown } = o;
  return {
    name,
    kind: 'string',
    ...shown,
    read: (args, p = '') => (args.flags.has(p + name) ? intFlag(args, p + name, 0, min, max) : undefined),
  };
}

/** A decimal number from `min` to `max`. */
export function numberOption(name: string, o: Range): Flag<number> {
  return rangeOption(name, o, floatFlag);
}

/** A date YYYY-MM-DD, undefined when not given; `value` says what stands in for it. */
export function dayOption(name: string, o: Shown & { value: string }): Flag<Day | undefined> {
  return { name, kind: 'string', ...o, read: (args, p = '') => dayFlag(args, p + name) };
}

/** A date YYYY-MM-DD with a fixed default, shown as the default. */
export function dayOptionOr(name: string, fallback: string, o: Shown): Flag<Day> {
  const day = parseDay(fallback);
  if (day === null) throw new Error(`--${name}: ${fallback} is not a date`);
  return {
    name,
    kind: 'string',
    value: fallback,
    ...o,
    read: (args, p = '') => dayFlag(args, p + name) ?? day,
  };
}

/** A switch: given or not, never a value. */
export function switchOption(name: string, o: Shown): Flag<boolean> {
  return { name, kind: 'boolean', ...o, read: (args, p = '') => boolFlag(args, p + name) };
}

/** The parser's list of `flags`: a switch is 'boolean', the rest take a value. */
export function flagKinds(flags: readonly Flag[]): Record<string, FlagKind> {
  return Object.fromEntries(flags.map((f) => [f.name, f.kind]));
}

// Flags several commands share, declared once.

export const SNAPSHOTS = stringOptionOr('snapshots', './snapshots', {
  help: 'the snapshots directory: published snapshots and CURRENT, the live one',
});
export const JSON_OUTPUT = switchOption('json', { help: 'print JSON instead of text' });

/** Worker threads of generate and build: one per core unless told. */
export const THREADS = intOption('threads', {
  default: availableParallelism(),
  min: 1,
  max: 256,
  value: 'N',
  help: 'worker threads (default: one per core)',
});

/** Snapshot directories kept after a publish (build and refresh). */
export const KEEP = intOption('keep', {
  default: 5,
  min: 1,
  max: 1000,
  help: 'snapshot directories kept after a publish; older ones are pruned',
});
/** The share of bad rows that fails a build (build and refresh). */
export const MAX_BAD_SHARE = numberOption('max-bad-share', {
  default: 0.01,
  min: 0,
  max: 1,
  help: 'fail, publishing nothing, when skipped rows exceed this share of all data rows',
});
