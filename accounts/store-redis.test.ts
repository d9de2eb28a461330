import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccessChangeError } from './changes.js';
import type { Account, KeyRecord } from './model.js';
import { AUDIT_KEY, dailyKey, LOG_KEY, secretKey, throttleKey, usageKey, VERSION_KEY } from './redis-keys.js';
import { type RedisServer, startRedis } from './redis-server.test-helper.js';
import { accessStoreContract } from './store.contract.js';
import { RedisAccessStore } from './store-redis.js';

let redis: RedisServer;
const open: RedisAccessStore[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function flush(): Promise<void> {
  const c = createClient({ url: redis.url });
  await c.connect();
  await c.flushAll();
  await c.close();
}

async function store(pollMs = 100): Promise<RedisAccessStore> {
  const s = new RedisAccessStore(redis.url, { pollMs });
  await s.connect();
  open.push(s);
  return s;
}

beforeEach(flush);
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const at = '2025-01-02T03:04:05.000Z';
const account = (id: string, name: string): Account => ({
  id,
  name,
  plan: 'free',
  status: 'active',
  created_at: at,
});
// The hash of a key record is 64 lower-case hex digits (model.ts isKeyRecord).
const hex = (seed: string): string => createHash('sha256').update(seed).digest('hex');
const key = (id: string, account_id: string, hash = hex(id)): KeyRecord => ({
  id,
  account_id,
  prefix: 'fr_live_AbCd',
  hash,
  created_at: at,
  revoked_at: null,
  expires_at: null,
});

accessStoreContract('Redis store', async () => () => store());

describe('RedisAccessStore', () => {
  it('keeps a day of per-key counts for more than 400 days from its last add, in one hash', async () => {
    const s = await store();
    await s.addDaily(new Map([['2026-11-23', new Map([['key_a', [2, 1] as const]])]]));
    const c = createClient({ url: redis.url });
    await c.connect();
    try {
      expect(await c.hGetAll(dailyKey('2026-11-23'))).toEqual({ 'key_a:ok': '2', 'key_a:refused': '1' });
      const ttl = await c.ttl(dailyKey('2026-11-23'));
      expect(ttl).toBeGreaterThan(400 * 86400);
      expect(ttl).toBeLessThanOrEqual(402 * 86400);
    } finally {
      await c.close();
    }
  });

  it('refuses invalid changes and leaves the log as it was', async () => {
    const s = await store();
    await s.change({ op: 'account.create', account: account('acct_1', 'alice') });
    await s.change({ op: 'key.create', key: key('key_1', 'acct_1') });
    const bad = [
      { op: 'account.create', account: account('acct_2', 'alice') },
      { op: 'account.create', account: account('acct_1', 'bob') },
      { op: 'account.plan', account_id: 'acct_9', plan: 'pro' },
      { op: 'account.status', account_id: 'acct_9', status: 'active' },
      { op: 'key.create', key: key('key_2', 'acct_9') },
      { op: 'key.create', key: key('key_1', 'acct_1', hex('other')) },
      { op: 'key.create', key: key('key_3', 'acct_1', hex('key_1')) },
      { op: 'key.revoke', key_id: 'key_9', at },
      { op: 'key.expire', key_id: 'key_9', at },
    ] as const;
    for (const c of bad) await expect(s.change(c)).rejects.toBeInstanceOf(AccessChangeError);
    const c = createClient({ url: redis.url });
    await c.connect();
    expect(await c.lLen(LOG_KEY)).toBe(2);
    expect(await c.get(VERSION_KEY)).toBe('2');
    await c.close();
  });

  it('reads only the entries added since its cached version', async () => {
    const a = await store();
    const b = await store();
    await a.change({ op: 'account.create', account: account('acct_1', 'alice') });
    await a.change({ op: 'account.plan', account_id: 'acct_1', plan: 'pro' });
    expect((await b.read()).version).toBe(2);
    // Tamper with an early entry b has already applied: if b re-read it, it would show up.
    const c = createClient({ url: redis.url });
    await c.connect();
    await c.lSet(LOG_KEY, 0, JSON.stringify({ op: 'account.create', account: account('acct_1', 'mallory') }));
    await c.close();
    await a.change({ op: 'account.plan', account_id: 'acct_1', plan: 'business' });
    const st = await b.read();
    expect(st.version).toBe(3);
    expect(st.accounts).toEqual([{ ...account('acct_1', 'alice'), plan: 'business' }]);
    // Reading again at the same version changes nothing.
    expect(await b.read()).toBe(st);
  });

  it('replays from scratch when the log was flushed', async () => {
    const s = await store();
    await s.change({ op: 'account.create', account: account('acct_1', 'alice') });
    expect((await s.read()).version).toBe(1);
    await flush();
    expect(await s.read()).toEqual({ version: 0, accounts: [], keys: [], people: [], requests: [] });
  });

  it('replays from scratch when the log is another history at least as long (backups restored), never mixing two', async () => {
    const reader = await store();
    const writer = await store();
    const c = createClient({ url: redis.url });
    await c.connect();
    const backup = async () => ({ log: await c.lRange(LOG_KEY, 0, -1), version: await c.get(VERSION_KEY) });
    const restore = async (b: { log: string[]; version: string | null }) => {
      await c.del([LOG_KEY, VERSION_KEY]);
      if (b.log.length > 0) await c.rPush(LOG_KEY, b.log);
      if (b.version !== null) await c.set(VERSION_KEY, b.version);
    };
    try {
      await writer.change({ op: 'account.create', account: account('acct_1', 'alice') });
      await writer.change({ op: 'key.create', key: key('key_1', 'acct_1') });
      await writer.change({ op: 'key.create', key: key('key_2', 'acct_1') });
      const older = await backup();
      await writer.change({ op: 'key.revoke', key_id: 'key_2', at });
      await writer.change({ op: 'account.plan', account_id: 'acct_1', plan: 'business' });
      const newer = await backup();
      const truth = await reader.read();
      expect(truth.version).toBe(5);

      // The wrong backup, one change made on it, then the right backup again.
      await restore(older);
      expect((await reader.read()).version).toBe(3);
      await writer.change({ op: 'account.plan', account_id: 'acct_1', plan: 'developer' });
      expect((await reader.read()).version).toBe(4);
      await restore(newer);
      expect(await reader.read()).toEqual(truth);
      expect((await reader.read()).keys.find((k) => k.id === 'key_2')?.revoked_at).toBe(at);

      // Another history whose last entry is the same change as the cached one's: a
      // backup restored, a key revoked on it, and the plan change made again.
      const base = await backup();
      await writer.change({ op: 'key.create', key: key('key_3', 'acct_1') });
      await writer.change({ op: 'account.plan', account_id: 'acct_1', plan: 'pro' });
      expect((await reader.read()).keys.map((k) => k.id)).toContain('key_3');
      await restore(base);
      await writer.change({ op: 'key.revoke', key_id: 'key_1', at });
      await writer.change({ op: 'account.plan', account_id: 'acct_1', plan: 'pro' });
      const swapped = await reader.read();
      expect(swapped.keys.map((k) => k.id)).not.toContain('key_3');
      expect(swapped.keys.find((k) => k.id === 'key_1')?.revoked_at).toBe(at);

      // Flushed, then a new history as long as the one cached: that history, alone.
      await c.flushAll();
      for (let i = 0; i < 5; i++)
        await writer.change({ op: 'account.create', account: account(`acct_n${i}`, `new${i}`) });
      const now = await reader.read();
      expect(now.version).toBe(5);
      expect(now.accounts.map((a) => a.name)).toEqual(['new0', 'new1', 'new2', 'new3', 'new4']);
      expect(now.keys).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("tells subscribers about another process's changes within a second through pub/sub, not the poll", async () => {
    const a = await store();
    // A poll too slow to matter: only pub/sub can deliver within the second.
    const b = await store(60_000);
    await b.read();
    let calls = 0;
    const seen = new Promise<number>((resolve) => {
      const t0 = Date.now();
      b.subscribe(() => {
        calls++;
        resolve(Date.now() - t0);
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    await a.change({ op: 'account.create', account: account('acct_1', 'alice') });
    expect(await seen).toBeLessThan(1000);
    expect((await b.read()).accounts.map((x) => x.name)).toEqual(['alice']);
    await a.change({ op: 'account.create', account: account('acct_2', 'bob') });
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(2);
  });

  it('notices changes through the poll when pub/sub is lost', async () => {
    const a = await store();
    const b = await store();
    let calls = 0;
    const unsubscribe = b.subscribe(() => {
      calls++;
    });
    await new Promise((r) => setTimeout(r, 100));
    // Append without publishing, as if the message had been lost.
    const c = createClient({ url: redis.url });
    await c.connect();
    await c.rPush(LOG_KEY, JSON.stringify({ op: 'account.create', account: account('acct_1', 'alice') }));
    await c.incr(VERSION_KEY);
    await c.close();
    const t0 = Date.now();
    while (calls === 0 && Date.now() - t0 < 1000) await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    unsubscribe();
    await a.change({ op: 'account.create', account: account('acct_2', 'bob') });
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toBe(1);
  });

  it('reads usage from the month hash and leaves writeUsage to the limiter', async () => {
    const s = await store();
    const c = createClient({ url: redis.url });
    await c.connect();
    await c.hSet(usageKey('2025-03'), { acct_1: '7', acct_2: '250' });
    await c.close();
    expect(await s.readUsage('2025-03')).toEqual(
      new Map([
        ['acct_1', 7],
        ['acct_2', 250],
      ]),
    );
    expect(await s.readUsage('2025-04')).toEqual(new Map());
    await s.writeUsage('2025-03', new Map([['acct_1', 1]]));
    expect((await s.readUsage('2025-03')).get('acct_1')).toBe(7);
  });

  it('reads a month of many accounts whole, in steps (every field once, every count right)', async () => {
    const s = await store();
    const c = createClient({ url: redis.url });
    await c.connect();
    const counts = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`acct_${i}`, String(i % 997)]));
    await c.hSet(usageKey('2025-03'), counts);
    await c.close();
    const m = await s.readUsage('2025-03');
    expect(m.size).toBe(5000);
    for (let i = 0; i < 5000; i += 499) expect(m.get(`acct_${i}`)).toBe(i % 997);
  });

  it('keeps a secret as fr:secret:<kind>:<id> with its TTL, the attempts of a throttle for one window, and at most 100,000 audit entries', async () => {
    const s = await store();
    const c = createClient({ url: redis.url });
    await c.connect();
    try {
      const id = hex('session-1');
      await s.putSecret('session', id, 'v', 60_000);
      const ttl = await c.pTTL(secretKey('session', id));
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);

      const t0 = Date.now();
      expect(await s.throttle('signin:a@b.c', 5, 30_000, t0)).toBe(0);
      expect(await c.pTTL(throttleKey('signin:a@b.c'))).toBeGreaterThan(25_000);
      // A set that lost its expiry (PERSIST by hand) gets one at the next attempt.
      await c.persist(throttleKey('signin:a@b.c'));
      expect(await s.throttle('signin:a@b.c', 5, 30_000, t0 + 1)).toBe(0);
      expect(await c.pTTL(throttleKey('signin:a@b.c'))).toBeGreaterThan(25_000);
      expect(await c.zCard(throttleKey('signin:a@b.c'))).toBe(2);

      await c.rPush(
        AUDIT_KEY,
        Array.from({ length: 100_000 }, (_, i) => `{"old":${i}}`),
      );
      await s.audit({ at: at, actor: 'cli:ops', action: 'account.plan', target: 'acct_1', detail: '' });
      expect(await c.lLen(AUDIT_KEY)).toBe(100_000);
      // The old lines are not entries: skipped, not a crash.
      expect(await s.readAudit(3)).toEqual([
        { at, actor: 'cli:ops', action: 'account.plan', target: 'acct_1', detail: '' },
      ]);
    } finally {
      await c.close();
    }
  });

  it('fails fast with a clear message when Redis is not there', async () => {
    const s = new RedisAccessStore('redis://127.0.0.1:1');
    await expect(s.connect()).rejects.toThrow(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    await s.close();
  });
});
