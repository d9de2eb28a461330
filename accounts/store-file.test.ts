import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeBurst } from './burst-file.js';
import { FileSecrets } from './file-secrets.js';
import { claimStore } from './serve-lock.js';
import { accessStoreContract, account, create, key } from './store.contract.js';
import { FileAccessStore } from './store-file.js';
import { LOG_FILE, MARKER_FILE } from './store-log.js';

const dirs: string[] = [];
const stores: FileAccessStore[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'fr-store-'));
  dirs.push(d);
  return d;
}

async function openStore(dir: string, opts: ConstructorParameters<typeof FileAccessStore>[1] = {}) {
  const s = await FileAccessStore.open(dir, opts);
  stores.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

accessStoreContract('embedded file store', async () => {
  const dir = tempDir();
  return () => openStore(dir);
});

describe('FileAccessStore', () => {
  it('writes one snapshot line, then one line per change', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    const a = account('acme');
    const k = key(a.id);
    await s.change(create(a));
    await s.change({ op: 'key.create', key: k });
    const lines = readFileSync(join(dir, LOG_FILE), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).op)).toEqual(['snapshot', 'account.create', 'key.create']);
    expect(JSON.parse(lines[2])).toEqual({ op: 'key.create', key: k });
  });

  it('a store path that is a file is refused as such, not with a raw EEXIST', async () => {
    const file = join(tempDir(), 'afile');
    writeFileSync(file, 'x');
    await expect(openStore(file)).rejects.toThrow(/^the store .*afile is a file, not a directory/);
    await expect(openStore(join(file, 'below'))).rejects.toThrow(/is a file, not a directory/);
  });

  it('ignores a torn last line; the next change cuts it, keeps it aside and warns', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    const a = account('acme');
    await s.change(create(a));
    const log = join(dir, LOG_FILE);
    // A crash mid-write: half a line, no newline.
    const torn = '{"op":"account.create","account":{"id":"acct_';
    appendFileSync(log, torn);
    const warnings: string[] = [];
    const fresh = await openStore(dir, { warn: (m) => warnings.push(m) });
    expect((await fresh.read()).accounts.map((x) => x.name)).toEqual(['acme']);
    const b = account('bravo');
    const after = await fresh.change(create(b));
    expect(after.accounts.map((x) => x.name)).toEqual(['acme', 'bravo']);
    expect((await (await openStore(dir)).read()).accounts.map((x) => x.name)).toEqual(['acme', 'bravo']);
    expect(readFileSync(log, 'utf8')).not.toContain(`${torn}{`);
    const aside = readdirSync(dir).filter((n) => n.startsWith(`${LOG_FILE}.cut-`));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(dir, aside[0]), 'latin1')).toBe(torn);
    expect(warnings).toEqual([expect.stringContaining(`cut ${torn.length} bytes after line 2`)]);
  });

  it('a new store has its log and marker at once; a deleted or emptied log is refused, not empty (C25)', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    expect(readdirSync(dir).sort()).toEqual([LOG_FILE, MARKER_FILE]);
    await s.change(create(account('acme')));
    const log = join(dir, LOG_FILE);
    const kept = readFileSync(log);
    rmSync(log);
    await expect(s.read()).rejects.toThrow(/access\.log is missing/);
    await expect(FileAccessStore.open(dir).then((x) => x.read())).rejects.toThrow(/is missing/);
    writeFileSync(log, '');
    await expect((await openStore(dir)).read()).rejects.toThrow(/is damaged: it is empty/);
    writeFileSync(log, kept);
    expect((await (await openStore(dir)).read()).accounts.map((x) => x.name)).toEqual(['acme']);
  });

  it('a log cut short, mid-line or at a line end, is refused: the marker knows the last change', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    for (const name of ['a1', 'a2', 'a3', 'a4']) await s.change(create(account(name)));
    const log = join(dir, LOG_FILE);
    const full = readFileSync(log);
    const lines = full.toString('utf8').split('\n');
    const atLineEnd = lines.slice(0, 3).join('\n').length + 1;
    for (const size of [atLineEnd, atLineEnd + 10, 20]) {
      writeFileSync(log, full.subarray(0, size));
      await expect((await openStore(dir)).read(), `cut at ${size}`).rejects.toThrow(/is damaged/);
    }
    // A change is refused too, and cuts nothing.
    writeFileSync(log, full.subarray(0, atLineEnd + 10));
    await expect((await openStore(dir)).change(create(account('a5')))).rejects.toThrow(/lines were lost/);
    expect(readFileSync(log).length).toBe(atLineEnd + 10);
  });

  it('a directory that served before (usage files) but has no log is refused', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'usage-2026-11.json'), '{"acct_x": 3}\n');
    await expect(FileAccessStore.open(dir)).rejects.toThrow(/access\.log is missing.*usage-2026-11\.json/);
  });

  it('adopts a store written before the marker', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    await s.change(create(account('acme')));
    rmSync(join(dir, MARKER_FILE));
    const again = await openStore(dir);
    expect(JSON.parse(readFileSync(join(dir, MARKER_FILE), 'utf8'))).toEqual({ format: 1, version: 1 });
    expect((await again.read()).accounts).toHaveLength(1);
  });

  it('ignores a garbled complete last line but refuses garbage earlier, naming file and line', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    await s.change(create(account('acme')));
    const log = join(dir, LOG_FILE);
    appendFileSync(log, '\u0000\u0000\u0000\n');
    expect((await (await openStore(dir)).read()).accounts).toHaveLength(1);
    // A line in the middle that does not parse is damage, not a crash: say where.
    writeFileSync(
      log,
      `${readFileSync(log, 'utf8').trimEnd()}\nnot json\n${JSON.stringify(create(account('b')))}\n`,
    );
    await expect((await openStore(dir)).read()).rejects.toThrow(`${log}:3:`);
  });

  it('compacts past the threshold, keeping state and version, and a follower re-reads the new file', async () => {
    const dir = tempDir();
    const writer = await openStore(dir, { compactAfterLines: 10 });
    const follower = await openStore(dir);
    const a = account('acme');
    await writer.change(create(a));
    for (let i = 0; i < 5; i++) await writer.change({ op: 'key.create', key: key(a.id) });
    expect((await follower.read()).keys).toHaveLength(5);
    const inode = statSync(join(dir, LOG_FILE)).ino;
    for (let i = 0; i < 6; i++) await writer.change({ op: 'key.create', key: key(a.id) });
    const log = readFileSync(join(dir, LOG_FILE), 'utf8').trimEnd().split('\n');
    expect(log.length).toBeLessThan(10);
    expect(statSync(join(dir, LOG_FILE)).ino).not.toBe(inode);
    const expected = await writer.read();
    expect(expected.version).toBe(12);
    expect(expected.keys).toHaveLength(11);
    expect(await follower.read()).toEqual(expected);
    expect(await (await openStore(dir)).read()).toEqual(expected);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('notices a log rewritten in place (same inode, a new first line)', async () => {
    const dir = tempDir();
    const a = await openStore(dir);
    const b = await openStore(dir);
    const acct = account('acme');
    await a.change(create(acct));
    await a.compact();
    await a.change({ op: 'account.plan', account_id: acct.id, plan: 'pro' });
    expect((await b.read()).accounts[0].plan).toBe('pro');
    // As if the file system reused the inode for the next compaction's file.
    const log = join(dir, LOG_FILE);
    const size = statSync(log).size;
    const state = { version: 10, accounts: [{ ...acct, plan: 'developer' }], keys: [] };
    const snap = { op: 'snapshot', format: 1, id: 'f'.repeat(size), at: new Date().toISOString(), state };
    writeFileSync(log, `${JSON.stringify(snap)}\n`);
    const got = await b.read();
    expect(got.version).toBe(10);
    expect(got.accounts[0].plan).toBe('developer');
  });

  it('serialises concurrent changes from two instances: every line whole, the lock let go', async () => {
    const dir = tempDir();
    const a = await openStore(dir);
    const b = await openStore(dir);
    await a.change(create(account('acme')));
    const names = Array.from({ length: 40 }, (_, i) => `n${i}`);
    await Promise.all(names.map((n, i) => (i % 2 === 0 ? a : b).change(create(account(n)))));
    const state = await a.read();
    expect(state.version).toBe(41);
    expect(state.accounts.map((x) => x.name).sort()).toEqual(['acme', ...names].sort());
    // Every line is whole: no two appends interleaved.
    for (const line of readFileSync(join(dir, LOG_FILE), 'utf8').trimEnd().split('\n')) JSON.parse(line);
    expect(existsSync(join(dir, 'access.lock'))).toBe(false);
  });

  it('takes over a lock left by a dead process and waits for a live one', async () => {
    const dir = tempDir();
    const lock = join(dir, 'access.lock');
    writeFileSync(
      lock,
      JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), at: new Date().toISOString() }),
    );
    const s = await openStore(dir, { lockTimeoutMs: 300 });
    await s.change(create(account('acme')));
    expect(existsSync(lock)).toBe(false);

    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
    await expect(s.change(create(account('bravo')))).rejects.toThrow(/is held/);
    writeFileSync(
      lock,
      JSON.stringify({ pid: process.pid, host: hostname(), at: '2000-01-01T00:00:00.000Z' }),
    );
    await s.change(create(account('bravo')));
    expect((await s.read()).accounts).toHaveLength(2);
  });

  it('writes and reads monthly usage atomically, merging accounts', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    expect(await s.readUsage('2026-03')).toEqual(new Map());
    await s.writeUsage('2026-03', new Map([['acct_a', 5]]));
    await s.writeUsage('2026-03', new Map([['acct_b', 7]]));
    await s.writeUsage('2026-03', new Map([['acct_a', 9]]));
    expect(await s.readUsage('2026-03')).toEqual(
      new Map([
        ['acct_a', 9],
        ['acct_b', 7],
      ]),
    );
    expect(JSON.parse(readFileSync(join(dir, 'usage-2026-03.json'), 'utf8'))).toEqual({
      acct_a: 9,
      acct_b: 7,
    });
    expect(await (await openStore(dir)).readUsage('2026-04')).toEqual(new Map());
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.writeUsage('2026-05', new Map([[`acct_${i}`, i]]))),
    );
    expect((await s.readUsage('2026-05')).size).toBe(20);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await expect(s.readUsage('../x')).rejects.toThrow(/YYYY-MM/);
    await expect(s.writeUsage('2026-05', new Map([['acct_a', -1]]))).rejects.toThrow(/whole number/);
  });

  it('keeps daily counts in one file per month, and removes a month once all its days are more than 400 days old', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    const one = (day: string) => new Map([[day, new Map([['key_a', [1, 0] as const]])]]);
    await s.addDaily(one('2025-09-30'));
    await s.addDaily(one('2025-10-01'));
    const months = () =>
      readdirSync(dir)
        .filter((n) => n.startsWith('daily-'))
        .sort();
    expect(months()).toEqual(['daily-2025-09.json', 'daily-2025-10.json']);
    expect(JSON.parse(readFileSync(join(dir, 'daily-2025-09.json'), 'utf8'))).toEqual({
      '2025-09-30': { key_a: [1, 0] },
    });
    // 400 days before 2026-11-04 is 2025-09-30: September is still needed.
    await s.addDaily(one('2026-11-04'));
    expect(months()).toEqual(['daily-2025-09.json', 'daily-2025-10.json', 'daily-2026-11.json']);
    // 400 days before 2026-11-05 is 2025-10-01: September goes, October stays.
    await s.addDaily(one('2026-11-05'));
    expect(months()).toEqual(['daily-2025-10.json', 'daily-2026-11.json']);
    expect([...(await s.readDaily('2025-10-01', '2026-11-05')).keys()]).toEqual([
      '2025-10-01',
      '2026-11-04',
      '2026-11-05',
    ]);
  });

  it('refuses a daily file an editor broke, naming it, and adds nothing to it', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    const path = join(dir, 'daily-2026-11.json');
    writeFileSync(path, '{"2026-11-23": {"key_a": [1]}}', { mode: 0o600 });
    await expect(s.readDaily('2026-11-01', '2026-11-30')).rejects.toThrow(`${path}: the count of key_a`);
    await expect(
      s.addDaily(new Map([['2026-11-23', new Map([['key_a', [1, 0] as const]])]])),
    ).rejects.toThrow(path);
    expect(readFileSync(path, 'utf8')).toBe('{"2026-11-23": {"key_a": [1]}}');
  });
});

describe("the embedded store's secrets, counters and audit log", () => {
  const id = (n: number) => n.toString(16).padStart(64, '0');

  it('never waits for the access log lock: sign-ins go on while an admin change holds it', async () => {
    const dir = tempDir();
    const s = await openStore(dir, { lockTimeoutMs: 2000 });
    await s.change(create(account('acme')));
    // A live holder (this process) that never lets go: change() would wait its full timeout.
    writeFileSync(
      join(dir, 'access.lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }),
    );
    const t0 = Date.now();
    await s.putSecret('session', id(1), 'x', 60_000);
    expect(await s.getSecret('session', id(1))).toBe('x');
    expect(await s.takeSecret('session', id(1))).toBe('x');
    expect(await s.throttle('signin:a@b.c', 10, 60_000, Date.now())).toBe(0);
    await s.audit({ at: new Date().toISOString(), actor: 'cli:ops', action: 'x', target: 'y', detail: '' });
    expect(await s.readAudit(1)).toHaveLength(1);
    expect(Date.now() - t0).toBeLessThan(1000);
    rmSync(join(dir, 'access.lock'));
  });

  it('keeps each secret in its own 600 file under a 700 secrets/ directory, and nothing in the log', async () => {
    const dir = tempDir();
    const old = process.umask(0);
    try {
      const s = await openStore(dir);
      await s.putSecret('verify', id(2), '{"person":"user_1"}', 60_000);
      await s.throttle('signin:a@b.c', 10, 60_000, Date.now());
      await s.audit({ at: new Date().toISOString(), actor: 'cli:ops', action: 'x', target: 'y', detail: '' });
      for (const sub of ['secrets', 'throttle']) {
        expect(statSync(join(dir, sub)).mode & 0o777, sub).toBe(0o700);
        for (const n of readdirSync(join(dir, sub)))
          expect(statSync(join(dir, sub, n)).mode & 0o777, n).toBe(0o600);
      }
      expect(readdirSync(join(dir, 'secrets'))).toEqual([`verify-${id(2)}`]);
      expect(statSync(join(dir, 'audit.log')).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, LOG_FILE), 'utf8')).not.toContain(id(2));
      // The store opens again as it is (store-perms.ts accepts the new layout).
      await openStore(dir);
    } finally {
      process.umask(old);
    }
  });

  it('refuses a store whose secrets/ directory others can write to (they could forge a session)', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    await s.putSecret('session', id(3), 'x', 60_000);
    chmodSync(join(dir, 'secrets'), 0o777);
    await expect(FileAccessStore.open(dir)).rejects.toThrow(/secrets is writable by group and others/);
    chmodSync(join(dir, 'secrets'), 0o700);
  });

  it('makes secrets/ and throttle/ again when an operator removed them while the store was open', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    await s.putSecret('session', id(6), 'a', 60_000);
    await s.throttle('signin:a@b.c', 1, 60_000, Date.now());
    rmSync(join(dir, 'secrets'), { recursive: true });
    rmSync(join(dir, 'throttle'), { recursive: true });
    expect(await s.getSecret('session', id(6))).toBeNull();
    await s.putSecret('session', id(7), 'b', 60_000);
    expect(await s.getSecret('session', id(7))).toBe('b');
    // Its attempts went with the directory: the limit of one admits again.
    expect(await s.throttle('signin:a@b.c', 1, 60_000, Date.now())).toBe(0);
    expect(statSync(join(dir, 'secrets')).mode & 0o777).toBe(0o700);
  });

  it('rejects an id that is not a hash (no path can be named through it)', async () => {
    const s = await openStore(tempDir());
    for (const bad of ['../../access.log', 'short', `${id(1)}/x`])
      await expect(s.putSecret('session', bad, 'x', 1000)).rejects.toThrow(/a secret id must be/);
    await expect(s.getSecret('nope' as 'session', id(1))).rejects.toThrow(/secret kind must be/);
  });

  it('a sweep removes expired secrets and the files of periods no window reaches, and keeps live ones', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    await s.putSecret('session', id(4), 'live', 60_000);
    await s.putSecret('session', id(5), 'old', 60_000);
    // Expired long ago, as the file's mtime (its expiry) says.
    utimesSync(join(dir, 'secrets', `session-${id(5)}`), 1000, 1000);
    await s.throttle('signin:x', 10, 60_000, Date.now());
    // A fixed window's file of an older version, and a period that ended over a window ago.
    writeFileSync(join(dir, 'throttle', `${'a'.repeat(40)}-1000`), '...');
    writeFileSync(join(dir, 'throttle', `${'b'.repeat(40)}-60000-${Date.now() - 61_000}`), '1\n');
    await new FileSecrets(dir).sweep();
    expect(readdirSync(join(dir, 'secrets'))).toEqual([`session-${id(4)}`]);
    expect(readdirSync(join(dir, 'throttle'))).toHaveLength(1);
    expect(await s.getSecret('session', id(4))).toBe('live');
  });

  it('reads the newest audit entries from the end of a long log, skipping a torn or edited line', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    const entry = (i: number) => ({
      at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      actor: 'cli:ops',
      action: 'account.plan',
      target: `acct_${String(i).padStart(12, '0')}`,
      detail: `${'é'.repeat(i % 50)} ${i}`,
    });
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify(entry(i)));
    lines.splice(1500, 0, 'not json');
    writeFileSync(join(dir, 'audit.log'), `${lines.join('\n')}\n{"at":"2026`);
    const got = await s.readAudit(2000);
    expect(got).toHaveLength(2000);
    expect(got[0]).toEqual(entry(2999));
    expect(got[1999]).toEqual(entry(1000));
    expect((await s.readAudit(5000)).map((e) => e.target)).toEqual(
      Array.from({ length: 3000 }, (_, i) => entry(2999 - i).target),
    );
  });
});

describe('a store private to its owner whatever the umask', () => {
  it('under umask 000 every file the store writes is 600 and its directory 700: log, marker, lock, usage, plans, burst, cut bytes, serve lock', async () => {
    const parent = tempDir();
    const dir = join(parent, 'store');
    const old = process.umask(0);
    try {
      const s = await openStore(dir);
      const a = account('acme');
      await s.change(create(a));
      await s.writeUsage('2026-01', new Map([[a.id, 3]]));
      await s.addDaily(new Map([['2026-01-05', new Map([['key_a', [1, 0] as const]])]]));
      await s.writePlans({
        free: { burst: 1, monthly: 2 },
        pro: { burst: 1, monthly: 2 },
        business: { burst: 1, monthly: 2 },
      } as Parameters<typeof s.writePlans>[0]);
      await writeBurst(dir, new Map([[a.id, 1]]));
      appendFileSync(join(dir, LOG_FILE), '{"op":"acc');
      await s.change(create(account('bravo')));
      const release = await claimStore(dir);
      const names = readdirSync(dir);
      expect(names).toEqual(
        expect.arrayContaining([
          LOG_FILE,
          MARKER_FILE,
          'usage-2026-01.json',
          'daily-2026-01.json',
          'plans.json',
          'burst.json',
          'serve.lock',
        ]),
      );
      expect(names.some((n) => n.startsWith(`${LOG_FILE}.cut-`))).toBe(true);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      for (const n of names) expect(statSync(join(dir, n)).mode & 0o777, n).toBe(0o600);
      await release();
    } finally {
      process.umask(old);
    }
  });

  it('a log readable by others (a store made under umask 022 before) is made 600 on open, and said so', async () => {
    const dir = tempDir();
    await openStore(dir);
    chmodSync(join(dir, LOG_FILE), 0o644);
    chmodSync(dir, 0o755);
    const warnings: string[] = [];
    await openStore(dir, { warn: (m) => warnings.push(m) });
    expect(statSync(join(dir, LOG_FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(warnings).toEqual([expect.stringContaining(join(dir, LOG_FILE))]);
  });

  it('a log made writable by others while a reader follows it is no longer read', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    await s.change(create(account('acme')));
    chmodSync(join(dir, LOG_FILE), 0o666);
    await expect(s.read()).rejects.toThrow(/is writable by group and others \(mode 666\)/);
  });
});
