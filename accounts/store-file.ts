/**
 * The embedded access store (the default, `--store ./var/store`): one directory that
 * a running server and the `accounts`/`keys` commands share.
 *
 *   access.log            append-only JSON lines: a snapshot line, then one AccessChange per line
 *   access.lock           held (created with O_EXCL) while a process appends or compacts
 *   store.json            {"format", "version"}: the version of the last change written, so a
 *                         log that lost lines (deleted, emptied, truncated) is refused, not read
 *                         as fewer accounts
 *   usage-YYYY-MM.json    {"<account id>": count}, rewritten atomically by the server
 *   daily-YYYY-MM.json    {"<YYYY-MM-DD>": {"<key id>": [admitted, refused]}}, requests per key
 *                         per day, added to atomically by the server, kept DAILY_KEEP_DAYS
 *   access.log.cut-…      bytes a writer cut off the log's end (a torn or invalid last line), kept
 *   plans.json            the limits the last server on the store enforces (readPlans)
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
 * Why an append-only log rather than SQLite or LMDB: it needs no native module and
 * no install script (the lockfile stays free of build steps); an admin change costs
 * one write() and one fsync, and is durable when `change()` resolves; it is
 * crash-safe by construction, because a crash can only leave a torn last line,
 * which readers skip and the next writer cuts off; compaction writes the whole
 * state to a new file and renames it over the old one, so a reader sees the old log
 * or the new one, never a mix. Admin changes are rare (hundreds, not millions), so
 * replaying the log is instant; the hot path never reads the store at all.
 *
 * Writers take the lock so that validation (unique names, existing ids) sees the
 * latest state, torn lines can be cut safely, and no append lands in a file that a
 * concurrent compaction is about to replace. Readers never take it: they only
 * consume complete lines and notice a compaction by the file's identity.
 */
import { randomBytes } from 'node:crypto';
import { type FSWatcher, statSync, watch } from 'node:fs';
import {
  chmod,
  type FileHandle,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  stat,
  truncate,
  unlink,
} from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { now } from '../core/clock.js';
import { escapeForTerminal } from '../core/escape.js';
import { pidAlive } from '../core/pid-lock.js';
import { AUDIT_FILE, appendAuditFile, readAuditFile } from './audit-log.js';
import { addDays, dayStart } from './daily-usage.js';
import { FileSecrets } from './file-secrets.js';
import {
  type AccessChange,
  type AccessState,
  type AccessStore,
  type AuditEntry,
  applyChange,
  assertChange,
  DAILY_KEEP_DAYS,
  type DailyCount,
  EMPTY_STATE,
  isAccount,
  isChange,
  isKeyRecord,
  isObject,
  isPerson,
  isPlanRequest,
  type PlanLimits,
  type PlanName,
  type SecretKind,
} from './model.js';
import { parsePlans } from './plans.js';
import { checkStorePrivate, STORE_DIR_MODE, STORE_FILE_MODE, StoreNotPrivate } from './store-perms.js';

export const LOG_FILE = 'access.log';
const LOCK_FILE = 'access.lock';
export const MARKER_FILE = 'store.json';
/** The limits the last server on this store enforces (readPlans). */
export const PLANS_FILE = 'plans.json';
export const USAGE_FILE = /^usage-(\d{4}-\d{2})\.json$/;
export const DAILY_FILE = /^daily-(\d{4}-\d{2})\.json$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const LOG_FORMAT = 1;
const NEWLINE = 0x0a;
const HEAD_BYTES = 256;

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The first line of every log: the whole state, as compaction writes it. */
interface SnapshotLine {
  readonly op: 'snapshot';
  readonly format: number;
  /** Random: tells two generations of the log apart even if the file system reuses an inode. */
  readonly id: string;
  readonly at: string;
  readonly state: AccessState;
}

type LogLine = AccessChange | SnapshotLine;

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

/** Where this process has read the log up to, so a refresh reads only what was appended. */
interface Follower {
  readonly dev: number;
  readonly ino: number;
  /** The first bytes of the log's first line: a compacted log starts with different ones. */
  readonly head: Buffer | null;
  readonly offset: number;
  readonly lines: number;
  readonly state: AccessState;
}

interface Tail {
  readonly exists: boolean;
  readonly state: AccessState;
  /** Bytes up to the end of the last good line; anything after is a torn or in-progress line. */
  readonly goodEnd: number;
  readonly size: number;
  readonly lines: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A file-system error's code (ENOENT, …), or undefined. */
export function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

export class FileAccessStore implements AccessStore {
  readonly dir: string;
  private readonly logPath: string;
  private readonly lockPath: string;
  private readonly markerPath: string;
  private readonly opts: Required<FileStoreOptions>;
  private follower: Follower | null = null;
  /** Serialises refreshes, locked sections and usage writes within this process. */
  private refreshChain: Promise<unknown> = Promise.resolve();
  private lockChain: Promise<unknown> = Promise.resolve();
  private usageChain: Promise<unknown> = Promise.resolve();
  private dailyChain: Promise<unknown> = Promise.resolve();
  private lockToken: string | null = null;
  /** Whether this process already removed the tmp files killed writers left (once, under the lock). */
  private swept = false;
  private readonly unsubscribers = new Set<() => void>();
  /** Sessions, tokens and sign-in counters (file-secrets.ts). */
  private readonly secrets: FileSecrets;

  constructor(dir: string, options: FileStoreOptions = {}) {
    this.dir = dir;
    this.logPath = join(dir, LOG_FILE);
    this.lockPath = join(dir, LOCK_FILE);
    this.markerPath = join(dir, MARKER_FILE);
    this.secrets = new FileSecrets(dir);
    this.opts = {
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
      store.opts.warn(`made private (readable by group or others before): ${tightened.join(', ')}`);
    await store.init();
    return store;
  }

  /**
   * A new store gets its log (an empty snapshot) and marker at once, so that from then
   * on a missing log is damage, never "no accounts yet". A store from before the
   * marker gets one. A directory without log or marker that holds usage files has
   * served before: its log is missing, and that is refused.
   */
  private async init(): Promise<void> {
    const hasLog = await exists(this.logPath);
    if (hasLog || (await exists(this.markerPath))) {
      if (hasLog && !(await exists(this.markerPath)))
        await this.withLock(async () => this.writeMarker((await this.refresh()).state.version));
      return;
    }
    const usage = (await readdir(this.dir)).filter((n) => USAGE_FILE.test(n) || DAILY_FILE.test(n));
    if (usage.length > 0)
      throw new Error(
        `${this.logPath} is missing, but ${this.dir} holds ${usage.join(', ')}: the accounts and keys ` +
          'of this store are lost, not absent. Restore access.log from a backup.',
      );
    await this.withLock(async () => {
      if (!(await exists(this.logPath))) await this.writeSnapshot(EMPTY_STATE);
      await this.writeMarker(0);
    });
  }

  async read(): Promise<AccessState> {
    return (await this.refresh()).state;
  }

  async change(c: AccessChange): Promise<AccessState> {
    return await this.withLock(async () => {
      const tail = await this.refresh();
      assertChange(tail.state, c);
      if (!tail.exists) await this.writeSnapshot(tail.state);
      // Under the lock nobody else is writing, so bytes after the last good line are
      // a crashed writer's torn line: cut them, or the next append would bury them.
      else if (tail.goodEnd < tail.size) await this.cutTail(tail);
      await this.append(`${JSON.stringify(c)}\n`);
      const after = await this.refresh();
      if (after.lines > this.opts.compactAfterLines) await this.writeSnapshot(after.state);
      await this.writeMarker(after.state.version);
      return after.state;
    });
  }

  /**
   * Run `fn` holding the store's write lock: no change, compaction or restore runs
   * meanwhile, in this process or another (backup.ts copies `store.json` and
   * `access.log` so, and a restore replaces them so). Readers never wait on it.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.withLock(fn);
  }

  /** Rewrite the log as one snapshot line (done automatically past `compactAfterLines`). */
  async compact(): Promise<void> {
    await this.withLock(async () => {
      const tail = await this.refresh();
      if (tail.exists) await this.writeSnapshot(tail.state);
    });
  }

  subscribe(onChange: () => void): () => void {
    let last = this.signature();
    let lastNotify = 0;
    let timer: NodeJS.Timeout | null = null;
    let closed = false;
    const check = () => {
      if (closed) return;
      const sig = this.signature();
      if (sig === last) return;
      const wait = lastNotify + this.opts.minNotifyMs - Date.now();
      if (wait > 0) {
        schedule(wait);
        return;
      }
      last = sig;
      lastNotify = Date.now();
      onChange();
    };
    const schedule = (ms: number) => {
      if (timer !== null || closed) return;
      timer = setTimeout(() => {
        timer = null;
        check();
      }, ms);
      timer.unref();
    };
    const poll = setInterval(check, this.opts.pollMs);
    poll.unref();
    let watcher: FSWatcher | null = null;
    try {
      watcher = watch(this.dir, { persistent: false }, (_event, name) => {
        if (name !== null && !String(name).startsWith(LOG_FILE)) return;
        // Coalesce the burst of events one append or rename produces.
        schedule(20);
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = null;
      });
    } catch {
      // No watcher (inotify limits, odd file systems): the poll alone still notices within pollMs.
    }
    const unsubscribe = () => {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      if (timer !== null) clearTimeout(timer);
      watcher?.close();
      this.unsubscribers.delete(unsubscribe);
    };
    this.unsubscribers.add(unsubscribe);
    return unsubscribe;
  }

  async readUsage(month: string): Promise<Map<string, number>> {
    const path = this.usagePath(month);
    const value = await readJsonFile(path);
    if (value === undefined) return new Map();
    if (!isObject(value)) throw new Error(`${path}: expected an object of account id to count`);
    const out = new Map<string, number>();
    for (const [id, n] of Object.entries(value)) {
      if (!Number.isSafeInteger(n) || (n as number) < 0)
        throw new Error(`${path}: the count of ${id} must be a whole number, not ${JSON.stringify(n)}`);
      out.set(id, n as number);
    }
    return out;
  }

  async readPlans(): Promise<Record<PlanName, PlanLimits> | null> {
    const path = join(this.dir, PLANS_FILE);
    const json = await readJsonFile(path);
    return json === undefined ? null : parsePlans(json, path);
  }

  async writePlans(plans: Readonly<Record<PlanName, PlanLimits>>): Promise<void> {
    await writeAtomic(this.dir, join(this.dir, PLANS_FILE), `${JSON.stringify(plans)}\n`);
  }

  async writeUsage(month: string, counts: ReadonlyMap<string, number>): Promise<void> {
    const path = this.usagePath(month);
    for (const [id, n] of counts) {
      if (!Number.isSafeInteger(n) || n < 0)
        throw new Error(`usage of ${id} must be a whole number, not ${n}`);
    }
    const run = this.usageChain.then(async () => {
      // The server writes only the accounts it counted; others keep their stored counts.
      const merged = await this.readUsage(month);
      for (const [id, n] of counts) merged.set(id, n);
      const body = Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      await writeAtomic(this.dir, path, `${JSON.stringify(body, null, 1)}\n`);
    });
    this.usageChain = run.catch(() => {});
    await run;
  }

  // ---- dashboard records: beside the log, never under its lock ----

  async putSecret(kind: SecretKind, id: string, value: string, ttlMs: number): Promise<void> {
    await this.secrets.put(kind, id, value, ttlMs);
  }

  async getSecret(kind: SecretKind, id: string): Promise<string | null> {
    return await this.secrets.get(kind, id);
  }

  async takeSecret(kind: SecretKind, id: string): Promise<string | null> {
    return await this.secrets.take(kind, id);
  }

  async deleteSecret(kind: SecretKind, id: string): Promise<void> {
    await this.secrets.delete(kind, id);
  }

  async throttle(key: string, limit: number, windowMs: number, nowMs: number): Promise<number> {
    return await this.secrets.throttle(key, limit, windowMs, nowMs);
  }

  async audit(entry: AuditEntry): Promise<void> {
    await appendAuditFile(join(this.dir, AUDIT_FILE), entry);
  }

  async readAudit(limit: number): Promise<AuditEntry[]> {
    return await readAuditFile(join(this.dir, AUDIT_FILE), limit);
  }

  // ---- per-key daily counts ----

  /**
   * Adds to `daily-YYYY-MM.json` ({day: {key id: [admitted, refused]}}), one file per
   * month read, added to and rewritten atomically, one write at a time (only the
   * server, which holds the store, writes it). Months wholly older than DAILY_KEEP_DAYS
   * before the newest day added are removed.
   */
  async addDaily(counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>): Promise<void> {
    const byMonth = new Map<string, Array<[string, ReadonlyMap<string, DailyCount>]>>();
    let newest = '';
    for (const [day, keys] of counts) {
      dayStart(day);
      for (const [id, c] of keys) checkDailyCount(`the daily count of ${id} on ${day}`, c);
      const month = day.slice(0, 7);
      byMonth.set(month, [...(byMonth.get(month) ?? []), [day, keys]]);
      if (day > newest) newest = day;
    }
    if (newest === '') return;
    const run = this.dailyChain.then(async () => {
      for (const [month, days] of byMonth) {
        const stored = await this.readDailyMonth(month);
        for (const [day, keys] of days) {
          const into = stored.get(day) ?? new Map<string, DailyCount>();
          for (const [id, [ok, refused]] of keys) {
            const [ok0, refused0] = into.get(id) ?? [0, 0];
            into.set(id, [ok0 + ok, refused0 + refused]);
          }
          stored.set(day, into);
        }
        const body = Object.fromEntries(
          [...stored].sort(byKey).map(([day, keys]) => [day, Object.fromEntries([...keys].sort(byKey))]),
        );
        await writeAtomic(this.dir, this.dailyPath(month), `${JSON.stringify(body)}\n`);
      }
      // A month goes once its last day is older than the days kept.
      const oldestKept = addDays(newest, -DAILY_KEEP_DAYS).slice(0, 7);
      for (const name of await readdir(this.dir)) {
        const m = DAILY_FILE.exec(name);
        if (m !== null && m[1] < oldestKept)
          await unlink(join(this.dir, name)).catch((e: unknown) => {
            if (errCode(e) !== 'ENOENT') throw e;
          });
      }
    });
    this.dailyChain = run.catch(() => {});
    await run;
  }

  async readDaily(from: string, to: string): Promise<Map<string, Map<string, DailyCount>>> {
    dayStart(from);
    dayStart(to);
    const out = new Map<string, Map<string, DailyCount>>();
    for (let month = from.slice(0, 7); month <= to.slice(0, 7); month = nextMonth(month)) {
      for (const [day, keys] of await this.readDailyMonth(month))
        if (day >= from && day <= to) out.set(day, keys);
    }
    return out;
  }

  private dailyPath(month: string): string {
    return join(this.dir, `daily-${month}.json`);
  }

  private async readDailyMonth(month: string): Promise<Map<string, Map<string, DailyCount>>> {
    const path = this.dailyPath(month);
    const value = await readJsonFile(path);
    const out = new Map<string, Map<string, DailyCount>>();
    if (value === undefined) return out;
    if (!isObject(value)) throw new Error(`${path}: expected an object of day to key counts`);
    for (const [day, keys] of Object.entries(value)) {
      if (!DAY.test(day) || day.slice(0, 7) !== month || !isObject(keys))
        throw new Error(
          `${path}: ${JSON.stringify(day)} is not a day of ${month} with an object of key counts`,
        );
      const m = new Map<string, DailyCount>();
      for (const [id, c] of Object.entries(keys)) {
        checkDailyCount(`${path}: the count of ${id} on ${day}`, c);
        m.set(id, c);
      }
      out.set(day, m);
    }
    return out;
  }

  async close(): Promise<void> {
    for (const u of [...this.unsubscribers]) u();
    await Promise.allSettled([
      this.lockChain,
      this.usageChain,
      this.dailyChain,
      this.refreshChain,
      this.secrets.settle(),
    ]);
  }

  // ---- reading ------------------------------------------------------------

  private refresh(): Promise<Tail> {
    const run = this.refreshChain.then(() => this.refreshNow());
    this.refreshChain = run.catch(() => {});
    return run;
  }

  private async refreshNow(): Promise<Tail> {
    // Read before the log: a writer appends first and raises the marker after, so the
    // log read next holds at least this version unless lines were lost.
    const written = await this.readMarker();
    let fh: FileHandle;
    try {
      fh = await open(this.logPath, 'r');
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
      this.follower = null;
      if (await exists(this.markerPath))
        throw new Error(
          `${this.logPath} is missing: the accounts and keys of this store are lost, not absent. ` +
            `Restore it from a backup (or remove ${MARKER_FILE} to start an empty store).`,
        );
      return { exists: false, state: EMPTY_STATE, goodEnd: 0, size: 0, lines: 0 };
    }
    try {
      const st = await fh.stat();
      // Made writable by others while open: what it says from now on may be anyone's.
      if ((st.mode & 0o022) !== 0) throw new StoreNotPrivate(this.dir, this.logPath, st.mode);
      let f = this.follower;
      if (
        f !== null &&
        (f.dev !== st.dev || f.ino !== st.ino || st.size < f.offset || !(await startsWith(fh, f.head)))
      ) {
        f = null;
      }
      f ??= { dev: st.dev, ino: st.ino, head: null, offset: 0, lines: 0, state: EMPTY_STATE };
      const buf = await readAt(fh, f.offset, st.size - f.offset);
      const next = this.consume(f, buf);
      // Its first line, the snapshot, is written whole by a rename: a log without one
      // was emptied or cut, not torn by a crash.
      if (next.lines === 0)
        throw new Error(
          `${this.logPath} is damaged: ${st.size === 0 ? 'it is empty' : `no complete first line in ${st.size} bytes`}. ` +
            `Restore it from a backup (one older than change ${written}: then delete ${MARKER_FILE} too).`,
        );
      if (next.state.version < written)
        throw new Error(
          `${this.logPath} is damaged: it ends at change ${next.state.version} but change ${written} was written ` +
            `(${MARKER_FILE}); lines were lost. Restore it from a backup (one older than change ${written}: then delete ${MARKER_FILE} too).`,
        );
      this.follower = next;
      return { exists: true, state: next.state, goodEnd: next.offset, size: st.size, lines: next.lines };
    } finally {
      await fh.close();
    }
  }

  /** Apply the complete lines of `buf` (read from `f.offset`) to the follower's state. */
  private consume(f: Follower, buf: Buffer): Follower {
    let { head, offset, lines, state } = f;
    // Bytes after the last newline are a write in progress or a torn line: not ours yet.
    const end = buf.lastIndexOf(NEWLINE) + 1;
    let start = 0;
    while (start < end) {
      const nl = buf.indexOf(NEWLINE, start);
      const raw = buf.subarray(start, nl + 1);
      const text = raw.toString('utf8').trim();
      const lineNo = lines + 1;
      if (text !== '') {
        const rec = parseLogLine(text);
        if (rec === null) {
          // A garbled last line is what a crash mid-write (on some file systems) leaves;
          // never the first, which is renamed into place whole.
          if (nl + 1 === end && lineNo > 1) break;
          throw new Error(`${this.logPath}:${lineNo}: not a valid access record: ${clip(text)}`);
        }
        if (lineNo === 1 && rec.op !== 'snapshot')
          throw new Error(`${this.logPath}:1: the log does not start with its snapshot line: it was cut`);
        if (rec.op === 'snapshot') {
          if (rec.format !== LOG_FORMAT)
            throw new Error(`${this.logPath}:${lineNo}: unsupported log format ${rec.format}`);
          state = rec.state;
        } else {
          state = applyChange(state, rec);
        }
      }
      // The snapshot's random id sits in its first bytes; no need to compare a large state.
      if (offset === 0 && start === 0) head = Buffer.from(raw.subarray(0, HEAD_BYTES));
      lines++;
      offset += raw.length;
      start = nl + 1;
    }
    return { dev: f.dev, ino: f.ino, head, offset, lines, state };
  }

  private signature(): string {
    try {
      const s = statSync(this.logPath, { bigint: true });
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch {
      return 'none';
    }
  }

  // ---- writing ------------------------------------------------------------

  private async append(line: string): Promise<void> {
    const fh = await open(this.logPath, 'a', STORE_FILE_MODE);
    try {
      // One write() of a whole line with O_APPEND, then fsync: durable when it resolves.
      const buf = Buffer.from(line, 'utf8');
      let done = 0;
      while (done < buf.length) done += (await fh.write(buf, done)).bytesWritten;
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  /**
   * Cut what follows the last good line (a torn write, or a complete line that is not
   * a valid record), keeping the bytes beside the log and saying so: a cut is never
   * silent.
   */
  private async cutTail(tail: Tail): Promise<void> {
    const fh = await open(this.logPath, 'r');
    let cut: Buffer;
    try {
      cut = await readAt(fh, tail.goodEnd, tail.size - tail.goodEnd);
    } finally {
      await fh.close();
    }
    const aside = `${this.logPath}.cut-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
    await writeAtomic(this.dir, aside, cut.toString('latin1'), 'latin1');
    await truncate(this.logPath, tail.goodEnd);
    this.opts.warn(
      `${this.logPath}: cut ${cut.length} bytes after line ${tail.lines} (a torn or invalid last line); kept in ${aside}`,
    );
  }

  private async writeMarker(version: number): Promise<void> {
    await writeAtomic(this.dir, this.markerPath, `${JSON.stringify({ format: LOG_FORMAT, version })}\n`);
  }

  /** The version of the last change written (0 without a marker). */
  private async readMarker(): Promise<number> {
    let text: string;
    try {
      text = await readFile(this.markerPath, 'utf8');
    } catch (e) {
      if (errCode(e) === 'ENOENT') return 0;
      throw e;
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new Error(`${this.markerPath}: not valid JSON`);
    }
    if (!isObject(v) || !Number.isSafeInteger(v.version) || (v.version as number) < 0)
      throw new Error(`${this.markerPath}: expected {"format": 1, "version": <whole number>}`);
    return v.version as number;
  }

  /** Replace the log with one snapshot line: atomic (tmp, fsync, rename, fsync dir). */
  private async writeSnapshot(state: AccessState): Promise<void> {
    const line: SnapshotLine = {
      op: 'snapshot',
      format: LOG_FORMAT,
      id: randomBytes(8).toString('hex'),
      at: new Date(now()).toISOString(),
      state: {
        version: state.version,
        accounts: state.accounts,
        keys: state.keys,
        people: state.people,
        requests: state.requests,
      },
    };
    await writeAtomic(this.dir, this.logPath, `${JSON.stringify(line)}\n`);
  }

  private usagePath(month: string): string {
    if (!MONTH.test(month)) throw new Error(`usage month must be YYYY-MM, not ${JSON.stringify(month)}`);
    return join(this.dir, `usage-${month}.json`);
  }

  // ---- the lock -----------------------------------------------------------

  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lockChain.then(async () => {
      await this.acquire();
      try {
        if (!this.swept) {
          this.swept = true;
          await removeDeadTmp(this.dir);
        }
        return await fn();
      } finally {
        await this.release();
      }
    });
    this.lockChain = run.catch(() => {});
    return run;
  }

  private async acquire(): Promise<void> {
    const token = JSON.stringify({
      pid: process.pid,
      host: hostname(),
      at: new Date().toISOString(),
      nonce: randomBytes(6).toString('hex'),
    });
    const deadline = Date.now() + this.opts.lockTimeoutMs;
    let delay = 2;
    for (;;) {
      try {
        const fh = await open(this.lockPath, 'wx', STORE_FILE_MODE);
        try {
          await fh.writeFile(token);
        } finally {
          await fh.close();
        }
        this.lockToken = token;
        return;
      } catch (e) {
        if (errCode(e) !== 'EEXIST') throw e;
      }
      if (await this.breakStaleLock()) continue;
      if (Date.now() > deadline) {
        const holder = await readFile(this.lockPath, 'utf8').catch(() => '?');
        throw new Error(
          `${this.lockPath} is held (${clip(holder)}): another process is changing the store. ` +
            'If no fundreturns process is running, delete that file.',
        );
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
    }
  }

  /** True when the lock was gone or stale and taking it may be retried at once. */
  private async breakStaleLock(): Promise<boolean> {
    let content: string;
    let mtimeMs: number;
    try {
      content = await readFile(this.lockPath, 'utf8');
      mtimeMs = (await stat(this.lockPath)).mtimeMs;
    } catch (e) {
      if (errCode(e) === 'ENOENT') return true;
      throw e;
    }
    if (!this.isStale(content, mtimeMs)) return false;
    // Move it aside first: if another process replaced the stale lock with its own
    // in the meantime, the content tells, and its lock is put back.
    const aside = `${this.lockPath}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await rename(this.lockPath, aside);
    } catch (e) {
      if (errCode(e) === 'ENOENT') return true;
      throw e;
    }
    try {
      const moved = await readFile(aside, 'utf8');
      if (moved !== content) await link(aside, this.lockPath).catch(() => {});
    } finally {
      await unlink(aside).catch(() => {});
    }
    return true;
  }

  private isStale(content: string, mtimeMs: number): boolean {
    let holder: { pid?: unknown; host?: unknown; at?: unknown } | null = null;
    try {
      const v: unknown = JSON.parse(content);
      if (isObject(v)) holder = v;
    } catch {
      // Empty or half-written: its creator may be writing it right now; only age tells.
    }
    const at = holder !== null && typeof holder.at === 'string' ? Date.parse(holder.at) : Number.NaN;
    const age = Date.now() - (Number.isFinite(at) ? at : mtimeMs);
    if (age > this.opts.staleLockMs) return true;
    if (holder !== null && holder.host === hostname() && typeof holder.pid === 'number') {
      return !pidAlive(holder.pid);
    }
    return false;
  }

  private async release(): Promise<void> {
    const token = this.lockToken;
    this.lockToken = null;
    const content = await readFile(this.lockPath, 'utf8').catch(() => null);
    if (content !== null && content === token) await unlink(this.lockPath).catch(() => {});
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(Math.max(0, length));
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await fh.read(buf, done, buf.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

async function startsWith(fh: FileHandle, head: Buffer | null): Promise<boolean> {
  if (head === null) return true;
  const got = await readAt(fh, 0, head.length);
  return got.equals(head);
}

function checkDailyCount(what: string, c: unknown): asserts c is DailyCount {
  if (!Array.isArray(c) || c.length !== 2 || !c.every((n) => Number.isSafeInteger(n) && n >= 0))
    throw new Error(`${what} must be [admitted, refused], two whole numbers, not ${JSON.stringify(c)}`);
}

const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

/** The month (YYYY-MM) after `month`. */
function nextMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

/** Write a file so that readers see the old content or the new, never a part (and it survives a crash). */
/** A JSON file's value; undefined when there is no such file; throws, naming it, when it is not JSON. */
async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (errCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${path}: not valid JSON`);
  }
}

export async function writeAtomic(
  dir: string,
  path: string,
  content: string,
  encoding: BufferEncoding = 'utf8',
): Promise<void> {
  const tmp = `${path}.${process.pid}${TMP_SUFFIX}`;
  const fh = await open(tmp, 'w', STORE_FILE_MODE);
  try {
    await fh.writeFile(content, encoding);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await fsyncDir(dir);
}

/** writeAtomic's temporary files: `<file>.<pid>.tmp`. */
const TMP_SUFFIX = '.tmp';
const TMP_FILE = /\.(\d+)\.tmp$/;

/**
 * Remove the temporary files of writers that were killed before their rename (a pid
 * that no longer runs on this host): nothing else ever would. Called under the store's
 * lock; a live writer's file (the server's usage, another CLI) is left alone.
 */
export async function removeDeadTmp(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const m = TMP_FILE.exec(name);
    if (m === null || pidAlive(Number(m[1]))) continue;
    await unlink(join(dir, name)).catch((e: unknown) => {
      if (errCode(e) !== 'ENOENT') throw e;
    });
  }
}

/** fsync a directory, so a rename or a new file in it survives a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle | null = null;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch (e) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename itself is still atomic.
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EBADF'].includes(errCode(e) ?? '')) throw e;
  } finally {
    await fh?.close();
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

function clip(s: string): string {
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
}

// ---- record shapes (the log is a file an operator can edit, so check it) ----

function isSnapshot(v: unknown): v is SnapshotLine {
  if (!isObject(v) || v.op !== 'snapshot' || typeof v.format !== 'number' || !isObject(v.state)) return false;
  const s = v.state;
  return (
    Number.isSafeInteger(s.version) &&
    Array.isArray(s.accounts) &&
    s.accounts.every(isAccount) &&
    Array.isArray(s.keys) &&
    s.keys.every(isKeyRecord) &&
    // Logs written before the dashboard have neither list: read as empty.
    (s.people === undefined || (Array.isArray(s.people) && s.people.every(isPerson))) &&
    (s.requests === undefined || (Array.isArray(s.requests) && s.requests.every(isPlanRequest)))
  );
}

function parseLogLine(text: string): LogLine | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (isSnapshot(v))
    return { ...v, state: { ...v.state, people: v.state.people ?? [], requests: v.state.requests ?? [] } };
  if (isChange(v)) return v;
  return null;
}
