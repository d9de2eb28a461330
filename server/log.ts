/**
 * The server's JSON-lines logger (pino on stdout). One per thread that logs.
 *
 * Lines go to stdout through a small asynchronous sink of our own (StdoutSink), not
 * pino.destination, for two promises a server must keep whatever reads its output:
 * - when nothing reads stdout (a stalled pipe or log shipper), lines beyond 16 MiB
 *   are dropped instead of growing the process's memory without end;
 * - when the reader is gone (EPIPE: `serve | head`, a crashed log collector) or stdout
 *   cannot be written at all, logging stops and serving goes on. pino.destination's
 *   exit flush retries such a write forever, so the process could not be stopped.
 */
import { write, writeSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import pino, { type Logger } from 'pino';

const LOG_BUFFER_MAX = 16 * 1024 * 1024;
/** How long a full pipe (EAGAIN) is waited for before a write is tried again. */
const BUSY_RETRY_MS = 20;
/** At exit, how long lines still queued may wait for a full pipe before they are dropped. */
const EXIT_FLUSH_MS = 1000;

class StdoutSink {
  #queue: Buffer[] = [];
  #queued = 0;
  #writing = false;
  #closed = false;

  readonly #fd: number;
  readonly #maxBytes: number;
  constructor(fd: number, maxBytes: number) {
    this.#fd = fd;
    this.#maxBytes = maxBytes;
  }

  /** pino's stream interface: one line, queued and written in order. */
  write(line: string): boolean {
    if (this.#closed) return true;
    const b = Buffer.from(line, 'utf8');
    if (this.#queued + b.length > this.#maxBytes) return true; // dropped: nobody is reading
    this.#queue.push(b);
    this.#queued += b.length;
    if (!this.#writing) this.#next();
    return true;
  }

  #next(): void {
    if (this.#closed || this.#queue.length === 0) {
      this.#writing = false;
      return;
    }
    this.#writing = true;
    const chunk = this.#queue.length === 1 ? this.#queue[0] : Buffer.concat(this.#queue);
    this.#queue = [];
    write(this.#fd, chunk, 0, chunk.length, null, (err, n) => {
      if (err) {
        if (err.code !== 'EAGAIN' && err.code !== 'EBUSY') return this.#close(); // EPIPE: the reader is gone for good
        this.#queue.unshift(chunk);
        setTimeout(() => this.#next(), BUSY_RETRY_MS);
        return;
      }
      this.#queued -= n;
      if (n < chunk.length) this.#queue.unshift(chunk.subarray(n));
      this.#next();
    });
  }

  #close(): void {
    this.#closed = true;
    this.#queue = [];
    this.#queued = 0;
    this.#writing = false;
  }

  /**
   * At exit: what is still queued (not a write already under way, which would repeat
   * lines), written now, for at most EXIT_FLUSH_MS; never a loop on a dead pipe.
   */
  flushSync(): void {
    const until = Date.now() + EXIT_FLUSH_MS;
    let chunk = this.#queue.length === 0 ? null : Buffer.concat(this.#queue);
    while (chunk !== null && chunk.length > 0 && !this.#closed) {
      try {
        chunk = chunk.subarray(writeSync(this.#fd, chunk));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if ((code !== 'EAGAIN' && code !== 'EBUSY') || Date.now() >= until) break;
      }
    }
    this.#close();
  }
}

export function serverLogger(): Logger {
  const base = threadId === 0 ? { service: 'fundreturns' } : { service: 'fundreturns', thread: threadId };
  const sink = new StdoutSink(1, LOG_BUFFER_MAX);
  // A worker thread's `process` emits its own 'exit'.
  process.once('exit', () => sink.flushSync());
  return pino({ base }, sink);
}
