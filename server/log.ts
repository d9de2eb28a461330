/**
 * The server's JSON-lines logger (pino on stdout). One per thread that logs.
 *
 * Asynchronous, as pino is by default, but with a bounded buffer: when nothing reads
 * stdout (a stalled pipe or log shipper), lines beyond 16 MiB are dropped instead of
 * growing the process's memory without end.
 */
import { threadId } from 'node:worker_threads';
import pino, { type Logger } from 'pino';

const LOG_BUFFER_MAX = 16 * 1024 * 1024;

export function serverLogger(): Logger {
  const base = threadId === 0 ? { service: 'fundreturns' } : { service: 'fundreturns', thread: threadId };
  return pino({ base }, pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_MAX }));
}
