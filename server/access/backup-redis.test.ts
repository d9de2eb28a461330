import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backupRedisStore, type DumpedKey, REDIS_BACKUP_FILE, restoreRedisStore } from './backup-redis.js';
import { gcraKey } from './limiter-redis.js';
import { type RedisServer, startRedis } from './redis-server.test-helper.js';
import { account, create, key } from './store.contract.js';
import { hitKey, LOG_KEY, RedisAccessStore, secretKey, usageKey, VERSION_KEY } from './store-redis.js';

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

/** Two accounts with keys, this month's usage, a burst bucket with its TTL, a day of key counts, plans, audit, a session and an attempt counter. */
async function fill(url: string) {
  const s = await store(url);
  const a = account('acme', 'pro');
  const b = account('globex');
  const ka = key(a.id);
  for (const c of [create(a), create(b), { op: 'key.create', key: ka } as const]) await s.change(c);
  await s.addDaily(new Map([['2026-11-23', new Map([[ka.id, [20, 2] as const]])]]));
  await s.writePlans({
    free: { burst: 1, monthly: 2 },
    developer: { burst: 3, monthly: 4 },
    pro: { burst: 5, monthly: 6 },
    business: { burst: 7, monthly: 8 },
  });
  await s.audit({
    at: '2026-11-23T10:00:00.000Z',
    actor: 'cli:ops',
    action: 'account.plan',
    target: a.id,
    detail: 'pro',
  });
  await s.putSecret('session', 's'.repeat(32), '{"person":"x"}', 600_000);
  await s.hit('signin:someone@example.com', 600_000);
  await raw(url, async (c) => {
    await c.hSet(usageKey('2026-11'), { [a.id]: '20', [b.id]: '3' });
    await c.set(gcraKey(a.id), '123456789', { PX: 50_000 });
  });
  return { a, b, ka };
}

describe('store backup and restore, the Redis store', () => {
  it('a backup is every fr: key but sessions and attempt counters, with its type, value and time to live', async () => {
    const { a, ka } = await fill(source.url);
    const d = tempDir();
    const m = await backupRedisStore(source.url, join(d, 'b'));
    expect(m).toMatchObject({
      store: 'redis',
      from: source.url,
      version: 3,
      accounts: 2,
      keys: 1,
      usage: { '2026-11': 23 },
      daily: { days: 1, first: '2026-11-23', last: '2026-11-23', ok: 20, refused: 2 },
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
        'fr:daily:2026-11-23',
        gcraKey(a.id),
        'fr:plans',
        usageKey('2026-11'),
      ].sort(),
    );
    const byKey = new Map(keys.map((k) => [k.key, k]));
    expect(byKey.get(VERSION_KEY)).toMatchObject({ type: 'string', pttl: -1, value: '3' });
    expect(byKey.get(LOG_KEY)?.value).toHaveLength(3);
    expect(byKey.get('fr:daily:2026-11-23')).toMatchObject({
      type: 'hash',
      value: [
        [`${ka.id}:ok`, '20'],
        [`${ka.id}:refused`, '2'],
      ],
    });
    const gcra = byKey.get(gcraKey(a.id));
    expect(gcra?.pttl).toBeGreaterThan(40_000);
    expect(gcra?.pttl).toBeLessThanOrEqual(50_000);
  });

  it('a restore into an empty Redis gives every key back, with its time to live; the store reads as it was', async () => {
    const { a, b, ka } = await fill(source.url);
    const d = tempDir();
    await backupRedisStore(source.url, join(d, 'b'));
    const { replaced } = await restoreRedisStore(join(d, 'b'), target.url, { force: false });
    expect(replaced).toBe(0);
    const s = await store(target.url);
    const state = await s.read();
    expect(state.version).toBe(3);
    expect(state.keys.map((k) => k.hash)).toEqual([ka.hash]);
    expect(await s.readUsage('2026-11')).toEqual(
      new Map([
        [a.id, 20],
        [b.id, 3],
      ]),
    );
    expect((await s.readDaily('2026-11-23', '2026-11-23')).get('2026-11-23')).toEqual(
      new Map([[ka.id, [20, 2]]]),
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
      expect(await c.get(hitKey('signin:someone@example.com'))).toBe('1');
      // Nothing of the store it replaced: its account's burst bucket is gone.
      expect(await c.exists(gcraKey(other.a.id))).toBe(0);
    });
  });

  it('each backup taken while changes are appended holds a log and a version of one instant, and restores', async () => {
    const writer = await store(source.url);
    let writing = true;
    const writes = (async () => {
      try {
        for (let i = 0; i < 200; i++) {
          await writer.change(create(account(`a${i}`)));
          await new Promise((r) => setTimeout(r, 2));
        }
      } finally {
        writing = false;
      }
    })();
    const d = tempDir();
    const versions: number[] = [];
    for (let n = 0; writing; n++) {
      // backupRedisStore refuses a dump whose log and version differ.
      const m = await backupRedisStore(source.url, join(d, `b${n}`));
      await raw(target.url, (c) => c.flushAll());
      await restoreRedisStore(join(d, `b${n}`), target.url, { force: false });
      versions.push(m.version);
    }
    await writes;
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
