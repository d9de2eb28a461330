import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Limiter, PlanLimits } from '../../accounts/model.js';
import { usageKey } from '../../accounts/redis-keys.js';
import { type RedisServer, startRedis } from '../../accounts/redis-server.test-helper.js';
import { decide, emissionUs, gcraStep, QUOTA_EXCEEDED, RATE_LIMITED } from './gcra.js';
import { limiterContract } from './limiter.contract.js';
import { LocalLimiter } from './limiter-local.js';
import { MemoryLimiter } from './limiter-memory.js';
import { gcraKey, RedisLimiter, type RedisLimiterOptions } from './limiter-redis.js';

const T0 = Date.UTC(2025, 2, 15, 12, 0, 0); // 2025-03-15T12:00:00Z
const alice = { id: 'acct_alice', slot: 0 };
const bob = { id: 'acct_bob', slot: 1 };

let redis: RedisServer;
const open: RedisLimiter[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const clientFor = (url: string) => createClient({ url });

async function withClient<T>(url: string, f: (c: ReturnType<typeof clientFor>) => Promise<T>): Promise<T> {
  const c = clientFor(url);
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.close();
  }
}

const usage = (url: string, month: string, id: string) =>
  withClient(url, async (c) => Number((await c.hGet(usageKey(month), id)) ?? 0));

async function limiter(url = redis.url, opts: RedisLimiterOptions = {}): Promise<RedisLimiter> {
  const l = new RedisLimiter(url, opts);
  await l.connect();
  open.push(l);
  return l;
}

beforeEach(() => withClient(redis.url, (c) => c.flushAll()));
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

describe('GCRA arithmetic', () => {
  it('allows exactly burst at one instant and refills burst/60 per second', () => {
    for (const burst of [1, 7, 70, 100, 250, 500, 999]) {
      let tat = 0;
      const now = 1_700_000_000_000_000;
      for (let i = 0; i < burst; i++) {
        tat = gcraStep(tat, now, burst);
        expect(tat).toBeGreaterThan(0);
      }
      expect(gcraStep(tat, now, burst)).toBe(-1);
      // One emission interval later exactly one more fits.
      const t = emissionUs(burst);
      expect(gcraStep(tat, now + t - 1, burst)).toBe(-1);
      expect(gcraStep(tat, now + t, burst)).toBeGreaterThan(0);
    }
  });

  it('reports headers and Retry-After from the GCRA state', () => {
    const limits = { burst: 100, monthly: 250 };
    const t = emissionUs(100); // 0.6 s
    expect(decide(0, 1, t, limits, 99)).toEqual({
      ok: true,
      refused: undefined,
      retryAfter: 0,
      burstRemaining: 99,
      burstReset: 1,
      quotaRemaining: 249,
      quotaReset: 99,
    });
    expect(decide(RATE_LIMITED, 10, 100 * t, limits, 99)).toMatchObject({
      ok: false,
      refused: 'rate-limited',
      retryAfter: 1,
      burstRemaining: 0,
      burstReset: 60,
    });
    expect(decide(QUOTA_EXCEEDED, 250, 0, limits, 99)).toMatchObject({
      ok: false,
      refused: 'quota-exceeded',
      retryAfter: 99,
      quotaRemaining: 0,
      burstRemaining: 100,
      burstReset: 0,
    });
  });
});

limiterContract('Redis', () => limiter());
limiterContract('in-process model of the Redis script (MemoryLimiter)', async () => new MemoryLimiter());

describe('RedisLimiter', () => {
  it("counts admitted requests, and only those, in the month's usage hash; the bucket key expires with the bucket", async () => {
    const l = await limiter();
    for (let i = 0; i < 7; i++) await l.admit(alice, { burst: 5, monthly: 1000 }, T0);
    expect(await usage(redis.url, '2025-03', alice.id)).toBe(5);
    const ttl = await withClient(redis.url, (c) => c.pTTL(gcraKey(alice.id)));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    const limits = { burst: 100, monthly: 3 };
    for (let i = 0; i < 5; i++) await l.admit(bob, limits, T0);
    await l.admit(bob, limits, Date.UTC(2025, 3, 1));
    expect(await usage(redis.url, '2025-03', bob.id)).toBe(3);
    expect(await usage(redis.url, '2025-04', bob.id)).toBe(1);
    // A plan with no burst counts nothing either.
    await l.admit({ id: 'acct_carol', slot: 2 }, { burst: 0, monthly: 10 }, T0);
    expect(await usage(redis.url, '2025-03', 'acct_carol')).toBe(0);
  });

  it('shares one limit exactly between two servers under concurrency', async () => {
    const [a, b] = await Promise.all([limiter(), limiter()]);
    const burst = { burst: 50, monthly: 1000 };
    const calls = Array.from({ length: 64 }, (_, i) => (i % 2 ? a : b).admit(alice, burst, T0));
    const ds = await Promise.all(calls);
    expect(ds.filter((d) => d.ok)).toHaveLength(50);
    expect(ds.filter((d) => d.refused === 'rate-limited')).toHaveLength(14);
    expect(new Set(ds.filter((d) => d.ok).map((d) => d.burstRemaining)).size).toBe(50);

    const quota = { burst: 500, monthly: 40 };
    const qs = await Promise.all(Array.from({ length: 64 }, (_, i) => (i % 2 ? a : b).admit(bob, quota, T0)));
    expect(qs.filter((d) => d.ok)).toHaveLength(40);
    expect(qs.filter((d) => d.refused === 'quota-exceeded')).toHaveLength(24);
    expect(await usage(redis.url, '2025-03', bob.id)).toBe(40);
  });

  it('decides as the in-process limiter does, step for step', async () => {
    const l = await limiter();
    const mem = new MemoryLimiter();
    // A deterministic pseudo-random walk over accounts, times and plans.
    let seed = 42;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const plans: PlanLimits[] = [
      { burst: 3, monthly: 40 },
      { burst: 7, monthly: 1000 },
      { burst: 70, monthly: 90 },
    ];
    let now = T0;
    for (let i = 0; i < 400; i++) {
      now += Math.floor(rand() * 4000);
      const account = rand() < 0.5 ? alice : bob;
      const limits = plans[account === alice ? 0 : Math.floor(rand() * 3)];
      const want = mem.admit(account, limits, now);
      expect(await l.admit(account, limits, now), `step ${i}`).toEqual(want);
    }
  });

  it('peek reports the standing an admit would start from, counts nothing, and agrees in all three limiters (C29)', async () => {
    const l = await limiter();
    const mem = new MemoryLimiter();
    const { limiter: local } = LocalLimiter.create(4);
    const limits: PlanLimits = { burst: 5, monthly: 9 };
    let now = T0;
    for (let i = 0; i < 30; i++) {
      now += (i % 7) * 700;
      const before = mem.peek(alice, limits, now);
      expect(await l.peek(alice, limits, now), `step ${i}`).toEqual(before);
      const loc = local.peek(alice, limits, now);
      expect([loc.burstRemaining, loc.quotaRemaining, loc.quotaReset], `step ${i}`).toEqual([
        before.burstRemaining,
        before.quotaRemaining,
        before.quotaReset,
      ]);
      // Peeking twice changes nothing.
      expect(await l.peek(alice, limits, now)).toEqual(before);
      const d = mem.admit(alice, limits, now);
      expect(await l.admit(alice, limits, now)).toEqual(d);
      local.admit(alice, limits, now);
      if (d.ok) expect(d.quotaRemaining).toBe(before.quotaRemaining - 1);
    }
  });

  it('keeps admitting through a fallback during an outage and reconciles counts afterwards', async () => {
    const own = await startRedis();
    try {
      const logs: Array<[string, string]> = [];
      let fallbackCalls = 0;
      const fake: Limiter = {
        admit: (_a, limits) => {
          fallbackCalls++;
          return {
            ok: true,
            retryAfter: 0,
            burstRemaining: limits.burst - 1,
            burstReset: 1,
            quotaRemaining: limits.monthly,
            quotaReset: 1,
          };
        },
        peek: (_a, limits) => ({
          ok: true,
          retryAfter: 0,
          burstRemaining: limits.burst,
          burstReset: 0,
          quotaRemaining: limits.monthly,
          quotaReset: 1,
        }),
      };
      const l = await limiter(own.url, { fallback: fake, log: (level, msg) => logs.push([level, msg]) });
      const limits = { burst: 100, monthly: 10 };
      for (let i = 0; i < 3; i++) expect((await l.admit(alice, limits, T0)).ok).toBe(true);
      expect(fallbackCalls).toBe(0);

      await own.stop({ crash: true });
      const during = [];
      for (let i = 0; i < 8; i++) during.push(await l.admit(alice, limits, T0 + 1000));
      expect(l.degraded).toBe(true);
      // The fallback decides, bounded by the quota Redis last reported (3 of 10 used).
      expect(during.map((d) => d.ok)).toEqual([true, true, true, true, true, true, true, false]);
      expect(during.slice(0, 7).map((d) => d.quotaRemaining)).toEqual([6, 5, 4, 3, 2, 1, 0]);
      expect(during[7].refused).toBe('quota-exceeded');
      expect(fallbackCalls).toBe(7);
      expect((await l.admit(bob, limits, T0 + 1000)).ok).toBe(true);
      expect(logs.filter(([lvl]) => lvl === 'warn')).toHaveLength(1);

      // The same port again, empty (no persistence): only the local counts come back.
      const again = await startRedis({ port: own.port });
      try {
        const t0 = Date.now();
        while (l.degraded && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
        expect(l.degraded).toBe(false);
        expect(await usage(again.url, '2025-03', alice.id)).toBe(7);
        expect(await usage(again.url, '2025-03', bob.id)).toBe(1);
        expect(logs.map(([lvl]) => lvl)).toEqual(['warn', 'info']);
        // Back on Redis (the script is loaded again after the restart).
        const d = await l.admit(alice, limits, T0 + 2000);
        expect(d).toMatchObject({ ok: true, quotaRemaining: 2 });
        expect(fallbackCalls).toBe(8);
        expect(await usage(again.url, '2025-03', alice.id)).toBe(8);
      } finally {
        await again.stop();
      }
    } finally {
      await own.stop();
    }
  });

  it('during an outage the threads of one server share what is left of the quota, also a thread that never served the account', async () => {
    const own = await startRedis();
    try {
      // One server, two threads: one RedisLimiter each over one shared-memory fallback.
      const { limiter: mainView, shared } = LocalLimiter.create(16);
      const threadA = await limiter(own.url, { fallback: new LocalLimiter(shared) });
      const threadB = await limiter(own.url, { fallback: new LocalLimiter(shared) });
      const limits = { burst: 100_000, monthly: 30 };
      for (let i = 0; i < 25; i++) expect((await threadA.admit(alice, limits, T0)).ok).toBe(true);
      expect(mainView.used(alice.slot, T0)).toBe(25);

      await own.stop({ crash: true });
      const during = [];
      for (let i = 0; i < 20; i++) {
        during.push(await threadB.admit(alice, limits, T0 + 1000));
        during.push(await threadA.admit(alice, limits, T0 + 1000));
      }
      expect(threadA.degraded && threadB.degraded).toBe(true);
      // 5 left, not 30 for thread B and 5 for thread A.
      expect(during.filter((d) => d.ok)).toHaveLength(5);
      expect(during.filter((d) => d.refused === 'quota-exceeded')).toHaveLength(35);
      expect((await threadB.peek(alice, limits, T0 + 1000)).quotaRemaining).toBe(0);
    } finally {
      await own.stop();
    }
  });

  it('during an outage the fallback starts from the burst Redis last reported, not a full bucket (C27)', async () => {
    const own = await startRedis();
    try {
      const { limiter: mainView, shared } = LocalLimiter.create(16);
      const l = await limiter(own.url, { fallback: new LocalLimiter(shared) });
      const limits = { burst: 5, monthly: 1000 };
      const before = [];
      for (let i = 0; i < 6; i++) before.push(await l.admit(alice, limits, T0));
      expect(before.map((d) => d.ok)).toEqual([true, true, true, true, true, false]);
      // The shared slot now holds Redis's GCRA time: 5 intervals of 12 s ahead.
      expect(mainView.tat(alice.slot)).toBe(T0 + 60_000);

      await own.stop({ crash: true });
      const during = await l.admit(alice, limits, T0 + 300);
      expect(l.degraded).toBe(true);
      expect(during).toMatchObject({ ok: false, refused: 'rate-limited', retryAfter: 12 });
      // One interval later the bucket has one request again, as it would on Redis.
      expect((await l.admit(alice, limits, T0 + 12_000)).ok).toBe(true);
      expect((await l.admit(alice, limits, T0 + 12_000)).ok).toBe(false);
    } finally {
      await own.stop();
    }
  });

  it('falls back when Redis is slower than the timeout, then returns to it', async () => {
    const logs: string[] = [];
    const l = await limiter(redis.url, { timeoutMs: 50, log: (level) => logs.push(level) });
    const limits = { burst: 100, monthly: 1000 };
    expect((await l.admit(alice, limits, T0)).ok).toBe(true);
    // A script that keeps the single-threaded server busy for 400 ms.
    const busy = withClient(redis.url, (c) =>
      c.eval(
        `local s = redis.call('TIME')
         while true do
           local n = redis.call('TIME')
           if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 400000 then break end
         end
         return 1`,
      ),
    );
    await new Promise((r) => setTimeout(r, 50));
    const t = Date.now();
    const d = await l.admit(alice, limits, T0 + 1);
    expect(Date.now() - t).toBeLessThan(250);
    expect(d.ok).toBe(true);
    expect(l.degraded).toBe(true);
    await busy;
    const t0 = Date.now();
    while (l.degraded && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
    expect(l.degraded).toBe(false);
    expect(logs).toEqual(['warn', 'info']);
    // The request that timed out may or may not have reached Redis: 2 or 3, never fewer.
    expect(await usage(redis.url, '2025-03', alice.id)).toBeGreaterThanOrEqual(2);
  });

  it('reloads its script when Redis has lost it', async () => {
    const logs: string[] = [];
    const l = await limiter(redis.url, { log: (level) => logs.push(level) });
    await withClient(redis.url, (c) => c.scriptFlush());
    expect((await l.admit(alice, { burst: 5, monthly: 10 }, T0)).ok).toBe(true);
    expect(l.degraded).toBe(false);
    expect(logs).toEqual([]);
    expect(await usage(redis.url, '2025-03', alice.id)).toBe(1);
  });

  it('decides the requests of one turn in one call, in order, each seeing the ones before it', async () => {
    const l = await limiter();
    const limits = { burst: 5, monthly: 7 };
    const evalshaCalls = () =>
      withClient(redis.url, async (c) =>
        Number(/cmdstat_evalsha:calls=(\d+)/.exec(await c.info('commandstats'))?.[1] ?? 0),
      );
    const callsBefore = await evalshaCalls();
    const first = await Promise.all([
      ...Array.from({ length: 4 }, () => l.admit(alice, limits, T0)),
      l.admit(bob, limits, T0),
      ...Array.from({ length: 3 }, () => l.admit(alice, limits, T0)),
    ]);
    expect(first.map((d) => d.ok)).toEqual([true, true, true, true, true, true, false, false]);
    expect(first.map((d) => d.burstRemaining)).toEqual([4, 3, 2, 1, 4, 0, 0, 0]);
    expect(first[6]).toMatchObject({ refused: 'rate-limited', retryAfter: 12 });
    expect(await evalshaCalls()).toBe(callsBefore + 1);
    // The quota across turns: 5 of alice's 7 used; 20 s later two more, then quota-exceeded.
    const later = await Promise.all(Array.from({ length: 3 }, () => l.admit(alice, limits, T0 + 24_000)));
    expect(later.map((d) => [d.ok, d.refused, d.quotaRemaining])).toEqual([
      [true, undefined, 1],
      [true, undefined, 0],
      [false, 'quota-exceeded', 0],
    ]);
    expect(await usage(redis.url, '2025-03', alice.id)).toBe(7);
    expect(await usage(redis.url, '2025-03', bob.id)).toBe(1);
  });

  it('counts in Redis with a burst over 60 million a minute (limits lifted), never falling back', async () => {
    // A 0 µs interval made the script's SET … PX 0 an error after it had counted: every
    // request fell back to local counting and was counted twice.
    const logs: string[] = [];
    const l = await limiter(redis.url, { log: (_level, msg) => logs.push(msg) });
    const limits = { burst: 1e9, monthly: 1e9 };
    for (let i = 0; i < 5; i++) {
      const d = await l.admit(alice, limits, T0);
      expect(d.ok).toBe(true);
      // Whole figures (the bucket key expires 1 ms of real time after each step, so it may be full again).
      expect(d.burstRemaining).toBeGreaterThanOrEqual(1e9 - 5);
      expect(Number.isInteger(d.burstRemaining)).toBe(true);
    }
    expect(l.degraded).toBe(false);
    expect(logs).toEqual([]);
    expect(await usage(redis.url, '2025-03', alice.id)).toBe(5);
  });

  it('fails fast with a clear message when Redis is not there', async () => {
    const l = new RedisLimiter('redis://127.0.0.1:1');
    await expect(l.connect()).rejects.toThrow(/cannot reach Redis/);
    await l.close();
  });
});

describe('RedisLimiter after an outage', () => {
  /** A Redis of the test's own that `restart` brings back on its port; both stopped after `f`. */
  async function outage(f: (own: RedisServer, restart: () => Promise<RedisServer>) => Promise<void>) {
    const own = await startRedis();
    const again: RedisServer[] = [];
    try {
      await f(own, async () => {
        again.push(await startRedis({ port: own.port }));
        return again[0];
      });
    } finally {
      for (const r of again) await r.stop();
      await own.stop();
    }
  }

  const waitBack = async (...ls: RedisLimiter[]) => {
    const t0 = Date.now();
    while (ls.some((l) => l.degraded) && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
    expect(ls.map((l) => l.degraded)).toEqual(ls.map(() => false));
  };

  it('charges the burst in Redis with what each server granted alone: after recovery the servers refuse until it has refilled', async () => {
    await outage(async (own, restart) => {
      // Two servers, each with its own shared memory (its own fallback).
      const a = await limiter(own.url, { fallback: LocalLimiter.create(4).limiter });
      const b = await limiter(own.url, { fallback: LocalLimiter.create(4).limiter });
      const limits = { burst: 5, monthly: 1000 };
      const t = emissionUs(5) / 1000; // 12 s
      expect((await a.admit(alice, limits, T0)).ok).toBe(true);

      await own.stop({ crash: true });
      // Alone, each grants what its own bucket holds: 4 (a saw one taken) and 5.
      const during = [];
      for (let i = 0; i < 6; i++) {
        during.push(await a.admit(alice, limits, T0 + 1000));
        during.push(await b.admit(alice, limits, T0 + 1000));
      }
      expect(during.filter((d) => d.ok)).toHaveLength(9);

      const again = await restart();
      // As a persistent Redis would: it comes back with the bucket it had (one request taken).
      await withClient(again.url, (c) =>
        c.set(gcraKey(alice.id), String((T0 + t) * 1000), { PX: 3_600_000 }),
      );
      await waitBack(a, b);
      // The bucket now holds the 1 + 9 requests, as one shared bucket would have it:
      // TAT = max(T0 + 12 s, T0 + 1 s) + 9 × 12 s, so nothing fits until TAT - now <= 4 × 12 s.
      const gcra = await withClient(again.url, (c) => c.get(gcraKey(alice.id)));
      expect(Number(gcra)).toBe((T0 + 10 * t) * 1000);
      const opens = T0 + 10 * t - 4 * t;
      for (const l of [a, b]) {
        expect(await l.admit(alice, limits, T0 + 2000)).toMatchObject({ ok: false, refused: 'rate-limited' });
        expect((await l.admit(alice, limits, opens - 1)).ok).toBe(false);
      }
      expect((await b.admit(alice, limits, opens)).ok).toBe(true);
      expect((await a.admit(alice, limits, opens)).ok).toBe(false);
      // The counts are reconciled as before: 9 granted alone, then 1 (an empty Redis).
      expect(await usage(again.url, '2025-03', alice.id)).toBe(10);
    });
  });

  it('never moves a bucket back: a TAT further ahead than the local grants stays', async () => {
    await outage(async (own, restart) => {
      const a = await limiter(own.url, { fallback: LocalLimiter.create(4).limiter });
      const limits = { burst: 5, monthly: 1000 };
      expect((await a.admit(alice, limits, T0)).ok).toBe(true);
      await own.stop({ crash: true });
      expect((await a.admit(alice, limits, T0 + 1000)).ok).toBe(true);
      const again = await restart();
      // Another server charged this bucket far ahead meanwhile.
      const ahead = (T0 + 600_000) * 1000;
      await withClient(again.url, (c) => c.set(gcraKey(alice.id), String(ahead), { PX: 3_600_000 }));
      await waitBack(a);
      const gcra = await withClient(again.url, (c) => c.get(gcraKey(alice.id)));
      expect(Number(gcra)).toBe(ahead + emissionUs(5));
    });
  });

  it('the recovery log line counts accounts, not passes', async () => {
    await outage(async (own, restart) => {
      const logs: Array<[string, Record<string, unknown> | undefined]> = [];
      const l = await limiter(own.url, {
        fallback: LocalLimiter.create(4).limiter,
        log: (_level, msg, fields) => logs.push([msg, fields]),
      });
      const limits = { burst: 1e6, monthly: 1e9 };
      expect((await l.admit(alice, limits, T0)).ok).toBe(true);
      await own.stop({ crash: true });
      expect((await l.admit(alice, limits, T0)).ok).toBe(true);
      expect(l.degraded).toBe(true);
      // Two accounts keep asking, one turn at a time, while Redis comes back: passes
      // until nothing was left never ended under such load (each round trip let new
      // local grants in), and each pass added its accounts to the count.
      let local = 1;
      let stop = false;
      const load = (async () => {
        while (!stop) {
          const [x, y] = await Promise.all([l.admit(alice, limits, T0), l.admit(bob, limits, T0)]);
          if (!l.degraded) break;
          local += Number(x.ok) + Number(y.ok);
          await new Promise((r) => setImmediate(r));
        }
      })();
      await restart();
      await waitBack(l);
      stop = true;
      await load;
      const back = logs.find(([msg]) => msg.includes('reachable again'));
      expect(back?.[1]).toMatchObject({ accounts: 2 });
      const requests = back?.[1]?.requests as number;
      expect(requests).toBeGreaterThan(2);
      expect(requests).toBeLessThanOrEqual(local + 2);
    });
  });
});
