/**
 * A command as its module declares it: name, one-line summary, the forms its synopsis
 * shows (arguments and flags) and its handler. cli/commands/index.ts lists them all;
 * main.ts dispatches, usage.ts renders, and parseCommand parses from the same record.
 */
import { type ParsedArgs, parseArgs, UsageError } from './args.js';
import { type Flag, flagKinds } from './flags.js';
import type { CliIo } from './io.js';

export interface Form {
  /** Subcommand and positional arguments, as shown. */
  readonly args?: string;
  readonly flags: readonly Flag[];
}

export interface Command {
  readonly name: string;
  /** What it does, in one line. */
  readonly summary: string;
  readonly forms: readonly Form[];
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Every flag a command's forms show, each once, in the order first shown. */
export function commandFlags(c: Pick<Command, 'forms'>): Flag[] {
  const seen = new Map<string, Flag>();
  for (const f of c.forms.flatMap((form) => form.flags)) if (!seen.has(f.name)) seen.set(f.name, f);
  return [...seen.values()];
}

/** Parse a command's argv against the flags its usage shows, FUNDRETURNS_<FLAG> included. */
export function parseCommand(
  c: Pick<Command, 'forms'>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ParsedArgs {
  return parseArgs(argv, flagKinds(commandFlags(c)), env);
}

export function noPositionals(args: ParsedArgs, command: string): void {
  if (args.positionals.length > 0)
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(args.positionals[0])}`);
}
