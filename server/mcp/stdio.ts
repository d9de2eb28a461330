/**
 * `fundreturns mcp --stdio`: the same six tools over stdin/stdout against a local
 * snapshot directory, for desktop agents that start local servers. No key and no
 * limits (the caller owns the machine and the data). stdout carries JSON-RPC only;
 * every log line goes to stderr. The snapshot is followed like `serve` does
 * (SnapshotManager), so a new build is picked up without restarting the agent.
 */
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
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
  let reported = false;
  const manager = new SnapshotManager(dir, pollMs, {
    onSnapshot: (msg) => {
      current = new ServingSnapshot(msg);
    },
    // Every problem is also logged at warn or error (below): said once, not twice.
    onProblem: (message) => {
      reported ||= message !== null;
    },
    log: (level, msg, fields) => {
      if (level !== 'info') io.err(`fundreturns mcp: ${msg} ${fields ? JSON.stringify(fields) : ''}`);
    },
  });
  await manager.start();
  if (current === null)
    io.err(
      `fundreturns mcp: ${reported ? '' : `no snapshot in ${dir} yet: `}tools answer "No data loaded" until one is published (C24)`,
    );

  const server = createMcpServer(serverInfo(packageVersion()), () => current);
  const transport = new StdioServerTransport();
  let code = 0;
  // What the SDK's transport drops: a line that is not one JSON-RPC message gets the
  // error JSON-RPC 2.0 §5.1 prescribes (id null), and a line over its 10 MiB buffer,
  // after which it reads no more, ends the process with a message instead of silence.
  transport.onerror = (e: Error) => {
    if (e instanceof SyntaxError) rpcError(transport, -32700, 'Parse error: a line that is not JSON');
    else if (e.name === 'ZodError')
      rpcError(
        transport,
        -32600,
        'Invalid Request: not a JSON-RPC 2.0 message (jsonrpc "2.0", a method and a string or number id, or a notification); one message per line, no batches over stdio',
      );
    else if (/ReadBuffer exceeded/.test(e.message)) {
      io.err('fundreturns mcp: a message over 10 MiB: stopping (no line may be longer)');
      code = 1;
    } else io.err(`fundreturns mcp: ${e.message}`);
  };
  const closed = new Promise<void>((done) => {
    const finish = () => done();
    // The client closed our stdout: the session is over.
    process.stdout.on('error', finish);
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
  // The transport only pauses stdin when it closes on an error; a paused pipe still keeps the process alive.
  process.stdin.destroy();
  return code;
}

function rpcError(transport: StdioServerTransport, code: number, message: string): void {
  // id null: the id could not be read (JSON-RPC 2.0 §5). The SDK's type has no such message.
  void transport.send({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage);
}
