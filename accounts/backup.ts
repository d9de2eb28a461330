/**
 * Backups of the access store (`fundreturns store backup|restore`), what the two
 * stores' backups share: a backup is a directory holding the copied data and
 * `backup.json`, its manifest (format, which store, when, from where, each file's size
 * and SHA-256, and the counts a restore is checked against). It is written into a
 * staging directory beside DIR and renamed into place, so a DIR that exists holds a
 * whole backup, never the start of one.
 *
 * Not in a backup, in either store: sessions and email tokens (a restore signs everyone
 * out and voids links in flight) and sign-in attempt counters (they expire within their
 * window, and a restore leaves the store's own in force).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { now } from '../core/clock.js';
import { errCode, fsyncDir } from '../core/files/atomic.js';
import { type AccessState, type AccessStore, type DailyCount, isObject } from './model.js';
import { STORE_DIR_MODE, STORE_FILE_MODE } from './store-perms.js';

export const BACKUP_MANIFEST = 'backup.json';
const BACKUP_FORMAT = 1;

export type StoreKind = 'file' | 'redis';

/** What a store holds, in numbers: written into the manifest, checked after a restore. */
export interface BackupCounts {
  /** Changes in the access log (AccessState.version). */
  readonly version: number;
  readonly accounts: number;
  readonly keys: number;
  readonly people: number;
  readonly requests: number;
  /** Requests admitted in each month (YYYY-MM), all accounts together. */
  readonly usage: Readonly<Record<string, number>>;
  /** The per-key daily counts: how many days, the first and last, their sums. */
  readonly daily: {
    readonly days: number;
    readonly first: string | null;
    readonly last: string | null;
    readonly ok: number;
    readonly refused: number;
  };
  /** Audit entries. */
  readonly audit: number;
}

export interface BackupFile {
  readonly bytes: number;
  readonly sha256: string;
}

export interface BackupManifest extends BackupCounts {
  readonly format: number;
  readonly store: StoreKind;
  /** When it was made (the service clock). */
  readonly made_at: string;
  /** The store it was made from: a directory, or a Redis URL without its password. */
  readonly from: string;
  readonly files: Readonly<Record<string, BackupFile>>;
}

/** The counts of a state, its months' usage (account → count) and its days' per-key counts. */
export function countsOf(
  state: AccessState,
  usage: ReadonlyMap<string, ReadonlyMap<string, number>>,
  daily: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>,
  audit: number,
): BackupCounts {
  const days = [...daily.keys()].sort();
  let ok = 0;
  let refused = 0;
  for (const keys of daily.values())
    for (const [a, r] of keys.values()) {
      ok += a;
      refused += r;
    }
  return {
    version: state.version,
    accounts: state.accounts.length,
    keys: state.keys.length,
    people: state.people.length,
    requests: state.requests.length,
    usage: Object.fromEntries(
      [...usage]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([month, counts]) => [month, [...counts.values()].reduce((s, n) => s + n, 0)]),
    ),
    daily: { days: days.length, first: days[0] ?? null, last: days.at(-1) ?? null, ok, refused },
    audit,
  };
}

/** A store's counts, read through the store itself: the months and days named by `like` (a manifest). */
export async function storeCounts(store: AccessStore, like: BackupCounts): Promise<BackupCounts> {
  const state = await store.read();
  const usage = new Map<string, Map<string, number>>();
  for (const month of Object.keys(like.usage)) usage.set(month, await store.readUsage(month));
  const { first, last } = like.daily;
  const daily = first === null || last === null ? new Map() : await store.readDaily(first, last);
  const audit = (await store.readAudit(Number.MAX_SAFE_INTEGER)).length;
  return countsOf(state, usage, daily, audit);
}

/** Where two sets of counts differ, said for a person ([] when they agree). */
export function countDifferences(want: BackupCounts, got: BackupCounts): string[] {
  const out: string[] = [];
  for (const k of ['version', 'accounts', 'keys', 'people', 'requests', 'audit'] as const)
    if (want[k] !== got[k]) out.push(`${k} ${got[k]}, not ${want[k]}`);
  for (const month of new Set([...Object.keys(want.usage), ...Object.keys(got.usage)]))
    if (want.usage[month] !== got.usage[month])
      out.push(`requests in ${month} ${got.usage[month] ?? 0}, not ${want.usage[month] ?? 0}`);
  if (JSON.stringify(want.daily) !== JSON.stringify(got.daily))
    out.push(`daily counts ${JSON.stringify(got.daily)}, not ${JSON.stringify(want.daily)}`);
  return out;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** One line saying what a backup holds. */
export function describeCounts(c: BackupCounts): string {
  const usage = Object.entries(c.usage)
    .map(([m, n]) => `${plural(n, 'request')} in ${m}`)
    .join(', ');
  return (
    `change ${c.version}: ${plural(c.accounts, 'account')}, ${plural(c.keys, 'key')}, ` +
    `${plural(c.people, 'person', 'people')}, ${plural(c.requests, 'plan request')}` +
    `${usage === '' ? '' : `; ${usage}`}; daily counts of ${plural(c.daily.days, 'day')}` +
    `${c.daily.first === null ? '' : ` (${c.daily.first} to ${c.daily.last})`}; ${plural(c.audit, 'audit entry', 'audit entries')}`
  );
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A file's bytes, or null when there is no such file. */
export async function readIfThere(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return null;
    throw e;
  }
}

async function writeSynced(path: string, data: Buffer | string): Promise<void> {
  const fh = await open(path, 'wx', STORE_FILE_MODE);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * A backup being written: files go into a private staging directory beside `dest`,
 * and `commit` renames it to `dest` once the manifest is written and everything is
 * on disk. `dest` must not exist, or be an empty directory.
 */
export class BackupStage {
  readonly #files: Record<string, BackupFile> = {};

  private constructor(
    readonly dest: string,
    readonly dir: string,
  ) {}

  static async create(dest: string): Promise<BackupStage> {
    const target = resolve(dest);
    let entries: string[] | null = null;
    try {
      entries = await readdir(target);
    } catch (e) {
      if (errCode(e) === 'ENOTDIR') throw new Error(`${target} is a file: a backup is a directory`);
      if (errCode(e) !== 'ENOENT') throw e;
    }
    if (entries !== null && entries.length > 0)
      throw new Error(`${target} is not empty: a backup goes into a new (or empty) directory`);
    await mkdir(dirname(target), { recursive: true });
    const dir = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    await mkdir(dir, { mode: STORE_DIR_MODE });
    return new BackupStage(target, dir);
  }

  async add(name: string, data: Buffer | string): Promise<void> {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8');
    await writeSynced(join(this.dir, name), bytes);
    this.#files[name] = { bytes: bytes.length, sha256: sha256(bytes) };
  }

  /** Write the manifest and move the backup into place. */
  async commit(what: { store: StoreKind; from: string } & BackupCounts): Promise<BackupManifest> {
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      store: what.store,
      made_at: new Date(now()).toISOString(),
      from: what.from,
      ...countsPart(what),
      files: this.#files,
    };
    await writeSynced(join(this.dir, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
    await fsyncDir(this.dir);
    // Over an empty directory as well: rename(2) replaces one.
    await rename(this.dir, this.dest);
    await fsyncDir(dirname(this.dest));
    return manifest;
  }

  async discard(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

function countsPart(c: BackupCounts): BackupCounts {
  const { version, accounts, keys, people, requests, usage, daily, audit } = c;
  return { version, accounts, keys, people, requests, usage, daily, audit };
}

/**
 * A backup directory's manifest and files, each file checked against the size and
 * SHA-256 the manifest records: a backup changed or cut since it was made is refused
 * before anything is restored.
 */
export async function readBackup(
  dir: string,
  kind: StoreKind,
): Promise<{ manifest: BackupManifest; files: Map<string, Buffer> }> {
  const path = join(dir, BACKUP_MANIFEST);
  const text = await readIfThere(path);
  if (text === null)
    throw new Error(
      `${dir} is not a backup: it has no ${BACKUP_MANIFEST} (made by \`fundreturns store backup\`)`,
    );
  let m: unknown;
  try {
    m = JSON.parse(text.toString('utf8'));
  } catch {
    throw new Error(`${path}: not valid JSON`);
  }
  if (
    !isObject(m) ||
    m.format !== BACKUP_FORMAT ||
    (m.store !== 'file' && m.store !== 'redis') ||
    !isObject(m.files)
  )
    throw new Error(`${path}: not a backup manifest of format ${BACKUP_FORMAT}`);
  if (m.store !== kind)
    throw new Error(
      m.store === 'redis'
        ? `${dir} is a backup of a Redis store: restore it with --store redis://HOST:PORT`
        : `${dir} is a backup of an embedded store: restore it with --store DIR`,
    );
  const files = new Map<string, Buffer>();
  for (const [name, f] of Object.entries(m.files)) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || !isObject(f))
      throw new Error(`${path}: ${JSON.stringify(name)} is not a file a backup holds`);
    const data = await readIfThere(join(dir, name));
    if (data === null) throw new Error(`${join(dir, name)} is missing: the backup is not whole`);
    if (data.length !== f.bytes || sha256(data) !== f.sha256)
      throw new Error(
        `${join(dir, name)} does not match its manifest (size or SHA-256): the backup was changed or cut`,
      );
    files.set(name, data);
  }
  return { manifest: m as unknown as BackupManifest, files };
}
