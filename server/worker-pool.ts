/**
 * The serving threads, seen from the supervisor: each uWS event loop in its worker
 * thread, the snapshot each one serves, and the messages between them and the main
 * thread (snapshots, key tables, looks, shutdown).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { startAccess } from './access/startup.js';
import type { FromWorker, ToWorker, WorkerInput } from './server-thread.js';
import type { SnapshotMessage } from './snapshot/serving.js';

// Exposes gc() in worker threads created from now on, and to this thread through a
// fresh context: old snapshots' buffers are freed right after a swap (see below).
v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;

/** What every worker starts with; its port, snapshot and metrics buffer are its own. */
export interface PoolInput {
  config: WorkerInput['config'];
  version: string;
  fixedNow: number | null;
  access: Awaited<ReturnType<typeof startAccess>>;
  plans: WorkerInput['access']['plans'];
  /** A new worker's counter buffer, or null when metrics are off. */
  addMetrics: () => SharedArrayBuffer | null;
  /** Starts the serving thread's module (server/server-thread.ts) with its input. */
  startWorker: (input: WorkerInput) => Worker;
  log: Logger;
}

export class WorkerPool {
  /** Workers listening, in the order they started. */
  readonly workers: Worker[] = [];
  /** The snapshot a new worker starts with: the latest one loaded. */
  latest: SnapshotMessage | null = null;
  /** The reason a newer snapshot is refused, passed to a new worker. */
  problem: string | null = null;
  readonly #serving = new Map<Worker, string | null>();
  readonly #waiters: Array<() => void> = [];
  readonly #input: PoolInput;
  #collectedFor: string | null = null;

  constructor(input: PoolInput) {
    this.#input = input;
  }

  /** Start one worker on `port` (0: any); resolves once it listens, with the port it got. */
  spawn(port: number): Promise<{ worker: Worker; port: number }> {
    const { config, version, fixedNow, access, plans, log } = this.#input;
    return new Promise((resolve, reject) => {
      const input: WorkerInput = {
        config,
        port,
        version,
        fixedNow,
        access: {
          limiter: access.limiterShared,
          table: access.table(),
          redis: access.redisUrl,
          keyCounts: access.addThread(),
          plans,
        },
        snapshot: this.latest,
        problem: this.problem,
        metrics: this.#input.addMetrics(),
      };
      // Only the id is kept: holding the message would keep that snapshot's buffers alive after a swap.
      const startedWith = this.latest?.id ?? null;
      const w = this.#input.startWorker(input);
      this.#serving.set(w, null);
      w.on('message', (m: FromWorker) => {
        if (m.type === 'listening') {
          // A worker listens only once it serves the snapshot it was started with.
          this.#serving.set(w, startedWith);
          resolve({ worker: w, port: m.port });
        } else if (m.type === 'listen-failed') reject(new Error(m.message));
        else this.#onMessage(w, m);
      });
      w.on('error', (e) => {
        log.error({ error: e.message }, 'worker failed');
        reject(e);
      });
    });
  }

  #onMessage(w: Worker, m: FromWorker): void {
    if (m.type === 'swapped') {
      this.#serving.set(w, m.id);
      if (this.workers.every((x) => this.#serving.get(x) === m.id)) this.#releaseOldSnapshots(m.id);
      for (const f of this.#waiters.splice(0)) f();
    } else if (m.type === 'swap-failed')
      this.#input.log.error({ snapshot: m.id, error: m.message }, 'worker could not attach snapshot');
    else if (m.type === 'look')
      // The table a look reads is sent to every thread before this answer (one port, in order).
      void this.#input.access
        .look()
        .then(() => w.postMessage({ type: 'looked', id: m.id } satisfies ToWorker));
  }

  /**
   * `threads` workers on one port: the first on `port` (0: any), the others on the port
   * it got. Resolves with that port once every worker serves the latest snapshot.
   */
  async start(port: number, threads: number): Promise<number> {
    const first = await this.spawn(port);
    this.workers.push(first.worker);
    for (let k = 1; k < threads; k++) this.workers.push((await this.spawn(first.port)).worker);
    // A swap that came while the threads started reached only some of them.
    if (this.latest) await this.waitAll(this.latest.id, 30_000);
    return first.port;
  }

  send(m: ToWorker): void {
    for (const w of this.workers) w.postMessage(m);
  }

  /** Resolves when every worker serves snapshot `id`. */
  waitAll(id: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error(`workers did not swap to ${id} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = () => {
        if (this.workers.every((w) => this.#serving.get(w) === id)) {
          clearTimeout(deadline);
          resolve();
        } else this.#waiters.push(check);
      };
      check();
    });
  }

  /**
   * Once every thread serves the new snapshot, nothing references the old one's
   * shared buffers; a full collection in every thread frees them now rather than
   * whenever V8 next feels memory pressure, so RSS returns to one snapshot's worth.
   */
  #releaseOldSnapshots(id: string): void {
    if (this.#collectedFor === id) return;
    this.#collectedFor = id;
    setTimeout(() => {
      collect();
      this.send({ type: 'collect' });
    }, 100).unref();
  }

  /** Each worker drains its requests and stops; resolves when all have. */
  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.on('message', (m: FromWorker) => {
              if (m.type === 'stopped') void w.terminate().then(() => resolve());
            });
            w.on('exit', () => resolve());
            w.postMessage({ type: 'shutdown' } satisfies ToWorker);
          }),
      ),
    );
  }

  /** A start that failed: the workers started so far are ended at once. */
  terminate(): void {
    for (const w of this.workers) void w.terminate();
  }
}
