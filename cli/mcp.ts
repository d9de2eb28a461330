/**
 * `fundreturns mcp --stdio`: its flags. The session itself (server/mcp/stdio.ts) is
 * loaded only once they are read, and only for `mcp`: its stdout carries JSON-RPC alone.
 */
import { resolve } from 'node:path';
import { boolFlag, intFlag, parseArgs, stringFlag, UsageError } from './args.js';
import type { CliIo } from './io.js';
import { flagSpec } from './usage.js';

const MCP_FLAGS = flagSpec('mcp');

export async function runMcp(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, MCP_FLAGS, io.env);
  if (args.positionals.length > 0)
    throw new UsageError(`mcp: unexpected argument ${JSON.stringify(args.positionals[0])}`);
  if (!boolFlag(args, 'stdio'))
    throw new UsageError('mcp: --stdio is required (the HTTP endpoint is /mcp of `fundreturns serve`)');
  const dir = resolve(stringFlag(args, 'snapshots', './snapshots'));
  const pollMs = intFlag(args, 'poll-ms', 2000, 10, 3_600_000);
  const { serveMcpStdio } = await import('../server/mcp/stdio.js');
  return await serveMcpStdio({ dir, pollMs }, io.err);
}
