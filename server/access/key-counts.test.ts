/**
 * Requests per key per day: the threads' counters, the gate that
 * counts into them, the main thread's flush into a store, and what the dashboard reads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { applyChange } from '../../accounts/changes.js';
import {
  addDays,
  DailyFlusher,
  dayOf,
  dayStart,
  daysBetween,
  lastUsedDays,
  readKeyDaily,
} from '../../accounts/daily-usage.js';
import { generateKey } from '../../accounts/keys.js';
import {
  type AccessStore,
  type DailyCount,
  DEFAULT_PLANS,
  EMPTY_STATE,
  type KeyRecord,
} from '../../accounts/model.js';
import { account, create, key } from '../../accounts/store.contract.js';
import { FileAccessStore } from '../../accounts/store-file.js';
import { now } from '../../core/clock.js';
import { KeyCountReader, KeyCounts } from './key-counts.js';
import { AccessGate } from './key-gate.js';
import { LocalLimiter } from './limiter-local.js';
import { startAccess } from './startup.js';
import { buildKeyTable, keySlotMap, SlotMap } from './table.js';

type Days = Map<string, Map<string, DailyCount>>;

/** A key record of `accountId` and the secret that presents it. */
function newKey(accountId: string): { record: KeyRecord; secret: string } {
  const g = generateKey();
  const record: KeyRecord = {
    ...key(accountId),
    id: g.id,
    prefix: g.prefix,
    hash: g.hash,
  };
  return { record, secret: g.key };
}

/** The two daily methods of a store, in memory (the stores' own are in store.contract.ts). */
function memoryStore(fail: () => boolean = () => false): AccessStore & { days: Days } {
  const days: Days = new Map();
  const s = {
    days,
    async addDaily(counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>) {
      if (fail()) throw new Error('store away');
      for (const [day, keys] of counts) {
        const into = days.get(day) ?? new Map<string, DailyCount>();
        for (const [k, [ok, refused]] of keys) {
          const [ok0, refused0] = into.get(k) ?? [0, 0];
          into.set(k, [ok0 + ok, refused0 + refused]);
        }
        days.set(day, into);
      }
    },
    async readDaily(from: string, to: string) {
      return new Map([...days].filter(([d]) => d >= from && d <= to));
    },
  };
  return s as unknown as AccessStore & { days: Days };
}

const plain = (m: Days) => Object.fromEntries([...m].map(([d, keys]) => [d, Object.fromEntries(keys)]));

describe("a thread's request counts per key", () => {
  it('are summed over threads and taken once: a second take returns only what came since', () => {
    const reader = new KeyCountReader(8);
    const [a, b] = [new KeyCounts(reader.addThread()), new KeyCounts(reader.addThread())];
    a.admitted(0);
    a.admitted(0);
    b.admitted(0);
    b.refused(0);
    a.refused(3);
    expect(reader.take(8)).toEqual(
      new Map([
        [0, [3, 1]],
        [3, [0, 1]],
      ]),
    );
    expect(reader.take(8)).toEqual(new Map());
    b.admitted(3);
    expect(reader.take(8)).toEqual(new Map([[3, [1, 0]]]));
  });

  it('survive a counter wrapping past 2^32 between two takes', () => {
    const reader = new KeyCountReader(2);
    const buffer = reader.addThread();
    const raw = new Uint32Array(buffer);
    raw[0] = 2 ** 32 - 2;
    reader.take(2);
    const c = new KeyCounts(buffer);
    for (let i = 0; i < 5; i++) c.admitted(0);
    expect(raw[0]).toBe(3);
    expect(reader.take(2)).toEqual(new Map([[0, [5, 0]]]));
  });

  it('give each key a slot that stays its own across table rebuilds, and keys past the capacity one shared slot never read', () => {
    const slots = keySlotMap(3);
    expect([slots.slotOf('key_a'), slots.slotOf('key_b')]).toEqual([0, 1]);
    expect(slots.slotOf('key_c')).toBe(2);
    expect(slots.slotOf('key_d')).toBe(2);
    expect(slots.slotOf('key_a')).toBe(0);
    expect([slots.idAt(0), slots.idAt(1), slots.idAt(2)]).toEqual(['key_a', 'key_b', undefined]);
    // A slot map for accounts still refuses past its capacity.
    const accounts = new SlotMap(1);
    accounts.slotOf('acct_a');
    expect(() => accounts.slotOf('acct_b')).toThrow(/more than 1 accounts/);
  });
});

describe('the gate counts each decision of a key (admitted, refused with 429), and nothing else', () => {
  function setup(burst: number) {
    const a = account('acme');
    const keys = [newKey(a.id), newKey(a.id)];
    let state = applyChange(EMPTY_STATE, create(a));
    for (const k of keys) state = applyChange(state, { op: 'key.create', key: k.record });
    const { limiter } = LocalLimiter.create(4);
    const keySlots = keySlotMap(16);
    const plans = { free: { burst, monthly: 1000 } } as Parameters<typeof buildKeyTable>[2];
    const table = buildKeyTable(state, new SlotMap(4), plans, keySlots);
    const reader = new KeyCountReader(16);
    const gate = new AccessGate(
      'http://x',
      limiter,
      () => Date.parse('2026-11-23T12:00:00Z'),
      null,
      new KeyCounts(reader.addThread()),
    );
    gate.setTable(table);
    return { gate, keys, keySlots, reader };
  }

  it('counts per key, both keys of one account drawing on its one burst', () => {
    const { gate, keys, keySlots, reader } = setup(3);
    const statuses = [0, 1, 0, 1, 0].map(
      (i) => (gate.admit(`Bearer ${keys[i].secret}`) as { ok: boolean }).ok,
    );
    expect(statuses).toEqual([true, true, true, false, false]);
    const taken = reader.take(keySlots.size);
    expect(taken.get(keySlots.slotOf(keys[0].record.id))).toEqual([2, 1]);
    expect(taken.get(keySlots.slotOf(keys[1].record.id))).toEqual([1, 1]);
  });

  it('counts nothing for a 401: a token that is no key of the table', () => {
    const { gate, keySlots, reader } = setup(3);
    expect((gate.admit(`Bearer ${generateKey().key}`) as { ok: boolean }).ok).toBe(false);
    expect((gate.admit('Bearer nope') as { ok: boolean }).ok).toBe(false);
    expect(reader.take(keySlots.size)).toEqual(new Map());
  });
});

describe('the daily flush', () => {
  it("adds what was counted since the last flush under the flush's UTC day", async () => {
    const store = memoryStore();
    const reader = new KeyCountReader(4);
    const c = new KeyCounts(reader.addThread());
    const ids = ['key_a', 'key_b'];
    let now = Date.parse('2026-11-23T23:59:59Z');
    const f = new DailyFlusher(
      store,
      () => reader.take(2),
      (s) => ids[s],
      () => now,
    );
    c.admitted(0);
    c.refused(1);
    await f.flush();
    await f.flush();
    now += 2000;
    c.admitted(0);
    await f.flush();
    expect(plain(store.days)).toEqual({
      '2026-11-23': { key_a: [1, 0], key_b: [0, 1] },
      '2026-11-24': { key_a: [1, 0] },
    });
  });

  it('keeps what a store refused and adds it with the next flush that succeeds, once', async () => {
    let away = true;
    const store = memoryStore(() => away);
    const reader = new KeyCountReader(4);
    const c = new KeyCounts(reader.addThread());
    const f = new DailyFlusher(
      store,
      () => reader.take(1),
      () => 'key_a',
      () => Date.parse('2026-11-23T10:00:00Z'),
    );
    c.admitted(0);
    await expect(f.flush()).rejects.toThrow('store away');
    c.admitted(0);
    c.refused(0);
    await expect(f.flush()).rejects.toThrow('store away');
    away = false;
    await f.flush();
    await f.flush();
    expect(plain(store.days)).toEqual({ '2026-11-23': { key_a: [2, 1] } });
  });

  it('drops the counts of the shared overflow slot (no key id)', async () => {
    const store = memoryStore();
    const f = new DailyFlusher(
      store,
      () => new Map([[7, [4, 0] as const]]),
      () => undefined,
      () => 0,
    );
    await f.flush();
    expect(store.days.size).toBe(0);
  });
});

describe('what the dashboard reads', () => {
  it("readKeyDaily: one row per day and key of the account's keys that had requests, by day then key", async () => {
    const store = memoryStore();
    await store.addDaily(
      new Map([
        [
          '2026-11-22',
          new Map<string, DailyCount>([
            ['key_b', [1, 0]],
            ['key_a', [0, 2]],
            ['key_other', [9, 9]],
          ]),
        ],
        [
          '2026-11-20',
          new Map<string, DailyCount>([
            ['key_a', [3, 0]],
            ['key_b', [0, 0]],
          ]),
        ],
        ['2026-11-25', new Map<string, DailyCount>([['key_a', [1, 0]]])],
      ]),
    );
    expect(await readKeyDaily(store, ['key_a', 'key_b'], '2026-11-20', '2026-11-24')).toEqual([
      { day: '2026-11-20', key_id: 'key_a', ok: 3, refused: 0 },
      { day: '2026-11-22', key_id: 'key_a', ok: 0, refused: 2 },
      { day: '2026-11-22', key_id: 'key_b', ok: 1, refused: 0 },
    ]);
  });

  it('lastUsedDays: the last day each key had a request, up to 400 days back, null for none', async () => {
    const store = memoryStore();
    const today = '2026-11-23';
    await store.addDaily(
      new Map([
        ['2026-11-23', new Map<string, DailyCount>([['key_a', [0, 1]]])],
        ['2026-11-01', new Map<string, DailyCount>([['key_a', [1, 0]]])],
        [addDays(today, -200), new Map<string, DailyCount>([['key_b', [1, 0]]])],
        [addDays(today, -400), new Map<string, DailyCount>([['key_c', [1, 0]]])],
        ['2026-11-24', new Map<string, DailyCount>([['key_d', [1, 0]]])],
      ]),
    );
    expect(await lastUsedDays(store, ['key_a', 'key_b', 'key_c', 'key_d'], today)).toEqual(
      new Map([
        ['key_a', '2026-11-23'],
        ['key_b', addDays(today, -200)],
        ['key_c', null],
        ['key_d', null],
      ]),
    );
  });

  it('lastUsedDays reads nothing before `since` (the day the oldest key was made): one read for keys made this month', async () => {
    const store = memoryStore();
    const today = '2026-11-23';
    await store.addDaily(new Map([['2026-11-20', new Map<string, DailyCount>([['key_a', [2, 0]]])]]));
    const reads: Array<[string, string]> = [];
    const read = store.readDaily.bind(store);
    store.readDaily = (from: string, to: string) => {
      reads.push([from, to]);
      return read(from, to);
    };
    expect(await lastUsedDays(store, ['key_a', 'key_new'], today, '2026-11-10')).toEqual(
      new Map([
        ['key_a', '2026-11-20'],
        ['key_new', null],
      ]),
    );
    expect(reads).toEqual([['2026-11-10', today]]);
    reads.length = 0;
    await lastUsedDays(store, ['key_new'], today);
    expect(reads.length).toBeGreaterThan(10);
  });

  it('days: real calendar days only, ranges inclusive', () => {
    expect(daysBetween('2024-02-28', '2024-03-01')).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
    expect(daysBetween('2024-03-02', '2024-03-01')).toEqual([]);
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
    for (const bad of ['2026-02-29', '2026-13-01', '2026-1-01', '', 'x'])
      expect(() => dayStart(bad), bad).toThrow(/YYYY-MM-DD/);
  });
});

describe('a server stopping (startAccess)', () => {
  it('saves what its threads counted after the last flush: nothing counted is lost at a stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fr-daily-stop-'));
    try {
      const setup = await FileAccessStore.open(dir);
      const a = account('acme');
      const g = newKey(a.id);
      await setup.change(create(a));
      await setup.change({ op: 'key.create', key: g.record });
      await setup.close();
      const access = await startAccess(dir, DEFAULT_PLANS, pino({ level: 'silent' }));
      const counts = new KeyCounts(access.addThread());
      const slot = access.table().entries[0][1].keySlot;
      // In the same tick as the stop: no timer's flush can run in between.
      counts.admitted(slot);
      counts.refused(slot);
      const day = dayOf(now());
      await access.stop();
      const store = await FileAccessStore.open(dir);
      expect(plain(await store.readDaily(day, day))).toEqual({ [day]: { [g.record.id]: [1, 1] } });
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
