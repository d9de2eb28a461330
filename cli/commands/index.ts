/** Every command, in the order `--help` and docs/cli.md show them: the one list that knows them all. */
import type { Command } from '../shared/command.js';
import { accounts } from './accounts.js';
import { bench } from './bench.js';
import { build } from './build.js';
import { generate } from './generate.js';
import { inspect } from './inspect.js';
import { keys } from './keys.js';
import { mcp } from './mcp.js';
import { query } from './query.js';
import { refresh } from './refresh.js';
import { schedule } from './schedule.js';
import { serve } from './serve.js';
import { store } from './store.js';
import { users } from './users.js';

export const COMMANDS: readonly Command[] = [
  generate,
  build,
  refresh,
  schedule,
  query,
  inspect,
  serve,
  mcp,
  accounts,
  keys,
  users,
  store,
  bench,
];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}
