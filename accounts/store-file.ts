/**
 * The embedded access store (the default, `--store ./var/store`): one directory that
 * a running server and the `accounts`/`keys` commands share.
 *
 *   access.log            append-only JSON lines: a snapshot line, then one AccessChange per line
 *                         (store-log.ts: why a log, how it is read and written)
 *   access.lock           held while a process appends or compacts (core/files/lock.ts)
 *   store.json            {"format", "version"}: the version of the last change written, so a
 *                         log that lost lines (deleted, emptied, truncated) is refused, not read
 *                         as fewer accounts
 *   access.log.cut-…      bytes a writer cut off the log's end (a torn or invalid last line), kept
 *   usage-…, daily-…, plans.json   counts and limits the server writes (store-counts.ts)
 *   burst.json            each account's burst bucket, saved with the usage (burst-file.ts)
 *   audit.log             admin actions (who, what, when), JSON lines, append-only (audit-log.ts)
 *   secrets/, throttle/   sessions and tokens, sign-in counters (file-secrets.ts): not the log
 *
 * `fundreturns store backup|restore` copies the log and marker, the counts, plans, burst
 * and audit (not the lock, cut bytes, secrets or throttle), in the order and under the
 * lock the checks below require (backup-file.ts).
 *
 * The directory is 700 and every file 600 whatever the umask, and a store that group
 * or others can write to is refused (store-perms.ts): its log decides which keys are valid.
 *
 * Writers take the lock so that validation (unique names, existing ids) sees the
 * latest state, torn lines can be cut safely, and no append lands in a file that a
 * concurrent compaction is about to replace. Readers never take it: they only
 * consume complete lines and notice a compaction by the file's identity.
 */
import { chmod, type FileHandle, mkdir, open, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { escapeForTerminal } from '../core/escape.js';
import { errCode, sweepDeadTemps } from '../core/files/atomic.js';
import { describeHolder, LockHeld, takeLock } from '../core/files/lock.js';
import { AUDIT_FILE, appendAuditFile, readAuditFile } from './audit-log.js';
import { assertChange } from './changes.js';
import { FileSecrets } from './file-secrets.js';
import {
  type AccessChange,
  type AccessState,
  type AccessStore,
  type AuditEntry,
  type DailyCount,
  EMPTY_STATE,
  type PlanLimits,
  type PlanName,
  type SecretKind,
} from './model.js';
import {
  addDailyFiles,
  checkUsage,
  DAILY_FILE,
  groupDaily,
  mergeUsageFile,
  readDailyFiles,
  readPlansFile,
  readUsageFile,
  USAGE_FILE,
  writePlansFile,
} from './store-counts.js';
import {
  appendLine,
  consumeLog,
  cutLog,
  type Follower,
  LOG_FILE,
  MARKER_FILE,
  readAt,
  readMarker,
  startsWith,
  writeMarker,
  writeSnapshot,
} from './store-log.js';
import { checkStorePrivate, STORE_DIR_MODE, STORE_FILE_MODE, StoreNotPrivate } from './store-perms.js';
import { watchLog } from './store-watch.js';

const LOCK_FILE = 'access.lock';

export interface FileStoreOptions {
  /** Compact when the log holds more lines than this. */
  compactAfterLines?: number;
  /** How often `subscribe` polls the log in case a file-system event is missed. */
  pollMs?: number;
  /** Least time between two `onChange` calls. */
  minNotifyMs?: number;
  /** How long `change` waits for another process's lock before failing. */
  lockTimeoutMs?: number;
  /** A lock older than this is taken to belong to a crashed process. */
  staleLockMs?: number;
  /** Where warnings go (a cut torn line); default: standard error. */
  warn?: (message: string) => void;
}

interface Tail {
  readonly exists: boolean;
  readonly state: AccessState;
  /** Bytes up to the end of the last good line; anything after is a torn or in-progress line. */
  readonly goodEnd: number;
  readonly size: number;
  readonly lines: number;
}

export class FileAccessStore implements AccessStore {
  readonly dir: string;
  readonly #logPath: string;
  readonly #lockPath: string;
  readonly #markerPath: string;
  readonly #opts: Required<FileStoreOptions>;
  #follower: Follower | null = null;
  /** Serialises refreshes, locked sections and count writes within this process. */
  #refreshChain: Promise<unknown> = Promise.resolve();
  #lockChain: Promise<unknown> = Promise.resolve();
  #usageChain: Promise<unknown> = Promise.resolve();
  #dailyChain: Promise<unknown> = Promise.resolve();
  /** Whether this process already removed the temp files killed writers left (once, under the lock). */
  #swept = false;
  readonly #unsubscribers = new Set<() => void>();
  /** Sessions, tokens and sign-in counters (file-secrets.ts). */
  readonly #secrets: FileSecrets;

  constructor(dir: string, options: FileStoreOptions = {}) {
    this.dir = dir;
    this.#logPath = join(dir, LOG_FILE);
    this.#lockPath = join(dir, LOCK_FILE);
    this.#markerPath = join(dir, MARKER_FILE);
    this.#secrets = new FileSecrets(dir);
    this.#opts = {
      compactAfterLines: options.compactAfterLines ?? 1000,
      pollMs: options.pollMs ?? 500,
      minNotifyMs: options.minNotifyMs ?? 200,
      lockTimeoutMs: options.lockTimeoutMs ?? 10_000,
      staleLockMs: options.staleLockMs ?? 30_000,
      warn: options.warn ?? ((m) => process.stderr.write(`fundreturns: warning: ${escapeForTerminal(m)}\n`)),
    };
  }

  /** Open (creating the directory if needed) a store directory. */
  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileAccessStore> {
    try {
      // Parents as the umask says (they are not the store's); the store itself private.
      await mkdir(dirname(dir), { recursive: true });
      if ((await mkdir(dir, { recursive: true, mode: STORE_DIR_MODE })) !== undefined)
        await chmod(dir, STORE_DIR_MODE);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' || (e as NodeJS.ErrnoException).code === 'ENOTDIR')
        throw new Error(
          `the store ${dir} is a file, not a directory (--store names a directory or a redis:// URL)`,
        );
      throw e;
    }
    const store = new FileAccessStore(dir, options);
    const tightened = await checkStorePrivate(dir);
    if (tightened.length > 0)
      store.#opts.warn(`made private (readable by group or others before): ${tightened.join(', ')}`);
    await store.#init();
    return store;
  }

  /**
   * A new store gets its log (an empty snapshot) and marker at once, so that from then
   * on a missing log is damage, never "no accounts yet". A store from before the
   * marker gets one. A directory without log or marker that holds usage files has
   * served before: its log is missing, and that is refused.
   */
  async #init(): Promise<void> {
    const hasLog = await exists(this.#logPath);
    if (hasLog || (await exists(this.#markerPath))) {
      if (hasLog && !(await exists(this.#markerPath)))
        await this.#withLock(async () =>
          writeMarker(this.#markerPath, (await this.#refresh()).state.version),
        );
      return;
    }
    const usage = (await readdir(this.dir)).filter((n) => USAGE_FILE.test(n) || DAILY_FILE.test(n));
    if (usage.length > 0)
      throw new Error(
        `${this.#logPath} is missing, but ${this.dir} holds ${usage.join(', ')}: the accounts and keys ` +
          'of this store are lost, not absent. Restore access.log from a backup.',
      );
    await this.#withLock(async () => {
      if (!(await exists(this.#logPath))) await writeSnapshot(this.#logPath, EMPTY_STATE);
      await writeMarker(this.#markerPath, 0);
    });
  }

  async read(): Promise<AccessState> {
    return (await this.#refresh()).state;
  }

  async change(c: AccessChange): Promise<AccessState> {
    return await this.#withLock(async () => {
      const tail = await this.#refresh();
      assertChange(tail.state, c);
      if (!tail.exists) await writeSnapshot(this.#logPath, tail.state);
      // Under the lock nobody else is writing, so bytes after the last good line are
      // a crashed writer's torn line: cut them, or the next append would bury them.
      else if (tail.goodEnd < tail.size) await this.#cutTail(tail);
      await appendLine(this.#logPath, `${JSON.stringify(c)}\n`);
      const after = await this.#refresh();
      if (after.lines > this.#opts.compactAfterLines) await writeSnapshot(this.#logPath, after.state);
      await writeMarker(this.#markerPath, after.state.version);
      return after.state;
    });
  }

  /**
   * Run `fn` holding the store's write lock: no change, compaction or restore runs
   * meanwhile, in this process or another (backup.ts copies `store.json` and
   * `access.log` so, and a restore replaces them so). Readers never wait on it.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#withLock(fn);
  }

  /** Rewrite the log as one snapshot line (done automatically past `compactAfterLines`). */
  async compact(): Promise<void> {
    await this.#withLock(async () => {
      const tail = await this.#refresh();
      if (tail.exists) await writeSnapshot(this.#logPath, tail.state);
    });
  }

  subscribe(onChange: () => void): () => void {
    const stop = watchLog(this.#logPath, this.#opts, onChange);
    const unsubscribe = () => {
      stop();
      this.#unsubscribers.delete(unsubscribe);
    };
    this.#unsubscribers.add(unsubscribe);
    return unsubscribe;
  }

  async readUsage(month: string): Promise<Map<string, number>> {
    return await readUsageFile(this.dir, month);
  }

  async readPlans(): Promise<Record<PlanName, PlanLimits> | null> {
    return await readPlansFile(this.dir);
  }

  async writePlans(plans: Readonly<Record<PlanName, PlanLimits>>): Promise<void> {
    await writePlansFile(this.dir, plans);
  }

  async writeUsage(month: string, counts: ReadonlyMap<string, number>): Promise<void> {
    checkUsage(counts);
    const run = this.#usageChain.then(() => mergeUsageFile(this.dir, month, counts));
    this.#usageChain = run.catch(() => {});
    await run;
  }

  // ---- dashboard records: beside the log, never under its lock ----

  async putSecret(kind: SecretKind, id: string, value: string, ttlMs: number): Promise<void> {
    await this.#secrets.put(kind, id, value, ttlMs);
  }

  async getSecret(kind: SecretKind, id: string): Promise<string | null> {
    return await this.#secrets.get(kind, id);
  }

  async takeSecret(kind: SecretKind, id: string): Promise<string | null> {
    return await this.#secrets.take(kind, id);
  }

  async deleteSecret(kind: SecretKind, id: string): Promise<void> {
    await this.#secrets.delete(kind, id);
  }

  async throttle(key: string, limit: number, windowMs: number, nowMs: number): Promise<number> {
    return await this.#secrets.throttle(key, limit, windowMs, nowMs);
  }

  async audit(entry: AuditEntry): Promise<void> {
    await appendAuditFile(join(this.dir, AUDIT_FILE), entry);
  }

  async readAudit(limit: number): Promise<AuditEntry[]> {
    return await readAuditFile(join(this.dir, AUDIT_FILE), limit);
  }

  // ---- per-key daily counts (store-counts.ts) ----

  async addDaily(counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>): Promise<void> {
    const grouped = groupDaily(counts);
    if (grouped.newest === '') return;
    const run = this.#dailyChain.then(() => addDailyFiles(this.dir, grouped));
    this.#dailyChain = run.catch(() => {});
    await run;
  }

  async readDaily(from: string, to: string): Promise<Map<string, Map<string, DailyCount>>> {
    return await readDailyFiles(this.dir, from, to);
  }

  async close(): Promise<void> {
    for (const u of [...this.#unsubscribers]) u();
    await Promise.allSettled([
      this.#lockChain,
      this.#usageChain,
      this.#dailyChain,
      this.#refreshChain,
      this.#secrets.settle(),
    ]);
  }

  // ---- reading ------------------------------------------------------------

  #refresh(): Promise<Tail> {
    const run = this.#refreshChain.then(() => this.#refreshNow());
    this.#refreshChain = run.catch(() => {});
    return run;
  }

  async #refreshNow(): Promise<Tail> {
    // Read before the log: a writer appends first and raises the marker after, so the
    // log read next holds at least this version unless lines were lost.
    const written = await readMarker(this.#markerPath);
    let fh: FileHandle;
    try {
      fh = await open(this.#logPath, 'r');
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
      this.#follower = null;
      if (await exists(this.#markerPath))
        throw new Error(
          `${this.#logPath} is missing: the accounts and keys of this store are lost, not absent. ` +
            `Restore it from a backup (or remove ${MARKER_FILE} to start an empty store).`,
        );
      return { exists: false, state: EMPTY_STATE, goodEnd: 0, size: 0, lines: 0 };
    }
    try {
      const st = await fh.stat();
      // Made writable by others while open: what it says from now on may be anyone's.
      if ((st.mode & 0o022) !== 0) throw new StoreNotPrivate(this.dir, this.#logPath, st.mode);
      let f = this.#follower;
      if (
        f !== null &&
        (f.dev !== st.dev || f.ino !== st.ino || st.size < f.offset || !(await startsWith(fh, f.head)))
      ) {
        f = null;
      }
      f ??= { dev: st.dev, ino: st.ino, head: null, offset: 0, lines: 0, state: EMPTY_STATE };
      const buf = await readAt(fh, f.offset, st.size - f.offset);
      const next = consumeLog(this.#logPath, f, buf);
      // Its first line, the snapshot, is written whole by a rename: a log without one
      // was emptied or cut, not torn by a crash.
      if (next.lines === 0)
        throw new Error(
          `${this.#logPath} is damaged: ${st.size === 0 ? 'it is empty' : `no complete first line in ${st.size} bytes`}. ` +
            `Restore it from a backup (one older than change ${written}: then delete ${MARKER_FILE} too).`,
        );
      if (next.state.version < written)
        throw new Error(
          `${this.#logPath} is damaged: it ends at change ${next.state.version} but change ${written} was written ` +
            `(${MARKER_FILE}); lines were lost. Restore it from a backup (one older than change ${written}: then delete ${MARKER_FILE} too).`,
        );
      this.#follower = next;
      return { exists: true, state: next.state, goodEnd: next.offset, size: st.size, lines: next.lines };
    } finally {
      await fh.close();
    }
  }

  // ---- writing ------------------------------------------------------------

  /** Cut what follows the last good line, keeping the bytes beside the log and saying so. */
  async #cutTail(tail: Tail): Promise<void> {
    const { aside, bytes } = await cutLog(this.#logPath, tail.goodEnd, tail.size);
    this.#opts.warn(
      `${this.#logPath}: cut ${bytes} bytes after line ${tail.lines} (a torn or invalid last line); kept in ${aside}`,
    );
  }

  // ---- the lock (core/files/lock.ts: its staleness rule) --------------------

  #withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lockChain.then(async () => {
      const release = await this.#acquire();
      try {
        if (!this.#swept) {
          this.#swept = true;
          await sweepDeadTemps(this.dir);
        }
        return await fn();
      } finally {
        await release();
      }
    });
    this.#lockChain = run.catch(() => {});
    return run;
  }

  async #acquire(): Promise<() => Promise<void>> {
    try {
      return await takeLock(this.#lockPath, {
        waitMs: this.#opts.lockTimeoutMs,
        staleAfterMs: this.#opts.staleLockMs,
        mode: STORE_FILE_MODE,
      });
    } catch (e) {
      if (!(e instanceof LockHeld)) throw e;
      throw new Error(
        `${this.#lockPath} is held (${describeHolder(e.holder)}): another process is changing the store. ` +
          'If no fundreturns process is running, delete that file.',
      );
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if (errCode(e) === 'ENOENT') return false;
    throw e;
  }
}
