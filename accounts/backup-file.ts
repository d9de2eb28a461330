/**
 * Backup and restore of the embedded store (store-file.ts), while servers run.
 *
 * A backup copies, in this order:
 * - `store.json` then `access.log`, under the store's write lock (no change or
 *   compaction runs meanwhile) and in the order every reader reads them (the marker
 *   first: it never names a change the log copied after it lacks, else the copy would
 *   be refused as "lines were lost");
 * - the count files the server rewrites whole by a rename every second
 *   (`usage-YYYY-MM.json`, `daily-YYYY-MM.json`, `burst.json`) and `plans.json`: each
 *   copy is one whole version, the counts as of the server's last flush;
 * - `audit.log` up to its last complete line (it is only ever appended to).
 * The copy is then read as a store (the same checks a server makes at start) and its
 * counts written into the manifest; a copy that does not read is no backup.
 *
 * A restore checks the backup (each file's checksum, then that it reads as a store with
 * the manifest's counts), claims the store as a server does (`serve.lock`: refused while
 * a server holds it, and no server starts until it is done), and under the write lock
 * moves what the store held aside into `before-restore-<time>/`, removes the sessions
 * and tokens (`secrets/`), and writes the backup's files, the log before its marker.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { now } from '../core/clock.js';
import { describeHolder, LockHeld, takeLock } from '../core/files/lock.js';
import { AUDIT_FILE } from './audit-log.js';
import {
  type BackupCounts,
  type BackupManifest,
  BackupStage,
  countDifferences,
  countsOf,
  readBackup,
  readIfThere,
} from './backup.js';
import { BURST_FILE } from './burst-file.js';
import { dayOf } from './daily-usage.js';
import { SECRETS_DIR } from './file-secrets.js';
import type { DailyCount } from './model.js';
import { SERVE_LOCK } from './serve-lock.js';
import { DAILY_FILE, PLANS_FILE, USAGE_FILE } from './store-counts.js';
import { FileAccessStore } from './store-file.js';
import { LOG_FILE, MARKER_FILE, writeStoreFile } from './store-log.js';
import { checkStorePrivate, STORE_DIR_MODE } from './store-perms.js';

/** The files a server rewrites whole (by a rename): copied as they stand. */
function isCountFile(name: string): boolean {
  return USAGE_FILE.test(name) || DAILY_FILE.test(name) || name === BURST_FILE || name === PLANS_FILE;
}

/** What a store directory holds that a restore replaces: the log and marker first, as moved aside. */
function isStoreData(name: string): boolean {
  return name === MARKER_FILE || name === LOG_FILE || name === AUDIT_FILE || isCountFile(name);
}

/** The last day (YYYY-MM-DD) of a month (YYYY-MM). */
function lastDayOf(month: string): string {
  return dayOf(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0));
}

/**
 * The counts of the store in `dir`, read through the store's own readers (marker
 * against log, every count file's shape), without opening it for writing: nothing
 * in `dir` is created or changed.
 */
export async function fileStoreCounts(dir: string): Promise<BackupCounts> {
  const store = new FileAccessStore(dir);
  try {
    const names = await readdir(dir);
    const state = await store.read();
    const usage = new Map<string, Map<string, number>>();
    const daily = new Map<string, Map<string, DailyCount>>();
    for (const name of names.sort()) {
      const u = USAGE_FILE.exec(name);
      if (u !== null) usage.set(u[1], await store.readUsage(u[1]));
      const d = DAILY_FILE.exec(name);
      if (d !== null)
        for (const [day, keys] of await store.readDaily(`${d[1]}-01`, lastDayOf(d[1]))) daily.set(day, keys);
    }
    await store.readPlans();
    return countsOf(state, usage, daily, (await store.readAudit(Number.MAX_SAFE_INTEGER)).length);
  } finally {
    await store.close();
  }
}

/** Back up the embedded store in `storeDir` into the new directory `dest`, while servers run. */
export async function backupFileStore(storeDir: string, dest: string): Promise<BackupManifest> {
  const dir = resolve(storeDir);
  if ((await readIfThere(join(dir, LOG_FILE))) === null)
    throw new Error(`no store in ${dir} (no ${LOG_FILE}): nothing to back up`);
  // As every command opens it: a store others can write to, or a damaged log, is refused.
  const store = await FileAccessStore.open(dir);
  let stage: BackupStage | null = null;
  try {
    stage = await BackupStage.create(dest);
    const into = stage;
    await store.exclusive(async () => {
      for (const name of [MARKER_FILE, LOG_FILE]) {
        const data = await readIfThere(join(dir, name));
        if (data === null) throw new Error(`${join(dir, name)} is missing`);
        await into.add(name, data);
      }
    });
    for (const name of (await readdir(dir)).filter(isCountFile).sort()) {
      // A daily file may be removed (older than the days kept) after the listing.
      const data = await readIfThere(join(dir, name));
      if (data !== null) await into.add(name, data);
    }
    const audit = await readIfThere(join(dir, AUDIT_FILE));
    if (audit !== null) await into.add(AUDIT_FILE, audit.subarray(0, audit.lastIndexOf(0x0a) + 1));
    const counts = await fileStoreCounts(into.dir);
    return await into.commit({ store: 'file', from: dir, ...counts });
  } catch (e) {
    await stage?.discard();
    throw e;
  } finally {
    await store.close();
  }
}

/**
 * Why the store in `dir` is not empty (a list of what it holds), or [] when a restore
 * may go in without --force: no accounts or changes, no counts, no audit, no sessions.
 * A log that does not read counts as holding something.
 */
async function storeHolds(dir: string, names: readonly string[]): Promise<string[]> {
  const holds: string[] = [];
  if (names.includes(LOG_FILE) || names.includes(MARKER_FILE)) {
    try {
      const store = new FileAccessStore(dir);
      const s = await store.read().finally(() => store.close());
      if (s.version > 0)
        holds.push(`${s.accounts.length} accounts and ${s.keys.length} keys (change ${s.version})`);
    } catch (e) {
      holds.push(`an access log that does not read (${(e as Error).message})`);
    }
  }
  const counts = names.filter((n) => USAGE_FILE.test(n) || DAILY_FILE.test(n) || n === BURST_FILE);
  if (counts.length > 0) holds.push(`request counts (${counts.join(', ')})`);
  if (names.includes(AUDIT_FILE)) holds.push('an audit log');
  if (names.includes(SECRETS_DIR) && (await readdir(join(dir, SECRETS_DIR))).length > 0)
    holds.push('sessions (secrets/)');
  return holds;
}

export interface FileRestore {
  readonly manifest: BackupManifest;
  /** Where what the store held before was moved, or null when it held nothing. */
  readonly replaced: string | null;
}

/**
 * Restore the backup in `backupDir` into the store directory `storeDir` (made when
 * missing). Refused while a server holds the store, and, unless `force`, when the
 * store holds anything already.
 */
export async function restoreFileStore(
  backupDir: string,
  storeDir: string,
  opts: { force: boolean },
): Promise<FileRestore> {
  const from = resolve(backupDir);
  const dir = resolve(storeDir);
  if (from === dir) throw new Error(`${dir} is the backup itself: restore it into a store directory`);
  const { manifest, files } = await readBackup(from, 'file');
  if (!files.has(LOG_FILE) || !files.has(MARKER_FILE))
    throw new Error(`${from} has no ${LOG_FILE} and ${MARKER_FILE}: not a backup of an embedded store`);
  for (const name of files.keys())
    if (!isStoreData(name)) throw new Error(`${join(from, name)} is not a file of an embedded store`);
  // The backup reads as a store, with the counts it was made with, before anything is touched.
  const problems = countDifferences(manifest, await fileStoreCounts(from));
  if (problems.length > 0)
    throw new Error(`${from} does not read as it was backed up: ${problems.join('; ')}`);

  // Parents as the umask says (they are not the store's); the store itself private.
  await mkdir(dirname(dir), { recursive: true });
  await mkdir(dir, { recursive: true, mode: STORE_DIR_MODE });
  await checkStorePrivate(dir);
  let release: () => Promise<void>;
  try {
    release = await takeLock(join(dir, SERVE_LOCK));
  } catch (e) {
    if (!(e instanceof LockHeld)) throw e;
    throw new Error(
      `a server (${describeHolder(e.holder)}) holds the store ${dir}: stop it before restoring ` +
        `(if none runs, delete ${join(dir, SERVE_LOCK)})`,
    );
  }
  try {
    const holds = await storeHolds(dir, await readdir(dir));
    if (holds.length > 0 && !opts.force)
      throw new Error(
        `the store ${dir} holds ${holds.join(', ')}: a restore replaces all of it. ` +
          'Add --force to restore anyway (what it holds is moved into before-restore-<time>/ in the store)',
      );
    const target = new FileAccessStore(dir);
    let replaced: string | null = null;
    try {
      await target.exclusive(async () => {
        const names = await readdir(dir);
        const present = [MARKER_FILE, LOG_FILE, ...names.filter((n) => isStoreData(n)).sort()].filter(
          (n, i, all) => names.includes(n) && all.indexOf(n) === i,
        );
        if (present.length > 0) {
          replaced = join(dir, `before-restore-${new Date(now()).toISOString().replace(/[:.]/g, '-')}`);
          await mkdir(replaced, { mode: STORE_DIR_MODE });
          // The marker first: a reader never finds a marker ahead of the log beside it.
          for (const n of present) await rename(join(dir, n), join(replaced, n));
        }
        await rm(join(dir, SECRETS_DIR), { recursive: true, force: true });
        const order = [
          ...[...files.keys()].filter((n) => n !== LOG_FILE && n !== MARKER_FILE),
          LOG_FILE,
          MARKER_FILE,
        ];
        for (const name of order) {
          const data = files.get(name) as Buffer;
          await writeStoreFile(join(dir, name), data);
        }
      });
    } finally {
      await target.close();
    }
    const restored = countDifferences(manifest, await fileStoreCounts(dir));
    if (restored.length > 0)
      throw new Error(`the restored store ${dir} differs from the backup: ${restored.join('; ')}`);
    return { manifest, replaced };
  } finally {
    await release();
  }
}
