/**
 * SHA-256 in a helper thread, fed pieces of SharedArrayBuffers by reference, so
 * hashing a snapshot file overlaps reading it (loader) or writing it (writer) on
 * the calling thread instead of adding to it. Pieces of one id are hashed in the
 * order they were sent.
 */
import { Worker } from 'node:worker_threads';

const HASH_WORKER = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'sync') return parentPort.postMessage({ sync: m.sync });
  let h = hashes.get(m.id);
  if (h === undefined) hashes.set(m.id, (h = createHash('sha256')));
  if (m.op === 'update') {
    const r = m.ranges;
    for (let i = 0; i < r.length; i += 3) h.update(new Uint8Array(m.sabs[r[i]], r[i + 1], r[i + 2] - r[i + 1]));
  } else {
    hashes.delete(m.id);
    parentPort.postMessage({ id: m.id, hex: h.digest('hex') });
  }
});
`;

/** SHA-256 of byte ranges of SharedArrayBuffers, computed in order on a worker thread. */
export class Hasher {
  // execArgv: [] so a parent started with --input-type=module does not turn this CommonJS source into ESM.
  readonly #worker = new Worker(HASH_WORKER, { eval: true, execArgv: [] });
  readonly #waiting = new Map<number, { resolve: (hex: string) => void; reject: (e: unknown) => void }>();
  #failure: unknown;
  #syncs = 0;
  readonly #syncing = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();

  constructor() {
    this.#worker.unref();
    this.#worker.on('message', (m: { id: number; hex: string } | { sync: number }) => {
      if ('sync' in m) {
        this.#syncing.get(m.sync)?.resolve();
        this.#syncing.delete(m.sync);
        return;
      }
      this.#waiting.get(m.id)?.resolve(m.hex);
      this.#waiting.delete(m.id);
    });
    const fail = (e: unknown) => {
      this.#failure ??= e;
      for (const w of this.#waiting.values()) w.reject(e);
      this.#waiting.clear();
      for (const w of this.#syncing.values()) w.reject(e);
      this.#syncing.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`hash worker exited (${code})`)));
  }

  update(id: number, sab: SharedArrayBuffer, from: number, to: number): void {
    this.updateRanges(id, [sab], [0, from, to]);
  }

  /**
   * Hashes, in order, byte ranges of several buffers in one message: `ranges` holds
   * (index into `sabs`, from, to) triples. One message per batch rather than per
   * range keeps an append's 130,000 short parts from costing as many messages.
   */
  updateRanges(id: number, sabs: readonly SharedArrayBuffer[], ranges: readonly number[]): void {
    this.#worker.postMessage({ op: 'update', id, sabs, ranges });
  }

  /**
   * Resolves once every piece sent before it has been hashed, so that the caller may
   * reuse the memory it handed over by reference.
   */
  synced(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const sync = ++this.#syncs;
    const p = new Promise<void>((resolve, reject) => {
      this.#syncing.set(sync, { resolve, reject });
      this.#worker.postMessage({ op: 'sync', sync });
    });
    // Awaited later, if at all (the write may fail first): never an unhandled rejection.
    p.catch(() => {});
    return p;
  }

  digest(id: number): Promise<string> {
    const p =
      this.#failure !== undefined
        ? Promise.reject(this.#failure)
        : new Promise<string>((resolve, reject) => {
            this.#waiting.set(id, { resolve, reject });
            this.#worker.postMessage({ op: 'digest', id });
          });
    // The caller may stop awaiting digests after the first failure; the rest must not become unhandled rejections.
    p.catch(() => {});
    return p;
  }

  close(): void {
    this.#waiting.clear();
    this.#syncing.clear();
    this.#worker.removeAllListeners();
    void this.#worker.terminate();
  }
}
