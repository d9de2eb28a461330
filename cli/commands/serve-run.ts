/**
 * `fundreturns serve` (loaded only when asked for, so the builder's commands never
 * load uWS): start the server, say where it listens and what it still lacks, stop on
 * SIGTERM or SIGINT.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { redactUrl } from '../../accounts/redact-url.js';
import { localBaseUrl } from '../../server/config.js';
import { releaseSignals } from '../../server/early-signal.js';
import { startServer } from '../../server/supervisor.js';
import type { CliIo } from '../shared/io.js';
import { parseServeConfig } from './serve-config.js';
import { parseServeRefresh, splitRefreshArgs, startServeRefresh } from './serve-refresh.js';

export async function runServe(argv: string[], io: CliIo): Promise<number> {
  // The refresh schedule's flags (--refresh-*) are the builder's; the rest are the server's.
  const split = splitRefreshArgs(argv);
  const refreshArgs = parseServeRefresh(split.refresh, io.env);
  const config = parseServeConfig(split.rest, io.env);
  const unpublished = snapshotsNotYetPublished(config.snapshots);
  // Signals are taken from the start: one during startup (the snapshot loading) stops
  // the server as soon as it is up, never kills it mid-way. A repeated signal changes
  // nothing: the drain is already bounded (every in-flight body has 10 s). SIGHUP is
  // left alone: a listener would undo `nohup`, which ignores it so the server outlives
  // its terminal.
  let signalled: NodeJS.Signals | null = null;
  let wake: () => void = () => {};
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled !== null) {
      io.err(`fundreturns: ${signal} again: still stopping (finishing requests in flight)`);
      return;
    }
    signalled = signal;
    wake();
  };
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  for (const s of signals) process.on(s, onSignal);
  // One that came while modules loaded (bin/ held it) counts as if it came now.
  const early = releaseSignals();
  if (early !== null) onSignal(early);
  try {
    const server = await startServer(config);
    io.err(
      `fundreturns: serving on ${localBaseUrl(config.host, server.port)} (${config.threads} threads) from ${config.snapshots}`,
    );
    if (server.adminPort !== null)
      io.err(
        `fundreturns: metrics on ${localBaseUrl(config.adminHost, server.adminPort)}/metrics (admin listener)`,
      );
    if (unpublished !== null)
      io.err(
        `fundreturns: warning: ${unpublished}: /v1 and /mcp answer 503 until a snapshot is published there ` +
          `(fundreturns build --source DIR --snapshots ${config.snapshots})`,
      );
    if (server.keys === 0)
      io.err(
        `fundreturns: warning: no API keys in ${redactUrl(config.store)}: every /v1 and /mcp request answers 401 ` +
          'until one is made (fundreturns accounts create NAME --plan PLAN, then fundreturns keys create NAME)',
      );
    const refresh =
      refreshArgs === null
        ? null
        : startServeRefresh(refreshArgs, config.snapshots, (line) => io.err(`fundreturns: ${line}`));
    if (refresh !== null) io.err(`fundreturns: ${refresh.describe()}`);
    if (signalled === null) await new Promise<void>((resolve) => (wake = resolve));
    await refresh?.stop();
    await server.stop();
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
  return 0;
}

/**
 * A snapshots directory the builder can publish into later is no reason not to start
 * (C24: 503 until then), but worth a warning; one that can never be read (a file, no
 * permission) is a configuration error, refused before anything starts.
 */
function snapshotsNotYetPublished(dir: string): string | null {
  try {
    if (!statSync(dir).isDirectory()) throw new Error(`--snapshots ${dir} is not a directory`);
    accessSync(dir, constants.R_OK | constants.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `${dir} does not exist yet`;
    if (code === undefined) throw e;
    throw new Error(`--snapshots ${dir} cannot be read (${code})`);
  }
  return existsSync(join(dir, 'CURRENT')) ? null : `no snapshot is published in ${dir} yet (no CURRENT)`;
}
