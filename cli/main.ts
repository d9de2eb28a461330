/**
 * `fundreturns`: one entry, one subcommand per job (DESIGN "Command line"), each
 * declared in cli/commands/. This file only dispatches and turns errors into exit
 * codes: 0 done, 1 failed (a build that published nothing), 2 usage error, 3 `query`
 * found no row (refresh adds its own, cli/commands/refresh.ts).
 */
import { BuildError } from '../builder/build.js';
import { testClockProblem } from '../core/clock.js';
import { findCommand } from './commands/index.js';
import { HelpRequested, UsageError } from './shared/args.js';
import { type CliIo, processIo } from './shared/io.js';
import { commandHelp, commandUsage, usageText } from './usage.js';

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  const clockProblem = testClockProblem();
  if (clockProblem !== null) {
    io.err(`fundreturns: ${clockProblem}`);
    return 2;
  }
  try {
    if (command === undefined || command === '--help' || command === '-h') {
      io.out(usageText());
      return command === undefined ? 2 : 0;
    }
    if (command === 'help') return help(rest, io);
    const c = findCommand(command);
    if (c === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    return await c.run(rest, io);
  } catch (e) {
    return failed(e, command, io);
  }
}

/** `fundreturns help`: the whole usage; `fundreturns help COMMAND`: that command and its flags explained. */
function help(argv: string[], io: CliIo): number {
  const [name, ...extra] = argv;
  if (name === undefined) {
    io.out(usageText());
    return 0;
  }
  const text = commandHelp(name);
  if (text === null) throw new UsageError(`help: unknown command ${JSON.stringify(name)}`);
  if (extra.length > 0) throw new UsageError(`help: unexpected argument ${JSON.stringify(extra[0])}`);
  io.out(text);
  return 0;
}

function failed(e: unknown, command: string | undefined, io: CliIo): number {
  if (e instanceof HelpRequested) {
    io.out(usageText());
    return 0;
  }
  if (e instanceof UsageError) {
    // The mistake, the one command's usage and where the rest is: not all fifteen lines.
    const usage = command === undefined ? null : commandUsage(command);
    io.err(`fundreturns: ${e.message}`);
    if (usage !== null) io.err(usage);
    io.err('see `fundreturns --help`');
    return 2;
  }
  if (e instanceof BuildError) {
    io.err(e.report.summary());
    io.err(`fundreturns: build failed: ${e.message}`);
    return 1;
  }
  io.err(`fundreturns: ${(e as Error).message}`);
  return 1;
}
