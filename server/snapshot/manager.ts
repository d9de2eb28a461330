/**
 * Main-thread side of hot swap: notice a new CURRENT (file-system watch plus a
 * poll, so a missed event costs at most one poll interval), load and verify it off
 * the request path, serialize its served rows once, and hand it to every worker. A
 * snapshot that fails verification is refused and reported; the one in service
 * keeps serving.
 */
import { existsSync, type FSWatcher, statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { now } from '../../core/clock.js';
import { SnapshotLookup } from '../../core/lookup.js';
import { CURRENT_FILE, listSnapshots, readCurrent } from '../../core/snapshot/directory.js';
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
    loadedAt: new Date(now()).toISOString(),
  };
}

/** First wait before a refused snapshot is tried again unchanged; it doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 30_000;
const RETRY_MAX_MS = 600_000;

export class SnapshotManager {
  private servingId: string | null = null;
  /**
   * What was last tried and refused: the id, with the identity (inode, mtime, size) of
   * CURRENT, the snapshot's directory and its manifest. A refused snapshot is tried
   * again as soon as any of them changes (CURRENT republished, the directory arriving
   * late, files replaced), else after a growing wait (a file repaired in place).
   */
  private refusedKey: string | null = null;
  private retryAt = 0;
  private retryMs = RETRY_FIRST_MS;
  /** The problem last reported (onProblem), so each is said once. */
  private problem: string | null = null;
  /** The last CURRENT that could not be read, so it is logged once. */
  private currentError: string | null = null;
  /**
   * Why there is no CURRENT (no directory, or no CURRENT in it), logged once per
   * reason: a directory re-created without a CURRENT is a new reason. Null: present.
   */
  private absent: string | null = null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private again = false;
  /** After stop(), a load still running is dropped: nothing is handed over or logged after "stopped". */
  private stopped = false;

  constructor(
    private readonly dir: string,
    private readonly pollMs: number,
    private readonly events: ManagerEvents,
  ) {}

  get currentId(): string | null {
    return this.servingId;
  }

  /**
   * Load what CURRENT names. If that is refused, or CURRENT names no snapshot, and
   * nothing serves yet (a restart onto a broken newest snapshot), serve the newest
   * older snapshot that loads rather than nothing, and keep reporting the problem
   * until CURRENT's loads.
   */
  async start(): Promise<void> {
    await this.check();
    // CURRENT that names no snapshot (`..`, a path, a directory, garbage) counts as refused:
    // its intent is unknown, so the newest snapshot that loads serves, and the problem shows.
    if (this.servingId === null && (this.refusedKey !== null || this.currentError !== null))
      await this.fallBack();
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
    this.stopped = true;
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

  private report(message: string | null): void {
    if (message === this.problem) return;
    this.problem = message;
    this.events.onProblem(message);
  }

  private async checkOnce(): Promise<void> {
    if (this.stopped) return;
    let id: string | null;
    try {
      id = readCurrent(this.dir);
    } catch (e) {
      // Said once per distinct problem, not on every poll; the live snapshot keeps serving.
      const message = (e as Error).message;
      if (message !== this.currentError) {
        this.currentError = message;
        this.events.log('warn', 'cannot read CURRENT', { error: message });
        this.report(message);
      }
      return;
    }
    this.currentError = null;
    if (id === null) {
      const message = existsSync(this.dir)
        ? `no snapshot published in ${this.dir}: CURRENT is missing or empty`
        : `the snapshots directory ${this.dir} does not exist`;
      if (message !== this.absent) {
        this.absent = message;
        this.events.log('warn', message, { serving: this.servingId });
        this.report(this.servingId === null ? message : `${message}; serving the snapshot loaded before it`);
      }
      return;
    }
    this.absent = null;
    if (id === this.servingId) {
      // CURRENT names the live snapshot again: nothing left to report.
      this.refusedKey = null;
      this.report(null);
      return;
    }
    const key = this.identity(id);
    if (key === this.refusedKey && Date.now() < this.retryAt) return;
    const retrying = key === this.refusedKey;
    const started = performance.now();
    try {
      const msg = await loadForServing(this.dir, id);
      if (this.stopped) return;
      this.servingId = id;
      this.refusedKey = null;
      this.retryMs = RETRY_FIRST_MS;
      this.report(null);
      this.events.onSnapshot(msg);
      this.events.log('info', 'snapshot loaded', {
        snapshot: id,
        as_of: msg.manifest.as_of,
        funds: msg.manifest.counts.funds,
        ms: Math.round(performance.now() - started),
      });
    } catch (e) {
      if (this.stopped) return;
      this.refusedKey = key;
      this.retryMs = retrying ? Math.min(this.retryMs * 2, RETRY_MAX_MS) : RETRY_FIRST_MS;
      this.retryAt = Date.now() + this.retryMs;
      this.report(`snapshot ${id} refused: ${(e as Error).message}`);
      this.events.log('error', 'snapshot refused', {
        snapshot: id,
        error: (e as Error).message,
        serving: this.servingId,
        retry_in_s: this.retryMs / 1000,
      });
    }
  }

  /** CURRENT, the snapshot's directory and manifest as they are now (see refusedKey). */
  private identity(id: string): string {
    const of = (path: string) => {
      try {
        const st = statSync(path);
        return `${st.ino}:${st.mtimeMs}:${st.size}`;
      } catch {
        return '-';
      }
    };
    const dir = join(this.dir, id);
    return [id, of(join(this.dir, CURRENT_FILE)), of(dir), of(join(dir, 'manifest.json'))].join('|');
  }

  /**
   * Serve the newest snapshot built no later than the refused one that loads (start only).
   * Never a newer one: CURRENT naming an older snapshot may be a rollback away from it.
   */
  private async fallBack(): Promise<void> {
    const refused = this.refusedKey?.split('|')[0];
    const all = listSnapshots(this.dir);
    const builtAt = all.find((s) => s.id === refused)?.builtAt ?? Number.POSITIVE_INFINITY;
    // Built at the same time is not newer: a copy of a good snapshot (restored, renamed) counts.
    for (const { id } of all.filter((s) => s.id !== refused && s.builtAt <= builtAt).reverse()) {
      try {
        const msg = await loadForServing(this.dir, id);
        this.servingId = id;
        this.events.onSnapshot(msg);
        this.events.log('warn', 'CURRENT names a refused snapshot: serving the newest older one that loads', {
          current: refused ?? this.currentError,
          snapshot: id,
          as_of: msg.manifest.as_of,
        });
        return;
      } catch (e) {
        this.events.log('warn', 'older snapshot refused too', { snapshot: id, error: (e as Error).message });
      }
    }
  }
}
