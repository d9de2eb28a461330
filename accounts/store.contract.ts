/**
 * The AccessStore contract (model.ts): what every store, embedded file or Redis,
 * must do alike, run by each store's own test file over that store (the way Hono
 * runs one suite over all its routers). Behaviour only one medium has (a torn log
 * line, a flushed Redis) stays in that store's file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccessChangeError } from './changes.js';
import { generateKey, newAccountId } from './keys.js';
import {
  type AccessChange,
  type AccessStore,
  type Account,
  type DailyCount,
  DEFAULT_PLANS,
  type KeyRecord,
} from './model.js';

/**
 * Makes an empty store and returns how to open an instance on it; every call of the
 * opener is another process's view of the same store. The caller closes what it opens
 * (afterEach) and empties shared media (a Redis flushed beforeEach).
 */
export type EmptyStore = () => Promise<() => Promise<AccessStore>>;

const AT = '2026-01-02T03:04:05.000Z';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * `n` account creations on `store` in the background, `pauseMs` apart (as admin changes
 * come): `writing()` is true until the last is written; `done` settles then.
 */
export function createAccountsMeanwhile(
  store: AccessStore,
  n: number,
  pauseMs: number,
): { writing: () => boolean; done: Promise<void> } {
  let writing = true;
  const done = (async () => {
    try {
      for (let i = 0; i < n; i++) {
        await store.change(create(account(`a${i}`)));
        await sleep(pauseMs);
      }
    } finally {
      writing = false;
    }
  })();
  return { writing: () => writing, done };
}

/**
 * What a backup must carry, written through the store: accounts acme (pro) and globex
 * with a key each (four changes), two days of per-key counts (2026-11-20: acme 100
 * admitted, 3 refused; 2026-11-23: acme 20 and 0, globex 7 and 1), plan limits, one
 * audit entry; and what it must not: a session ('s' × 32) and a sign-in attempt.
 */
export async function fillForBackup(s: AccessStore) {
  const a = account('acme', 'pro');
  const b = account('globex');
  const ka = key(a.id);
  const kb = key(b.id);
  for (const c of [
    create(a),
    create(b),
    { op: 'key.create', key: ka } as const,
    { op: 'key.create', key: kb } as const,
  ])
    await s.change(c);
  await s.addDaily(
    new Map<string, Map<string, DailyCount>>([
      ['2026-11-20', new Map([[ka.id, [100, 3]]])],
      [
        '2026-11-23',
        new Map([
          [ka.id, [20, 0]],
          [kb.id, [7, 1]],
        ]),
      ],
    ]),
  );
  await s.writePlans({ ...DEFAULT_PLANS, pro: { burst: 5, monthly: 6 } });
  await s.audit({
    at: '2026-11-23T10:00:00.000Z',
    actor: 'cli:ops',
    action: 'account.plan',
    target: a.id,
    detail: 'pro',
  });
  await s.putSecret('session', 's'.repeat(32), '{"person":"x"}', 600_000);
  await s.throttle('signin:someone@example.com', 10, 600_000, Date.parse('2026-11-23T10:00:00.000Z'));
  return { a, b, ka, kb };
}

/** An id as the dashboard makes one: a hash of a random secret. */
function secretId(): string {
  return createHash('sha256').update(randomBytes(32)).digest('hex');
}

export function account(name: string, plan: Account['plan'] = 'free'): Account {
  return { id: newAccountId(), name, plan, status: 'active', created_at: AT };
}

export function key(accountId: string): KeyRecord {
  const g = generateKey();
  return {
    id: g.id,
    account_id: accountId,
    prefix: g.prefix,
    hash: g.hash,
    created_at: AT,
    revoked_at: null,
    expires_at: null,
  };
}

export const create = (a: Account): AccessChange => ({ op: 'account.create', account: a });

export function accessStoreContract(name: string, emptyStore: EmptyStore): void {
  describe(`AccessStore contract: ${name}`, () => {
    it('starts empty, records every kind of change, and another instance replays the same state', async () => {
      const open = await emptyStore();
      const s = await open();
      expect(await s.read()).toEqual({ version: 0, accounts: [], keys: [], people: [], requests: [] });
      const a = account('acme');
      const k = key(a.id);
      await s.change(create(a));
      await s.change({ op: 'account.plan', account_id: a.id, plan: 'pro' });
      await s.change({ op: 'account.status', account_id: a.id, status: 'past_due' });
      await s.change({ op: 'key.create', key: k });
      await s.change({ op: 'key.expire', key_id: k.id, at: '2026-03-01T00:00:00.000Z' });
      const last = await s.change({ op: 'key.revoke', key_id: k.id, at: '2026-02-01T00:00:00.000Z' });
      expect(last.version).toBe(6);
      expect(last.accounts).toEqual([{ ...a, plan: 'pro', status: 'past_due' }]);
      expect(last.keys).toEqual([
        { ...k, revoked_at: '2026-02-01T00:00:00.000Z', expires_at: '2026-03-01T00:00:00.000Z' },
      ]);
      expect(await (await open()).read()).toEqual(last);
    });

    it('refuses each inconsistent change with the one wording of changes.ts, and records none of them', async () => {
      const s = await (await emptyStore())();
      const a = account('acme');
      await s.change(create(a));
      const k = key(a.id);
      await s.change({ op: 'key.create', key: k });
      await s.change({ op: 'key.revoke', key_id: k.id, at: '2026-02-01T00:00:00.000Z' });
      const refused: Array<[AccessChange, RegExp]> = [
        [create(account('acme')), /^an account named "acme" already exists$/],
        [create(account('has space')), /^an account name must be 1 to 64 letters/],
        [create(account('x'.repeat(65))), /^an account name must be 1 to 64 letters/],
        [create(account('acct_0123456789ab')), /must not look like an account id/],
        [create({ ...account('b'), id: a.id }), /^account id acct_\w+ already exists$/],
        [{ op: 'account.plan', account_id: 'acct_nope', plan: 'pro' }, /^no account with id acct_nope$/],
        [{ op: 'account.status', account_id: 'acct_nope', status: 'none' }, /^no account with id acct_nope$/],
        [{ op: 'account.plan', account_id: a.id, plan: 'gold' as Account['plan'] }, /^unknown plan "gold"$/],
        [
          { op: 'account.status', account_id: a.id, status: 'gone' as Account['status'] },
          /^unknown status "gone"$/,
        ],
        [create({ ...account('c'), plan: 'gold' as Account['plan'] }), /^unknown plan "gold"$/],
        [{ op: 'key.create', key: key('acct_nope') }, /^no account with id acct_nope$/],
        [{ op: 'key.create', key: { ...key(a.id), id: k.id } }, /^key id key_\w+ already exists$/],
        [
          { op: 'key.create', key: { ...key(a.id), hash: k.hash } },
          /^a key with the same hash already exists$/,
        ],
        [
          { op: 'key.revoke', key_id: k.id, at: '2026-02-02T00:00:00.000Z' },
          /^key key_\w+ was already revoked at /,
        ],
        [{ op: 'key.expire', key_id: k.id, at: '2026-02-02T00:00:00.000Z' }, /^key key_\w+ was revoked at /],
        [{ op: 'key.expire', key_id: 'key_000000000000', at: AT }, /^no key with id key_000000000000$/],
      ];
      for (const [change, message] of refused) {
        const e = await s.change(change).then(
          () => null,
          (x: unknown) => x,
        );
        expect(e, JSON.stringify(change)).toBeInstanceOf(AccessChangeError);
        expect((e as Error).message, JSON.stringify(change)).toMatch(message);
      }
      expect((await s.read()).version).toBe(3);
    });

    it('refuses a malformed record (a key hash that is not 64 hex digits, a date that is none) as not a valid access change', async () => {
      const s = await (await emptyStore())();
      const a = account('acme');
      await s.change(create(a));
      for (const bad of [
        { op: 'key.create', key: { ...key(a.id), hash: 'h-key_1' } },
        { op: 'key.revoke', key_id: 'key_000000000000', at: 'yesterday' },
        { op: 'account.create', account: { ...account('b'), created_at: 'now' } },
        { op: 'account.rename', account_id: a.id },
      ]) {
        await expect(s.change(bad as AccessChange)).rejects.toThrow(/^not a valid access change: \{"op":/);
      }
      expect((await s.read()).version).toBe(1);
    });

    it('keeps names unique when several instances create the same account at once', async () => {
      const open = await emptyStore();
      const stores = await Promise.all([open(), open(), open(), open()]);
      const results = await Promise.allSettled(
        stores.flatMap((s, i) => [s.change(create(account('same'))), s.change(create(account(`own-${i}`)))]),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      const st = await (await open()).read();
      expect(st.version).toBe(5);
      expect(st.accounts.filter((a) => a.name === 'same')).toHaveLength(1);
    });

    it("tells a subscriber about another instance's change within a second", async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      await b.read();
      let calls = 0;
      const t0 = Date.now();
      const heard = new Promise<number>((resolve) => {
        const stop = b.subscribe(() => {
          calls++;
          stop();
          resolve(Date.now() - t0);
        });
      });
      await a.change(create(account('acme')));
      expect(await heard).toBeLessThan(1000);
      expect(calls).toBe(1);
      expect((await b.read()).accounts.map((x) => x.name)).toEqual(['acme']);
    });

    it('has no plans recorded until a server records its own; another instance reads them', async () => {
      const open = await emptyStore();
      const s = await open();
      expect(await s.readPlans()).toBeNull();
      const plans = { ...DEFAULT_PLANS, pro: { burst: 7, monthly: 70 } };
      await s.writePlans(plans);
      expect(await (await open()).readPlans()).toEqual(plans);
    });

    // ---- the dashboard's records ----

    it('keeps a secret by kind and id until it is deleted, and another instance reads it', async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      const id = secretId();
      expect(await a.getSecret('session', id)).toBeNull();
      await a.putSecret('session', id, '{"person":"user_1"}', 60_000);
      expect(await b.getSecret('session', id)).toBe('{"person":"user_1"}');
      // Kinds are apart: the same id under another kind is another secret.
      expect(await b.getSecret('reset', id)).toBeNull();
      await b.putSecret('session', id, '{"person":"user_2"}', 60_000);
      expect(await a.getSecret('session', id)).toBe('{"person":"user_2"}');
      await b.deleteSecret('session', id);
      await b.deleteSecret('session', id);
      expect(await a.getSecret('session', id)).toBeNull();
      expect(await a.takeSecret('session', id)).toBeNull();
    });

    it('forgets a secret once its time to live has passed: get and take both find nothing', async () => {
      const s = await (await emptyStore())();
      const [short, long] = [secretId(), secretId()];
      await s.putSecret('verify', short, 'v1', 150);
      await s.putSecret('verify', long, 'v2', 60_000);
      expect(await s.getSecret('verify', short)).toBe('v1');
      await sleep(400);
      expect(await s.getSecret('verify', short)).toBeNull();
      expect(await s.takeSecret('verify', short)).toBeNull();
      expect(await s.getSecret('verify', long)).toBe('v2');
    });

    it('gives a single-use token to exactly one of many concurrent takers, across two instances', async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      for (let round = 0; round < 5; round++) {
        const id = secretId();
        await a.putSecret('reset', id, `token-${round}`, 60_000);
        const got = await Promise.all(
          Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).takeSecret('reset', id)),
        );
        expect(got.filter((v) => v !== null)).toEqual([`token-${round}`]);
        expect(await b.getSecret('reset', id)).toBeNull();
        expect(await a.takeSecret('reset', id)).toBeNull();
      }
    });

    it('throttles per key: the limit admitted, shared by instances; a refusal says when one more fits and is not counted', async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      const hour = 3_600_000;
      const t0 = Date.now();
      expect(await a.throttle('signin:ann@example.com', 3, hour, t0)).toBe(0);
      expect(await b.throttle('signin:ann@example.com', 3, hour, t0 + 1000)).toBe(0);
      expect(await a.throttle('signin:bob@example.com', 3, hour, t0 + 1000)).toBe(0);
      expect(await b.throttle('signin:ann@example.com', 3, hour, t0 + 2000)).toBe(0);
      // Full: the fourth waits until the first leaves the window, an hour after it.
      expect(await a.throttle('signin:ann@example.com', 3, hour, t0 + 5000)).toBe(hour - 5000);
      // Refused attempts are not counted: the wait does not grow.
      expect(await b.throttle('signin:ann@example.com', 3, hour, t0 + 6000)).toBe(hour - 6000);
      expect(await a.throttle('signin:ann@example.com', 3, hour, t0 + hour + 1)).toBe(0);
    });

    it('many attempts at once from two instances: never more admitted than the limit', async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      const t0 = Date.now();
      const waits = await Promise.all(
        Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? a : b).throttle('signin:x', 10, 60_000, t0 + i)),
      );
      // Ten admitted, the first to come; the others told to wait.
      expect(waits.filter((w) => w === 0)).toHaveLength(10);
      // At most a window (and the few ms between the attempts' clocks).
      for (const w of waits.filter((x) => x > 0)) expect(w).toBeLessThanOrEqual(60_000 + 24);
    });

    it('a sliding window: no window of its length, wherever it starts, holds more than the limit (a boundary does not double it)', async () => {
      const s = await (await emptyStore())();
      const window = 15 * 60_000;
      // An attempt every 1.5 s for 30 minutes, across every boundary a fixed window would have.
      const t0 = Math.floor(Date.now() / window) * window + window - 7_500;
      const admitted: number[] = [];
      for (let t = t0; t < t0 + 2 * window; t += 1_500)
        if ((await s.throttle('signin:carol@example.com', 10, window, t)) === 0) admitted.push(t);
      for (const t of admitted) {
        const inWindow = admitted.filter((u) => u > t - window && u <= t).length;
        expect(inWindow, `the window ending ${t - t0} ms in`).toBeLessThanOrEqual(10);
      }
      // 10 in the first window, 10 more once those left it: the budget, not twice it.
      expect(admitted.length).toBe(20);
      expect(admitted.filter((t) => t < t0 + 15_000).length).toBe(10);
    });

    it('keeps the audit log newest first, whole, for every instance', async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      expect(await a.readAudit(10)).toEqual([]);
      const entries = ['account.plan', 'person.disable', 'request.approve'].map((action, i) => ({
        at: `2026-11-2${i}T10:00:00.000Z`,
        actor: 'cli:ops',
        action,
        target: `acct_00000000000${i}`,
        detail: `step ${i} <b>é</b>`,
      }));
      for (const e of entries) await (e.action === 'person.disable' ? b : a).audit(e);
      expect(await b.readAudit(10)).toEqual([...entries].reverse());
      expect(await a.readAudit(2)).toEqual([entries[2], entries[1]]);
      expect(await a.readAudit(0)).toEqual([]);
      await expect(a.audit({ ...entries[0], at: 'yesterday' })).rejects.toThrow(/not a valid audit entry/);
      await expect(a.audit({ ...entries[0], actor: '' })).rejects.toThrow(/not a valid audit entry/);
      expect(await a.readAudit(10)).toHaveLength(3);
    });

    // ---- requests per key per day ----

    const daily = (entries: Record<string, Record<string, [number, number]>>) =>
      new Map(Object.entries(entries).map(([day, keys]) => [day, new Map(Object.entries(keys))]));
    const plain = (m: Map<string, Map<string, DailyCount>>) =>
      Object.fromEntries([...m].map(([day, keys]) => [day, Object.fromEntries(keys)]));

    it('adds daily counts to what a day already holds, per key, admitted and refused apart', async () => {
      const open = await emptyStore();
      const s = await open();
      expect(plain(await s.readDaily('2026-11-01', '2026-11-30'))).toEqual({});
      await s.addDaily(daily({ '2026-11-23': { key_a: [5, 2], key_b: [1, 0] } }));
      await s.addDaily(daily({ '2026-11-23': { key_a: [3, 0] }, '2026-11-24': { key_b: [0, 4] } }));
      expect(plain(await s.readDaily('2026-11-23', '2026-11-24'))).toEqual({
        '2026-11-23': { key_a: [8, 2], key_b: [1, 0] },
        '2026-11-24': { key_b: [0, 4] },
      });
    });

    it('returns only the days from..to inclusive, across a month and a year end', async () => {
      const open = await emptyStore();
      const s = await open();
      const days = ['2025-11-30', '2025-12-01', '2025-12-31', '2026-01-01', '2026-01-02'];
      await s.addDaily(daily(Object.fromEntries(days.map((d, i) => [d, { key_a: [i + 1, 0] }]))));
      expect(plain(await s.readDaily('2025-12-01', '2026-01-01'))).toEqual({
        '2025-12-01': { key_a: [2, 0] },
        '2025-12-31': { key_a: [3, 0] },
        '2026-01-01': { key_a: [4, 0] },
      });
      expect(plain(await s.readDaily('2026-01-02', '2026-01-02'))).toEqual({
        '2026-01-02': { key_a: [5, 0] },
      });
      expect(plain(await s.readDaily('2026-01-03', '2026-01-01'))).toEqual({});
    });

    it("sees another instance's daily counts, and two instances adding to one day add up", async () => {
      const open = await emptyStore();
      const [a, b] = [await open(), await open()];
      await a.addDaily(daily({ '2026-11-23': { key_a: [2, 1] } }));
      await b.addDaily(daily({ '2026-11-23': { key_a: [3, 0], key_b: [7, 0] } }));
      const want = { '2026-11-23': { key_a: [5, 1], key_b: [7, 0] } };
      expect(plain(await a.readDaily('2026-11-23', '2026-11-23'))).toEqual(want);
      expect(plain(await (await open()).readDaily('2026-11-23', '2026-11-23'))).toEqual(want);
    });

    it('refuses a day that is none or a count that is not a whole number, and adds nothing of it', async () => {
      const open = await emptyStore();
      const s = await open();
      await expect(s.addDaily(daily({ '2026-02-30': { key_a: [1, 0] } }))).rejects.toThrow(/YYYY-MM-DD/);
      await expect(s.addDaily(daily({ '2026-11-23': { key_a: [1.5, 0] } }))).rejects.toThrow(/whole number/);
      await expect(s.addDaily(daily({ '2026-11-23': { key_a: [-1, 0] } }))).rejects.toThrow(/whole number/);
      await expect(s.readDaily('2026-11', '2026-11-30')).rejects.toThrow(/YYYY-MM-DD/);
      expect(plain(await s.readDaily('2026-02-01', '2026-12-31'))).toEqual({});
    });
  });
}
