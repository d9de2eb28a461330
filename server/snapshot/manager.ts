/**
 * Main-thread side of hot swap: notice a new CURRENT (file-system watch plus a
 * poll, so a missed event costs at most one poll interval), load and verify it off
 * the request path, serialize its served rows once, and hand it to every worker. A
 * snapshot that fails verification is refused and reported; the one in service
 * keeps serving.
 *
 * A problem is reported twice over: in full to the log (paths, the system's error),
 * and as a code and a sentence to onProblem, which /healthz shows to anyone. The
 * public text never holds a path or a system message; neither holds CURRENT's
 * content: CURRENT may be a link to any file the server can read. Both name a
 * snapshot only by a name that is a directory in the snapshots directory.
 */
import { existsSync, type FSWatcher, lstatSync, readlinkSync, statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { now } from '../../core/clock.js';
import { escapeControls } from '../../core/escape.js';
import { CURRENT_FILE, CurrentError, listSnapshots, readCurrent } from '../../core/snapshot/directory.js';
import { SnapshotLookup } from '../../core/snapshot/lookup.js';
import { loadSnapshot } from '../../core/snapshot/reader.js';
import { ARROW_FILES, MANIFEST_FILE } from '../../core/snapshot/schema.js';
import { SnapshotError, type SnapshotErrorCode } from '../../core/snapshot/snapshot-error.js';
import { type PreparedShared, prepareRows } from './prepared.js';
import type { SnapshotMessage } from './serving.js';

export interface ManagerEvents {
  /** A verified snapshot ready for the workers. */
  onSnapshot(msg: SnapshotMessage): void;
  /** A newer snapshot was refused (`CODE: sentence`, fit to show anyone), or the refusal is over (null). */
  onProblem(message: string | null): void;
  log(level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
}

/**
 * What MCP prepares from a snapshot's REST rows (server/mcp/tool-results.ts), handed in
 * by whoever runs the manager: this folder serves the rows and does not know MCP.
 */
export type PrepareToolResults = (rows: PreparedShared) => PreparedShared;

/** Load, verify and prepare snapshot `id` for the serving threads (also used by the benchmarks). */
export async function loadForServing(
  dir: string,
  id: string,
  prepareToolResults: PrepareToolResults,
): Promise<SnapshotMessage> {
  const snap = await loadSnapshot(join(dir, id));
  const prepared = prepareRows(new SnapshotLookup(snap.columns));
  return {
    type: 'snapshot',
    id,
    dir: snap.dir,
    manifest: snap.manifest,
    buffers: snap.buffers,
    prepared,
    toolResults: prepareToolResults(prepared),
    loadedAt: new Date(now()).toISOString(),
  };
}

/** What each refusal of the reader means, said without paths or system messages. */
const REFUSAL_SENTENCES: Record<SnapshotErrorCode, string> = {
  MANIFEST_INVALID: 'its manifest is not valid',
  VERSION_UNSUPPORTED: 'its format version is not one this server reads',
  FILE_MISSING: 'a file is missing or cannot be read',
  SIZE_MISMATCH: 'a file does not have the size its manifest says',
  CHECKSUM_MISMATCH: "a file does not match its manifest's checksum",
  ARROW_INVALID: 'a file is not valid Arrow data',
  INVARIANT_VIOLATED: 'its data breaks an invariant of the format',
};

/** The snapshot files a public message may name: fixed names, never input. */
const SNAPSHOT_FILES: ReadonlySet<string> = new Set([MANIFEST_FILE, ...ARROW_FILES]);

const DETAIL = ' (detail in the server log)';

/** The public text for snapshot `id` refused with `e`; `named`: `id` is a directory of the snapshots directory. */
function refusalProblem(id: string, named: boolean, e: unknown): string {
  if (!named) return `SNAPSHOT_MISSING: CURRENT names no snapshot directory${DETAIL}`;
  if (!(e instanceof SnapshotError))
    return `SNAPSHOT_UNREADABLE: snapshot ${id} refused: it cannot be loaded${DETAIL}`;
  const file = e.file !== undefined && SNAPSHOT_FILES.has(e.file) ? `${e.file}: ` : '';
  return `${e.code}: snapshot ${id} refused: ${file}${REFUSAL_SENTENCES[e.code]}${DETAIL}`;
}

/** The public text for a CURRENT that cannot be used. */
function currentProblem(e: unknown): string {
  if (e instanceof CurrentError && e.code === 'CURRENT_INVALID')
    return `CURRENT_INVALID: CURRENT does not hold the name of a snapshot in the snapshots directory${DETAIL}`;
  return `CURRENT_UNREADABLE: CURRENT cannot be read${DETAIL}`;
}

/** A file as it is now (inode, mtime, size), or '-' when it cannot be read: tells a file replaced or rewritten. */
function fileIdentity(path: string): string {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  } catch {
    return '-';
  }
}

/** First wait before a refused snapshot is tried again unchanged; it doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 30_000;
const RETRY_MAX_MS = 600_000;

export class SnapshotManager {
  #servingId: string | null = null;
  /**
   * What was last tried and refused: the id, with the identity (inode, mtime, size) of
   * CURRENT, the snapshot's directory and its manifest. A refused snapshot is tried
   * again as soon as any of them changes (CURRENT republished, the directory arriving
   * late, files replaced), else after a growing wait (a file repaired in place).
   */
  #refusedKey: string | null = null;
  #retryAt = 0;
  #retryMs = RETRY_FIRST_MS;
  /** The problem last reported (onProblem), so each is said once. */
  #problem: string | null = null;
  /** The last CURRENT that could not be read, so it is logged once. */
  #currentError: string | null = null;
  /** That problem with CURRENT's identity when it was logged. */
  #currentSeen: string | null = null;
  /**
   * Why there is no CURRENT (no directory, or no CURRENT in it), logged once per
   * reason: a directory re-created without a CURRENT is a new reason. Null: present.
   */
  #absent: string | null = null;
  #watcher: FSWatcher | null = null;
  #timer: NodeJS.Timeout | null = null;
  #checking = false;
  #again = false;
  /** After stop(), a load still running is dropped: nothing is handed over or logged after "stopped". */
  #stopped = false;

  readonly #dir: string;
  readonly #pollMs: number;
  readonly #events: ManagerEvents;
  readonly #prepareToolResults: PrepareToolResults;

  constructor(dir: string, pollMs: number, events: ManagerEvents, prepareToolResults: PrepareToolResults) {
    this.#prepareToolResults = prepareToolResults;
    this.#dir = dir;
    this.#pollMs = pollMs;
    this.#events = events;
  }

  get currentId(): string | null {
    return this.#servingId;
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
    if (this.#servingId === null && (this.#refusedKey !== null || this.#currentError !== null))
      await this.#fallBack();
    try {
      this.#watcher = watch(this.#dir, () => void this.check());
      this.#watcher.on('error', () => {
        // The directory may be replaced or removed; the poll still notices CURRENT.
        this.#watcher?.close();
        this.#watcher = null;
      });
    } catch {
      // No directory yet: the poll picks it up once a build creates it.
    }
    this.#timer = setInterval(() => void this.check(), this.#pollMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    this.#watcher?.close();
    this.#watcher = null;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Look at CURRENT once; at most one load runs at a time, a change meanwhile re-checks after it. */
  async check(): Promise<void> {
    if (this.#checking) {
      this.#again = true;
      return;
    }
    this.#checking = true;
    try {
      do {
        this.#again = false;
        await this.#checkOnce();
      } while (this.#again);
    } finally {
      this.#checking = false;
    }
  }

  #report(message: string | null): void {
    if (message === this.#problem) return;
    this.#problem = message;
    this.#events.onProblem(message);
  }

  async #checkOnce(): Promise<void> {
    if (this.#stopped) return;
    let id: string | null;
    try {
      id = readCurrent(this.#dir);
    } catch (e) {
      // Said once per distinct problem, not on every poll; the live snapshot keeps serving.
      const message = (e as Error).message;
      // The message says why, not what CURRENT holds: a CURRENT written again with another
      // wrong content is a new problem, told by the file's identity.
      const seen = `${message}|${fileIdentity(join(this.#dir, CURRENT_FILE))}`;
      if (seen !== this.#currentSeen) {
        this.#currentSeen = seen;
        this.#currentError = message;
        this.#events.log('warn', 'cannot read CURRENT', { error: message });
        this.#report(currentProblem(e));
      }
      return;
    }
    this.#currentError = null;
    this.#currentSeen = null;
    if (id === null) {
      const dirExists = existsSync(this.#dir);
      const message = dirExists
        ? `no snapshot published in ${this.#dir}: CURRENT is missing or empty`
        : `the snapshots directory ${this.#dir} does not exist`;
      if (message !== this.#absent) {
        this.#absent = message;
        this.#events.log('warn', message, { serving: this.#servingId });
        const said = dirExists
          ? 'NO_SNAPSHOT: no snapshot published: CURRENT is missing or empty'
          : 'NO_SNAPSHOTS_DIRECTORY: the snapshots directory does not exist';
        this.#report(this.#servingId === null ? said : `${said}; serving the snapshot loaded before it`);
      }
      return;
    }
    this.#absent = null;
    if (id === this.#servingId) {
      // CURRENT names the live snapshot again: nothing left to report.
      this.#refusedKey = null;
      this.#report(null);
      return;
    }
    const key = this.#identity(id);
    if (key === this.#refusedKey && Date.now() < this.#retryAt) return;
    const retrying = key === this.#refusedKey;
    const started = performance.now();
    try {
      const msg = await loadForServing(this.#dir, id, this.#prepareToolResults);
      if (this.#stopped) return;
      this.#servingId = id;
      this.#refusedKey = null;
      this.#retryMs = RETRY_FIRST_MS;
      this.#report(null);
      this.#events.onSnapshot(msg);
      this.#events.log('info', 'snapshot loaded', {
        snapshot: id,
        as_of: msg.manifest.as_of,
        funds: msg.manifest.counts.funds,
        ms: Math.round(performance.now() - started),
      });
    } catch (e) {
      if (this.#stopped) return;
      this.#refusedKey = key;
      this.#retryMs = retrying ? Math.min(this.#retryMs * 2, RETRY_MAX_MS) : RETRY_FIRST_MS;
      this.#retryAt = Date.now() + this.#retryMs;
      const named = this.#isSnapshotDir(id);
      this.#report(refusalProblem(id, named, e));
      this.#events.log('error', 'snapshot refused', {
        // /healthz's rule (refusalProblem): a name that is no directory of ours may be
        // any file's first line (CURRENT a link), so the log says why instead, and
        // leaves out the error, whose path holds the name.
        ...(named ? { snapshot: id, error: (e as Error).message } : { refused: this.#namesNothing() }),
        serving: this.#servingId,
        retry_in_s: this.#retryMs / 1000,
      });
    }
  }

  /** Whether `id` names a directory in the snapshots directory (not a link out of it). */
  #isSnapshotDir(id: string): boolean {
    try {
      return lstatSync(join(this.#dir, id)).isDirectory();
    } catch {
      return false;
    }
  }

  /**
   * Why CURRENT names no snapshot, for the log: where it is, and where it leads when it
   * is a link (a path is the operator's to see), never what it holds.
   */
  #namesNothing(): string {
    const current = join(this.#dir, CURRENT_FILE);
    let link: string | null = null;
    try {
      if (lstatSync(current).isSymbolicLink()) link = readlinkSync(current);
    } catch {
      // Gone meanwhile: said as a plain CURRENT.
    }
    const what = link === null ? current : `${current} is a link to ${escapeControls(link)}: it`;
    return `${what} names no directory of ${this.#dir}, so no snapshot`;
  }

  /** CURRENT, the snapshot's directory and manifest as they are now (see refusedKey). */
  #identity(id: string): string {
    const dir = join(this.#dir, id);
    return [
      id,
      fileIdentity(join(this.#dir, CURRENT_FILE)),
      fileIdentity(dir),
      fileIdentity(join(dir, 'manifest.json')),
    ].join('|');
  }

  /**
   * Serve the newest snapshot built no later than the refused one that loads (start only).
   * Never a newer one: CURRENT naming an older snapshot may be a rollback away from it.
   */
  async #fallBack(): Promise<void> {
    const refused = this.#refusedKey?.split('|')[0];
    const all = listSnapshots(this.#dir);
    const builtAt = all.find((s) => s.id === refused)?.builtAt ?? Number.POSITIVE_INFINITY;
    // Built at the same time is not newer: a copy of a good snapshot (restored, renamed) counts.
    for (const { id } of all.filter((s) => s.id !== refused && s.builtAt <= builtAt).reverse()) {
      try {
        const msg = await loadForServing(this.#dir, id, this.#prepareToolResults);
        this.#servingId = id;
        this.#events.onSnapshot(msg);
        this.#events.log(
          'warn',
          'CURRENT names a refused snapshot: serving the newest older one that loads',
          {
            current:
              refused !== undefined && this.#isSnapshotDir(refused)
                ? refused
                : refused !== undefined
                  ? this.#namesNothing()
                  : this.#currentError,
            snapshot: id,
            as_of: msg.manifest.as_of,
          },
        );
        return;
      } catch (e) {
        this.#events.log('warn', 'older snapshot refused too', { snapshot: id, error: (e as Error).message });
      }
    }
  }
}
