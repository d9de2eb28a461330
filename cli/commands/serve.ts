/**
 * `fundreturns serve`. The server itself (serve-run.ts, uWS) is loaded only when
 * asked for, so other commands never load it.
 */
import type { Command } from '../shared/command.js';
import type { CliIo } from '../shared/io.js';
import { SERVE_FORMS } from './serve-flags.js';

export const serve: Command = {
  name: 'serve',
  summary: 'serve REST and MCP over HTTP from the snapshots directory',
  forms: SERVE_FORMS,
  run: async (argv: string[], io: CliIo) => (await import('./serve-run.js')).runServe(argv, io),
};
