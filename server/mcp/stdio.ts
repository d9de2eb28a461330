/**
 * `fundreturns mcp --stdio`: the same tools over stdin/stdout against a local
 * snapshot directory, for desktop agents that start local servers. No key and no
 * limits (the caller owns the machine and the data). stdout carries JSON-RPC only;
 * every log line goes to stderr. The snapshot is followed like `serve` does
 * (SnapshotManager), so a new build is picked up without restarting the agent.
 */
import { PassThrough } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { packageVersion } from '../../core/package-version.js';
import { SnapshotManager } from '../snapshot/manager.js';
import { ServingSnapshot } from '../snapshot/serving.js';
import { createMcpServer, serverInfo } from './server.js';
import { STDIO_SERVER_INSTRUCTIONS } from './tool-list.js';
import { prepareToolResults } from './tool-results.js';

export interface StdioOptions {
  /** The snapshots directory (absolute). */
  readonly dir: string;
  /** How often CURRENT is polled in case a file-system event is missed. */
  readonly pollMs: number;
}

/** Serve until stdin ends or a signal; `say` writes one line to stderr. Returns the exit code. */
export async function serveMcpStdio(
  { dir, pollMs }: StdioOptions,
  say: (line: string) => void,
): Promise<number> {
  const snapshots = await followSnapshots(dir, pollMs, say);
  const server = createMcpServer(serverInfo(packageVersion()), snapshots.current, STDIO_SERVER_INSTRUCTIONS);
  const input = stdinLines();
  const transport = new StdioServerTransport(input, process.stdout);
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
      say('fundreturns mcp: a message over 10 MiB: stopping (no line may be longer)');
      code = 1;
    } else say(`fundreturns mcp: ${e.message}`);
  };
  const session = new SessionEnd(input, transport);
  await server.connect(transport);
  session.countAnswers(transport);
  say(`fundreturns mcp: serving MCP on stdio from ${dir}`);
  await session.closed;
  snapshots.manager.stop();
  await server.close();
  // The transport only pauses stdin when it closes on an error; a paused pipe still keeps the process alive.
  process.stdin.destroy();
  return code;
}

/**
 * The snapshot directory followed like `serve` does; `current` is the snapshot served,
 * null until one is published.
 */
async function followSnapshots(
  dir: string,
  pollMs: number,
  say: (line: string) => void,
): Promise<{ manager: SnapshotManager; current: () => ServingSnapshot | null }> {
  let current: ServingSnapshot | null = null;
  let reported = false;
  const manager = new SnapshotManager(
    dir,
    pollMs,
    {
      onSnapshot: (msg) => {
        current = new ServingSnapshot(msg);
      },
      // Every problem is also logged at warn or error (below): said once, not twice.
      onProblem: (message) => {
        reported ||= message !== null;
      },
      log: (level, msg, fields) => {
        if (level !== 'info') say(`fundreturns mcp: ${msg} ${fields ? JSON.stringify(fields) : ''}`);
      },
    },
    prepareToolResults,
  );
  await manager.start();
  if (current === null)
    say(
      `fundreturns mcp: ${reported ? '' : `no snapshot in ${dir} yet: `}tools answer "No data loaded" until one is published (C24)`,
    );
  return { manager, current: () => current };
}

/**
 * stdin through a pass-through that ends the last line: the SDK reads a message only
 * at its newline, so a final message without one was dropped in silence.
 */
function stdinLines(): PassThrough {
  const input = new PassThrough();
  let lastByte = 0x0a;
  process.stdin.on('data', (chunk: Buffer) => {
    if (chunk.length > 0) lastByte = chunk[chunk.length - 1];
    input.write(chunk);
  });
  process.stdin.once('end', () => {
    if (lastByte !== 0x0a) input.write('\n');
    input.end();
  });
  return input;
}

/**
 * When the session is over. Requests read but not yet answered are counted: a session
 * ended by closing stdin still gets the answers to everything it sent (tool calls
 * answer asynchronously).
 */
class SessionEnd {
  readonly closed: Promise<void>;
  #unanswered = 0;
  #inputEnded = false;
  #finish: () => void = () => {};

  constructor(input: PassThrough, transport: StdioServerTransport) {
    this.closed = new Promise<void>((done) => {
      const finish = () => done();
      this.#finish = finish;
      // The client closed our stdout: the session is over.
      process.stdout.on('error', finish);
      // The agent ends the session by closing our stdin, once every request it sent is answered; or by a signal.
      input.once('end', () => {
        this.#inputEnded = true;
        if (this.#unanswered === 0) finish();
      });
      process.once('SIGTERM', finish);
      process.once('SIGINT', finish);
      transport.onclose = finish;
    });
  }

  /** Wraps the connected transport's receive and send to count requests and their answers. */
  countAnswers(transport: StdioServerTransport): void {
    const receive = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage) => {
      if ('method' in message && 'id' in message) this.#unanswered++;
      receive?.(message);
    };
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage) => {
      await send(message);
      if (!('method' in message) && 'id' in message && message.id !== null && this.#unanswered > 0) {
        this.#unanswered--;
        if (this.#inputEnded && this.#unanswered === 0) this.#finish();
      }
    };
  }
}

function rpcError(transport: StdioServerTransport, code: number, message: string): void {
  // id null: the id could not be read (JSON-RPC 2.0 §5). The SDK's type has no such message.
  void transport.send({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage);
}
