/**
 * The Redis client both the store (store-redis.ts) and the limiter use, and the
 * deadline every call to it runs under: node-redis has no reply timeout of its own.
 */
import { createClient } from 'redis';
import { redactUrl } from './redact-url.js';

export type LogFn = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/**
 * A client that, by default, fails fast on the first connection (a wrong URL at start-up
 * should stop the server, not hang it) and retries quickly forever once it has been
 * connected. Commands are rejected at once while it is reconnecting instead of queueing:
 * callers have a local answer (last known keys, local counting) meanwhile.
 */
export function makeClient(
  url: string,
  opts: { retryFromStart?: boolean; commandTimeoutMs?: number; reconnectMaxMs?: number } = {},
) {
  let connected = opts.retryFromStart ?? false;
  const reconnectMaxMs = opts.reconnectMaxMs ?? 1000;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    // node-redis applies this only until a command is written, not to its reply; 0 also
    // spares an AbortSignal per command on the hot path. Stalls are detected by callers.
    commandOptions: opts.commandTimeoutMs === undefined ? undefined : { timeout: opts.commandTimeoutMs },
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number, cause: Error) =>
        connected
          ? Math.min(50 * 2 ** retries, reconnectMaxMs)
          : new Error(`cannot reach Redis at ${redactUrl(url)}: ${cause.message}`),
    },
  });
  client.on('ready', () => {
    connected = true;
  });
  return client;
}

/** A call to Redis that got no answer in time (the connection was accepted, the reply never came). */
export class RedisTimeoutError extends Error {
  override readonly name = 'RedisTimeoutError';
}

/**
 * `p`, or a RedisTimeoutError after `ms` (then `onTimeout` is called). A peer that
 * vanished without closing the TCP connection, or a stopped or hung Redis whose kernel
 * still accepts connections, never answers, and node-redis has no reply timeout: not for
 * commands, and not for the handshake `connect()` waits for once the TCP connection is made.
 */
export function withDeadline<T>(
  p: Promise<T>,
  ms: number,
  onTimeout: () => void,
  what = 'Redis',
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Rejected first: onTimeout may fail `p` at once (destroying its client), and the
      // race must report the timeout, not the disconnection it causes.
      reject(new RedisTimeoutError(`no answer from ${what} within ${ms} ms`));
      onTimeout();
    }, ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}
