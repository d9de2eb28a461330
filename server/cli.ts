/**
 * Server-side subcommands of `fundreturns` (loaded only when asked for, so the
 * builder's commands never load uWS).
 */
import { UsageError } from '../builder/cli/args.js';
import type { CliIo } from '../builder/cli/main.js';
import { redactUrl } from './access/open-store.js';
import { parseServeConfig } from './config.js';
import { startServer } from './main.js';

export async function run(command: string, argv: string[], io: CliIo): Promise<number> {
  if (command === 'mcp') {
    // Loaded only for `mcp`: its stdout must carry JSON-RPC alone.
    const { runMcp } = await import('./mcp/stdio.js');
    return await runMcp(argv, io);
  }
  if (command !== 'serve') throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  const config = parseServeConfig(argv, io.env);
  const server = await startServer(config);
  io.err(
    `fundreturns: serving on http://${config.host}:${server.port} (${config.threads} threads) from ${config.snapshots}`,
  );
  if (server.keys === 0)
    io.err(
      `fundreturns: warning: no API keys in ${redactUrl(config.store)}: every /v1 and /mcp request answers 401 ` +
        'until one is made (fundreturns accounts create NAME --plan PLAN, then fundreturns keys create NAME)',
    );
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      void server.stop().then(resolve);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return 0;
}
