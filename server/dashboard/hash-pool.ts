/**
 * Password hashing with a bound: a fixed number of hashing threads of our own
 * (hash-worker.ts: scrypt synchronously, at the lowest CPU priority), each doing one
 * hash at a time, and a short queue in front of them. A hash asked for when the queue
 * is full is refused at once (HashBusy), so a flood of wrong passwords costs the
 * flooder a fast "try again shortly" instead of costing everyone else seconds: the
 * queue can never hold more than `queue` hashes of work.
 *
 * Why not node:crypto's asynchronous scrypt: it runs on libuv's thread pool (4
 * threads), which the store's file I/O, DNS and zlib share, so forty hashes in
 * flight stalled every page that reads a file, and nothing bounded them.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../core/start-thread.js';

/**
 * The server's bound, per serving thread (`--threads`): one hash at a time on one
 * hashing thread, eight waiting. A hash takes some 50 to 130 ms, so a form that waits
 * waits at most about a second; the ninth waiting is refused with Retry-After.
 */
export const HASHES_AT_ONCE = 1;
export const HASHES_WAITING = 8;

/** One scrypt derivation, as sent to a hashing thread. */
export interface HashJob {
  readonly id: number;
  readonly password: string;
  readonly salt: Uint8Array;
  readonly keyBytes: number;
  readonly n: number;
  readonly r: number;
  readonly p: number;
  readonly maxmem: number;
}

/** What a hashing thread says: ready (once), or a job's key or error. */
export type HashResult =
  | { readonly ready: true; readonly niced: boolean }
  | { readonly id: number; readonly key: Uint8Array }
  | { readonly id: number; readonly error: string };

/** The hashing is at its bound: the caller answers "try again shortly". */
export class HashBusy extends Error {
  override readonly name = 'HashBusy';
  constructor(readonly retryAfterS: number) {
    super(`password hashing is busy: try again in ${retryAfterS} s`);
  }
}

/** What derives scrypt keys: a HashPool in the server, node:crypto's pool in a CLI command. */
export interface Hasher {
  scrypt(job: Omit<HashJob, 'id'>): Promise<Buffer>;
  /**
   * Throws HashBusy when a hash asked for now would be refused: a form checks it first,
   * so a flood is refused before it costs a look at the store.
   */
  refuseWhenFull(): void;
}

interface Waiting {
  readonly job: HashJob;
  readonly resolve: (key: Buffer) => void;
  readonly reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  busy: Waiting | null;
}

export interface HashPoolOptions {
  /** Hashes at once, each on a thread of its own. */
  readonly threads: number;
  /** Hashes that may wait for a thread; one more is refused with HashBusy. */
  readonly queue: number;
  /** The Retry-After a refusal carries. */
  readonly retryAfterS?: number;
  /** A hashing thread that failed (it is replaced). */
  readonly onError?: (e: Error) => void;
}

export class HashPool implements Hasher {
  readonly #threads: Thread[] = [];
  readonly #waiting: Waiting[] = [];
  #nextId = 1;
  #closed = false;
  /** Whether every thread got the lowest CPU priority (Linux); resolves once they are up. */
  readonly niced: Promise<boolean>;

  constructor(readonly options: HashPoolOptions) {
    if (!Number.isSafeInteger(options.threads) || options.threads < 1)
      throw new Error(`a hash pool needs at least one thread, not ${options.threads}`);
    if (!Number.isSafeInteger(options.queue) || options.queue < 0)
      throw new Error(`a hash pool's queue is a whole number, not ${options.queue}`);
    const ready: Promise<boolean>[] = [];
    for (let i = 0; i < options.threads; i++) ready.push(this.#start());
    this.niced = Promise.all(ready).then((all) => all.every(Boolean));
    // Surfaced where awaited; a thread that never starts fails its jobs instead.
    this.niced.catch(() => {});
  }

  /** Hashes running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.#threads.filter((t) => t.busy !== null).length, waiting: this.#waiting.length };
  }

  refuseWhenFull(): void {
    if (this.#full()) throw new HashBusy(this.options.retryAfterS ?? 2);
  }

  #full(): boolean {
    return this.#threads.every((t) => t.busy !== null) && this.#waiting.length >= this.options.queue;
  }

  scrypt(job: Omit<HashJob, 'id'>): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('the hash pool is closed'));
    if (this.#full()) return Promise.reject(new HashBusy(this.options.retryAfterS ?? 2));
    const idle = this.#threads.find((t) => t.busy === null);
    return new Promise<Buffer>((resolve, reject) => {
      const w: Waiting = { job: { ...job, id: this.#nextId++ }, resolve, reject };
      if (idle !== undefined) this.#run(idle, w);
      else this.#waiting.push(w);
    });
  }

  /** End the threads; whatever was running or waiting is refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const gone = new Error('the hash pool is closed');
    for (const w of this.#waiting.splice(0)) w.reject(gone);
    await Promise.all(
      this.#threads.splice(0).map(async (t) => {
        t.busy?.reject(gone);
        t.busy = null;
        await t.worker.terminate();
      }),
    );
  }

  #run(t: Thread, w: Waiting): void {
    t.busy = w;
    t.worker.postMessage(w.job);
  }

  #next(t: Thread): void {
    t.busy = null;
    const w = this.#waiting.shift();
    if (w !== undefined) this.#run(t, w);
  }

  #start(): Promise<boolean> {
    const worker = startWorker(import.meta.url, 'hash-worker');
    // A server stopping does not wait for an idle hashing thread.
    worker.unref();
    const t: Thread = { worker, busy: null };
    this.#threads.push(t);
    return new Promise<boolean>((resolveReady, rejectReady) => {
      worker.on('message', (m: HashResult) => {
        if ('ready' in m) return resolveReady(m.niced);
        const w = t.busy;
        if (w === null || w.job.id !== m.id) return;
        if ('key' in m) w.resolve(Buffer.from(m.key.buffer, m.key.byteOffset, m.key.byteLength));
        else w.reject(new Error(`scrypt failed: ${m.error}`));
        this.#next(t);
      });
      worker.on('error', (e) => {
        rejectReady(e);
        this.options.onError?.(e);
      });
      worker.on('exit', () => {
        const i = this.#threads.indexOf(t);
        if (i < 0) return;
        // Died (out of memory, a bug): its job fails, and a new thread takes its place.
        this.#threads.splice(i, 1);
        t.busy?.reject(new Error('the password-hashing thread stopped'));
        t.busy = null;
        if (this.#closed) return;
        const replacement = this.#start();
        replacement.catch(() => {});
        const next = this.#threads[this.#threads.length - 1];
        const w = this.#waiting.shift();
        if (w !== undefined) this.#run(next, w);
      });
    });
  }
}
