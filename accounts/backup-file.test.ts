import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { takeLock } from '../core/files/lock.js';
import { BACKUP_MANIFEST } from './backup.js';
import { backupFileStore, fileStoreCounts, restoreFileStore } from './backup-file.js';
import { writeBurst } from './burst-file.js';
import { SERVE_LOCK } from './serve-lock.js';
import { account, create, createAccountsMeanwhile, fillForBackup } from './store.contract.js';
import { FileAccessStore } from './store-file.js';
import { LOG_FILE, MARKER_FILE } from './store-log.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'fr-backup-'));
  dirs.push(d);
  return d;
}

/** The files of fullStore's store a backup holds, and a restore replaces. */
const STORE_FILES = [
  'access.log',
  'audit.log',
  'burst.json',
  'daily-2026-11.json',
  'plans.json',
  'store.json',
  'usage-2026-11.json',
];

/** fillForBackup's store, with this month's counts (acme 120, globex 7) and acme's burst bucket. */
async function fullStore(dir: string) {
  const s = await FileAccessStore.open(dir);
  const made = await fillForBackup(s);
  await s.writeUsage(
    '2026-11',
    new Map([
      [made.a.id, 120],
      [made.b.id, 7],
    ]),
  );
  await writeBurst(dir, new Map([[made.a.id, Date.now() + 30_000]]));
  await s.close();
  return made;
}

describe('store backup and restore, the embedded store', () => {
  it('a backup holds what a restore needs (log and marker, usage, daily counts, plans, burst, audit), never sessions or attempt counters', async () => {
    const d = tempDir();
    const store = join(d, 'store');
    const { a, b, ka, kb } = await fullStore(store);
    const m = await backupFileStore(store, join(d, 'backup'));
    expect(Object.keys(m.files).sort()).toEqual(STORE_FILES);
    expect(readdirSync(join(d, 'backup')).sort()).toEqual([...Object.keys(m.files), BACKUP_MANIFEST].sort());
    expect(m).toMatchObject({
      format: 1,
      store: 'file',
      from: store,
      version: 4,
      accounts: 2,
      keys: 2,
      usage: { '2026-11': 127 },
      daily: { days: 2, first: '2026-11-20', last: '2026-11-23', ok: 127, refused: 4 },
      audit: 1,
    });
    // Private like the store: it holds key hashes and account names.
    expect(statSync(join(d, 'backup')).mode & 0o777).toBe(0o700);
    expect(statSync(join(d, 'backup', LOG_FILE)).mode & 0o777).toBe(0o600);

    const restored = join(d, 'restored');
    await restoreFileStore(join(d, 'backup'), restored, { force: false });
    const s = await FileAccessStore.open(restored);
    const state = await s.read();
    expect(state.keys.map((k) => k.hash).sort()).toEqual([ka.hash, kb.hash].sort());
    expect(await s.readUsage('2026-11')).toEqual(
      new Map([
        [a.id, 120],
        [b.id, 7],
      ]),
    );
    expect((await s.readDaily('2026-11-23', '2026-11-23')).get('2026-11-23')).toEqual(
      new Map([
        [ka.id, [20, 0]],
        [kb.id, [7, 1]],
      ]),
    );
    expect(await s.readPlans()).toMatchObject({ pro: { burst: 5, monthly: 6 } });
    expect(await s.readAudit(10)).toHaveLength(1);
    expect(await s.getSecret('session', 's'.repeat(32))).toBeNull();
    await s.close();
    expect(readFileSync(join(restored, 'burst.json'), 'utf8')).toBe(
      readFileSync(join(store, 'burst.json'), 'utf8'),
    );
  });

  it('backups taken while another process appends and compacts each restore whole (the marker copied before the log, under the lock)', async () => {
    const d = tempDir();
    const dir = join(d, 'store');
    // Compacting every few lines: the log is replaced by a rename again and again.
    const writer = await FileAccessStore.open(dir, { compactAfterLines: 3 });
    // A pause between changes, as between admin changes: the backups get the lock in between.
    const writes = createAccountsMeanwhile(writer, 80, 3);
    const versions: number[] = [];
    let n = 0;
    while (writes.writing() || n === 0) {
      const m = await backupFileStore(dir, join(d, `b${n}`));
      const counts = await fileStoreCounts(join(d, `b${n}`));
      expect(counts.version).toBe(m.version);
      expect(counts.accounts).toBe(m.version);
      await restoreFileStore(join(d, `b${n}`), join(d, `r${n}`), { force: false });
      versions.push(m.version);
      n++;
    }
    await writes.done;
    await writer.close();
    // Taken mid-way, not only before or after the writes.
    expect(versions.filter((v) => v > 0 && v < 80).length).toBeGreaterThan(3);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    const last = await backupFileStore(dir, join(d, 'last'));
    expect(last.version).toBe(80);
  });

  it('why the marker goes first: a log copied before its marker, with one change between, is refused as lines were lost', async () => {
    const d = tempDir();
    const dir = join(d, 'store');
    const s = await FileAccessStore.open(dir);
    await s.change(create(account('one')));
    const copy = join(d, 'naive');
    mkdirSync(copy, { mode: 0o700 });
    await copyFile(join(dir, LOG_FILE), join(copy, LOG_FILE));
    await s.change(create(account('two')));
    await copyFile(join(dir, MARKER_FILE), join(copy, MARKER_FILE));
    await s.close();
    await expect(fileStoreCounts(copy)).rejects.toThrow(/lines were lost/);
  });

  it('restore is refused while a server holds the store, which stays as it was', async () => {
    const d = tempDir();
    await fullStore(join(d, 'a'));
    await backupFileStore(join(d, 'a'), join(d, 'backup'));
    const store = join(d, 'served');
    const s = await FileAccessStore.open(store);
    await s.change(create(account('live')));
    await s.close();
    const before = readFileSync(join(store, LOG_FILE), 'utf8');
    // This process plays the server: a live pid holds serve.lock.
    const release = await takeLock(join(store, SERVE_LOCK));
    try {
      await expect(restoreFileStore(join(d, 'backup'), store, { force: true })).rejects.toThrow(
        /a server \(pid \d+ on .*\) holds the store .*: stop it before restoring/,
      );
    } finally {
      await release();
    }
    expect(readFileSync(join(store, LOG_FILE), 'utf8')).toBe(before);
  });

  it('restore into a store that holds accounts needs --force, which moves them aside and signs everyone out', async () => {
    const d = tempDir();
    await fullStore(join(d, 'a'));
    await backupFileStore(join(d, 'a'), join(d, 'backup'));
    const store = join(d, 'b');
    await fullStore(store);
    const log = readFileSync(join(store, LOG_FILE), 'utf8');
    await expect(restoreFileStore(join(d, 'backup'), store, { force: false })).rejects.toThrow(
      /holds 2 accounts and 2 keys \(change 4\), request counts .*, an audit log, sessions \(secrets\/\): a restore replaces all of it\. Add --force/,
    );
    expect(readFileSync(join(store, LOG_FILE), 'utf8')).toBe(log);
    const r = await restoreFileStore(join(d, 'backup'), store, { force: true });
    expect(r.replaced).toMatch(/before-restore-/);
    expect(readFileSync(join(r.replaced as string, LOG_FILE), 'utf8')).toBe(log);
    expect(readdirSync(r.replaced as string).sort()).toEqual(STORE_FILES);
    expect(existsSync(join(store, 'secrets'))).toBe(false);
    // Attempt counters stay in force.
    expect(readdirSync(join(store, 'throttle'))).toHaveLength(1);
    // The restored store opens as a server opens it.
    const s = await FileAccessStore.open(store);
    expect((await s.read()).accounts.map((x) => x.name).sort()).toEqual(['acme', 'globex']);
    await s.close();
  });

  it('a backup changed or cut since it was made is refused before anything is restored', async () => {
    const d = tempDir();
    await fullStore(join(d, 'a'));
    await backupFileStore(join(d, 'a'), join(d, 'backup'));
    const cut = readFileSync(join(d, 'backup', 'usage-2026-11.json'), 'utf8');
    writeFileSync(join(d, 'backup', 'usage-2026-11.json'), cut.slice(0, 10));
    await expect(restoreFileStore(join(d, 'backup'), join(d, 'r1'), { force: false })).rejects.toThrow(
      /usage-2026-11\.json does not match its manifest \(size or SHA-256\)/,
    );
    expect(existsSync(join(d, 'r1'))).toBe(false);
    rmSync(join(d, 'backup', 'usage-2026-11.json'));
    await expect(restoreFileStore(join(d, 'backup'), join(d, 'r1'), { force: false })).rejects.toThrow(
      /usage-2026-11\.json is missing: the backup is not whole/,
    );
    await expect(restoreFileStore(join(d, 'a'), join(d, 'r1'), { force: false })).rejects.toThrow(
      /is not a backup: it has no backup\.json/,
    );
  });

  it('a backup goes into a new or empty directory only, and one that fails leaves nothing behind', async () => {
    const d = tempDir();
    const store = join(d, 'store');
    await fullStore(store);
    mkdirSync(join(d, 'full'));
    writeFileSync(join(d, 'full', 'x'), 'x');
    await expect(backupFileStore(store, join(d, 'full'))).rejects.toThrow(/is not empty/);
    mkdirSync(join(d, 'empty'));
    await backupFileStore(store, join(d, 'empty'));
    expect(existsSync(join(d, 'empty', BACKUP_MANIFEST))).toBe(true);
    // A count file that does not read: the copy is refused, and no backup appears.
    writeFileSync(join(store, 'usage-2026-10.json'), '{"acct_000000000000": -1}', { mode: 0o600 });
    await expect(backupFileStore(store, join(d, 'bad'))).rejects.toThrow(/must be a whole number/);
    expect(readdirSync(d).filter((n) => n.startsWith('bad'))).toEqual([]);
    await expect(backupFileStore(join(d, 'nowhere'), join(d, 'b2'))).rejects.toThrow(/no store in .*nowhere/);
    expect(existsSync(join(d, 'nowhere'))).toBe(false);
  });
});
