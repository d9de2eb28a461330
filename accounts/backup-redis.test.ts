import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { gcraKey } from '../server/access/limiter-redis.js';
import { backupRedisStore, type DumpedKey, REDIS_BACKUP_FILE, restoreRedisStore } from './backup-redis.js';
import { LOG_KEY, secretKey, throttleKey, usageKey, VERSION_KEY } from './redis-keys.js';
import { type RedisServer, startRedis } from './redis-server.test-helper.js';
import { createAccountsMeanwhile, fillForBackup } from './store.contract.js';
import { RedisAccessStore } from './store-redis.js';

let source: RedisServer;
let target: RedisServer;
const dirs: string[] = [];
const open: RedisAccessStore[] = [];

beforeAll(async () => {
  [source, target] = await Promise.all([startRedis(), startRedis()]);
});
afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Raw = ReturnType<typeof newClient>;
const newClient = (url: string) => createClient({ url });

async function raw<T>(url: string, f: (c: Raw) => Promise<T>): Promise<T> {
  const c = newClient(url);
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.close();
  }
}

beforeEach(async () => {
  await Promise.all([source, target].map((r) => raw(r.url, (c) => c.flushAll())));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'fr-backup-redis-'));
  dirs.push(d);
  return d;
}

async function store(url: string): Promise<RedisAccessStore> {
  const s = new RedisAccessStore(url, { pollMs: 100 });
  await s.connect();
  open.push(s);
  return s;
}

/** fillForBackup's store on `url`, with this month's counts (acme 20, globex 3) and acme's burst bucket (50 s to live). */
async function fill(url: string) {
  const made = await fillForBackup(await store(url));
  await raw(url, async (c) => {
    await c.hSet(usageKey('2026-11'), { [made.a.id]: '20', [made.b.id]: '3' });
    await c.set(gcraKey(made.a.id), '123456789', { PX: 50_000 });
  });
  return made;
}

describe('store backup and restore, the Redis store', () => {
  it('a backup is every fr: key but sessions and attempt counters, with its type, value and time to live', async () => {
    const { a, ka, kb } = await fill(source.url);
    const d = tempDir();
    const m = await backupRedisStore(source.url, join(d, 'b'));
    expect(m).toMatchObject({
      store: 'redis',
      from: source.url,
      version: 4,
      accounts: 2,
      keys: 2,
      usage: { '2026-11': 23 },
      daily: { days: 2, first: '2026-11-20', last: '2026-11-23', ok: 127, refused: 4 },
      audit: 1,
    });
    const keys = readFileSync(join(d, 'b', REDIS_BACKUP_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DumpedKey);
    expect(keys.map((k) => k.key)).toEqual(
      [
        LOG_KEY,
        VERSION_KEY,
        'fr:audit',
        'fr:daily:2026-11-20',
        'fr:daily:2026-11-23',
        gcraKey(a.id),
        'fr:plans',
        usageKey('2026-11'),
      ].sort(),
    );
    const byKey = new Map(keys.map((k) => [k.key, k]));
    expect(byKey.get(VERSION_KEY)).toMatchObject({ type: 'string', pttl: -1, value: '4' });
    expect(byKey.get(LOG_KEY)?.value).toHaveLength(4);
    const day = byKey.get('fr:daily:2026-11-23') as DumpedKey;
    expect(day.type).toBe('hash');
    expect((day.value as Array<[string, string]>).sort()).toEqual(
      [
        [`${ka.id}:ok`, '20'],
        [`${kb.id}:ok`, '7'],
        [`${kb.id}:refused`, '1'],
      ].sort(),
    );
    const gcra = byKey.get(gcraKey(a.id));
    expect(gcra?.pttl).toBeGreaterThan(40_000);
    expect(gcra?.pttl).toBeLessThanOrEqual(50_000);
  });

  it('a restore into an empty Redis gives every key back, with its time to live; the store reads as it was', async () => {
    const { a, b, ka, kb } = await fill(source.url);
    const d = tempDir();
    await backupRedisStore(source.url, join(d, 'b'));
    const { replaced } = await restoreRedisStore(join(d, 'b'), target.url, { force: false });
    expect(replaced).toBe(0);
    const s = await store(target.url);
    const state = await s.read();
    expect(state.version).toBe(4);
    expect(state.keys.map((k) => k.hash)).toEqual([ka.hash, kb.hash]);
    expect(await s.readUsage('2026-11')).toEqual(
      new Map([
        [a.id, 20],
        [b.id, 3],
      ]),
    );
    expect((await s.readDaily('2026-11-23', '2026-11-23')).get('2026-11-23')).toEqual(
      new Map([
        [ka.id, [20, 0]],
        [kb.id, [7, 1]],
      ]),
    );
    expect(await s.readAudit(10)).toHaveLength(1);
    expect(await s.readPlans()).toMatchObject({ pro: { burst: 5, monthly: 6 } });
    expect(await s.getSecret('session', 's'.repeat(32))).toBeNull();
    await raw(target.url, async (c) => {
      expect(await c.get(gcraKey(a.id))).toBe('123456789');
      const ttl = await c.pTTL(gcraKey(a.id));
      expect(ttl).toBeGreaterThan(30_000);
      expect(ttl).toBeLessThanOrEqual(50_000);
      expect(await c.pTTL('fr:daily:2026-11-23')).toBeGreaterThan(400 * 86_400_000);
      expect(await c.pTTL(usageKey('2026-11'))).toBe(-1);
    });
  });

  it('is refused while a server follows the store, and into a Redis that holds one unless forced (then sessions go, attempt counters stay)', async () => {
    await fill(source.url);
    const d = tempDir();
    const m = await backupRedisStore(source.url, join(d, 'b'));
    const other = await fill(target.url);
    await store(target.url).then((s) =>
      s.change({ op: 'account.plan', account_id: other.b.id, plan: 'business' }),
    );
    const before = await raw(target.url, (c) => c.lRange(LOG_KEY, 0, -1));
    // A server subscribes to the store's changes for as long as it runs.
    const server = await store(target.url);
    const unsubscribe = server.subscribe(() => {});
    await new Promise((r) => setTimeout(r, 200));
    await expect(restoreRedisStore(join(d, 'b'), target.url, { force: true })).rejects.toThrow(
      /1 server connection\(s\) follow the store at .* \(subscribed to fr:access:changed\): stop every server/,
    );
    unsubscribe();
    await new Promise((r) => setTimeout(r, 200));
    await expect(restoreRedisStore(join(d, 'b'), target.url, { force: false })).rejects.toThrow(
      /holds a store already \(\d+ fr: keys, e\.g\. .*\): a restore replaces them all\. Add --force/,
    );
    expect(await raw(target.url, (c) => c.lRange(LOG_KEY, 0, -1))).toEqual(before);
    const r = await restoreRedisStore(join(d, 'b'), target.url, { force: true });
    expect(r.replaced).toBeGreaterThan(5);
    expect((await (await store(target.url)).read()).version).toBe(m.version);
    await raw(target.url, async (c) => {
      expect(await c.exists(secretKey('session', 's'.repeat(32)))).toBe(0);
      expect(await c.zCard(throttleKey('signin:someone@example.com'))).toBe(1);
      // Nothing of the store it replaced: its account's burst bucket is gone.
      expect(await c.exists(gcraKey(other.a.id))).toBe(0);
    });
  });

  it('each backup taken while changes are appended holds a log and a version of one instant, and restores', async () => {
    const writer = await store(source.url);
    const writes = createAccountsMeanwhile(writer, 200, 2);
    const d = tempDir();
    const versions: number[] = [];
    for (let n = 0; writes.writing(); n++) {
      // backupRedisStore refuses a dump whose log and version differ.
      const m = await backupRedisStore(source.url, join(d, `b${n}`));
      await raw(target.url, (c) => c.flushAll());
      await restoreRedisStore(join(d, `b${n}`), target.url, { force: false });
      versions.push(m.version);
    }
    await writes.done;
    expect(versions.filter((v) => v > 0 && v < 200).length).toBeGreaterThan(2);
  });

  it('a backup changed since it was made, or of the other store, is refused before Redis is touched', async () => {
    await fill(source.url);
    const d = tempDir();
    await backupRedisStore(source.url, join(d, 'b'));
    await expect(restoreRedisStore(join(d, 'missing'), target.url, { force: false })).rejects.toThrow(
      /is not a backup/,
    );
    const path = join(d, 'b', REDIS_BACKUP_FILE);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"3"', '"4"'));
    await expect(restoreRedisStore(join(d, 'b'), target.url, { force: false })).rejects.toThrow(
      /redis\.jsonl does not match its manifest/,
    );
    expect(await raw(target.url, (c) => c.dbSize())).toBe(0);
    await expect(backupRedisStore(target.url, join(d, 'empty'))).rejects.toThrow(
      /no store at .*: nothing to back up/,
    );
  });
});
