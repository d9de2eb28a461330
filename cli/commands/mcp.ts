/**
 * `fundreturns mcp --stdio`: its flags. The session itself (server/mcp/stdio.ts) is
 * loaded only once they are read, and only for `mcp`: its stdout carries JSON-RPC alone.
 */
import { resolve } from 'node:path';
import { UsageError } from '../shared/args.js';
import { type Command, noPositionals, parseCommand } from '../shared/command.js';
import { intOption, SNAPSHOTS, switchOption } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';

const STDIO = switchOption('stdio', {
  required: true,
  help: 'speak MCP on stdin and stdout (the HTTP endpoint is /mcp of `fundreturns serve`)',
});
const POLL_MS = intOption('poll-ms', {
  default: 2000,
  min: 10,
  max: 3_600_000,
  help: 'how often CURRENT is checked for a new snapshot, in milliseconds',
});

export const mcp: Command = {
  name: 'mcp',
  summary: 'serve the MCP tools on stdin/stdout for a local agent',
  forms: [{ flags: [STDIO, SNAPSHOTS, POLL_MS] }],
  run: runMcp,
};

async function runMcp(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(mcp, argv, io.env);
  noPositionals(args, 'mcp');
  if (!STDIO.read(args))
    throw new UsageError('mcp: --stdio is required (the HTTP endpoint is /mcp of `fundreturns serve`)');
  const dir = resolve(SNAPSHOTS.read(args));
  const pollMs = POLL_MS.read(args);
  const { serveMcpStdio } = await import('../../server/mcp/stdio.js');
  return await serveMcpStdio({ dir, pollMs }, io.err);
}
