/**
 * `fundreturns mcp --stdio`: the same six tools over stdin/stdout against a local
 * snapshot directory, for desktop agents that start local servers. No key and no
 * limits (the caller owns the machine and the data). stdout carries JSON-RPC only;
 * every log line goes to stderr. The snapshot is followed like `serve` does
 * (SnapshotManager), so a new build is picked up without restarting the agent.
 */
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { boolFlag, intFlag, parseArgs, stringFlag, UsageError } from '../../builder/cli/args.js';
import type { CliIo } from '../../builder/cli/main.js';
import { packageVersion } from '../main.js';
import { SnapshotManager } from '../snapshot/manager.js';
import { ServingSnapshot } from '../snapshot/serving.js';
import { createMcpServer, serverInfo } from './server.js';

export async function runMcp(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { stdio: 'boolean', snapshots: 'string', 'poll-ms': 'string' }, io.env);
  if (args.positionals.length > 0)
    throw new UsageError(`mcp: unexpected argument ${JSON.stringify(args.positionals[0])}`);
  if (!boolFlag(args, 'stdio'))
    throw new UsageError('mcp: --stdio is required (the HTTP endpoint is /mcp of `fundreturns serve`)');
  const dir = resolve(stringFlag(args, 'snapshots', './snapshots'));
  const pollMs = intFlag(args, 'poll-ms', 2000, 10, 3_600_000);

  let current: ServingSnapshot | null = null;
  const manager = new SnapshotManager(dir, pollMs, {
    onSnapshot: (msg) => {
      current = new ServingSnapshot(msg);
    },
    onProblem: (message) => {
      if (message) io.err(`fundreturns mcp: ${message}`);
    },
    log: (level, msg, fields) => {
      if (level !== 'info') io.err(`fundreturns mcp: ${msg} ${fields ? JSON.stringify(fields) : ''}`);
    },
  });
  await manager.start();
  if (current === null)
    io.err(`fundreturns mcp: no snapshot in ${dir} yet; tools answer "No data loaded" (C24)`);

  const server = createMcpServer(serverInfo(packageVersion()), () => current);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((done) => {
    const finish = () => done();
    // The agent ends the session by closing our stdin, or by a signal.
    process.stdin.once('end', finish);
    process.stdin.once('close', finish);
    process.once('SIGTERM', finish);
    process.once('SIGINT', finish);
    transport.onclose = finish;
  });
  await server.connect(transport);
  io.err(`fundreturns mcp: serving MCP on stdio from ${dir}`);
  await closed;
  manager.stop();
  await server.close();
  return 0;
}
