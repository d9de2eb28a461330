/**
 * Main-thread side of hot swap: notice a new CURRENT (file-system watch plus a
 * poll, so a missed event costs at most one poll interval), load and verify it off
 * the request path, serialize its served rows once, and hand it to every worker. A
 * snapshot that fails verification is refused and reported; the one in service
 * keeps serving.
 */
import { type FSWatcher, watch } from 'node:fs';
import { join } from 'node:path';
import { readCurrent } from '../../builder/publish.js';
import { SnapshotLookup } from '../../core/lookup.js';
import { loadSnapshot } from '../../core/snapshot/reader.js';
import { prepareRows } from './prepared.js';
import type { SnapshotMessage } from './serving.js';

export interface ManagerEvents {
  /** A verified snapshot ready for the workers. */
  onSnapshot(msg: SnapshotMessage): void;
  /** A newer snapshot was refused (message), or the refusal is over (null). */
  onProblem(message: string | null): void;
  log(level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
}

/** Load, verify and prepare snapshot `id` for the serving threads (also used by the benchmarks). */
export async function loadForServing(dir: string, id: string): Promise<SnapshotMessage> {
  const snap = await loadSnapshot(join(dir, id));
  return {
    type: 'snapshot',
    id,
    dir: snap.dir,
    manifest: snap.manifest,
    buffers: snap.buffers,
    prepared: prepareRows(new SnapshotLookup(snap.columns)),
    loadedAt: new Date().toISOString(),
  };
}

export class SnapshotManager {
  private servingId: string | null = null;
  /** The CURRENT value last tried (served or refused), so a refused one is not retried in a loop. */
  private triedId: string | null = null;
  /** The last CURRENT that could not be read, so it is reported once. */
  private currentError: string | null = null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private again = false;

  constructor(
    private readonly dir: string,
    private readonly pollMs: number,
    private readonly events: ManagerEvents,
  ) {}

  get currentId(): string | null {
    return this.servingId;
  }

  async start(): Promise<void> {
    await this.check();
    try {
      this.watcher = watch(this.dir, () => void this.check());
      this.watcher.on('error', () => {
        // The directory may be replaced or removed; the poll still notices CURRENT.
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      // No directory yet: the poll picks it up once a build creates it.
    }
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Look at CURRENT once; at most one load runs at a time, a change meanwhile re-checks after it. */
  async check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.again = false;
        await this.checkOnce();
      } while (this.again);
    } finally {
      this.checking = false;
    }
  }

  private async checkOnce(): Promise<void> {
    let id: string | null;
    try {
      id = readCurrent(this.dir);
    } catch (e) {
      // Said once per distinct problem, not on every poll; the live snapshot keeps serving.
      const message = (e as Error).message;
      if (message !== this.currentError) {
        this.currentError = message;
        this.events.log('warn', 'cannot read CURRENT', { error: message });
        this.events.onProblem(message);
      }
      return;
    }
    if (this.currentError !== null) {
      // CURRENT reads again; back on the live snapshot, there is nothing left to report.
      this.currentError = null;
      if (id === this.servingId) this.events.onProblem(null);
    }
    if (id === null || id === this.triedId) return;
    this.triedId = id;
    const started = performance.now();
    try {
      const msg = await loadForServing(this.dir, id);
      this.servingId = id;
      this.events.onProblem(null);
      this.events.onSnapshot(msg);
      this.events.log('info', 'snapshot loaded', {
        snapshot: id,
        as_of: msg.manifest.as_of,
        funds: msg.manifest.counts.funds,
        ms: Math.round(performance.now() - started),
      });
    } catch (e) {
      const message = `snapshot ${id} refused: ${(e as Error).message}`;
      this.events.onProblem(message);
      this.events.log('error', 'snapshot refused', {
        snapshot: id,
        error: (e as Error).message,
        serving: this.servingId,
      });
    }
  }
}
