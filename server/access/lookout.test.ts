/**
 * Read-your-writes for new keys, bounded: the throttle (Lookout) and
 * the gate's second look for a key it does not know.
 */
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../accounts/keys.js';
import type { GateDecision } from '../http/gate.js';
import { activeEntry } from './key-entry.test-helper.js';
import { AccessGate } from './key-gate.js';
import { LocalLimiter } from './limiter-local.js';
import { Lookout } from './lookout.js';
import type { KeyTableData } from './table.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function table(
  version: number,
  keys: Array<{ hash: string; id: string }>,
  revoked: string[] = [],
): KeyTableData {
  return { version, entries: keys.map((k) => [k.hash, activeEntry(k.id)] as const), revoked };
}

const status = async (d: GateDecision | Promise<GateDecision>) => {
  const x = await d;
  return x.ok ? 200 : Number.parseInt(x.status, 10);
};

describe('Lookout', () => {
  it('callers that ask before a look starts share it; a look starts after the ask', async () => {
    const started: number[] = [];
    let clock = 0;
    const l = new Lookout(
      async () => {
        started.push(clock);
      },
      50,
      () => clock,
    );
    const asks = Array.from({ length: 1000 }, () => l.request());
    expect(started).toEqual([]);
    await Promise.all(asks);
    expect(l.looks).toBe(1);
    // Asked after that look started: a new one, not the old one's answer.
    clock = 10;
    await l.request();
    expect(l.looks).toBe(2);
  });

  it('starts at most one look per interval under a flood of asks', async () => {
    const l = new Lookout(() => sleep(5), 50);
    const t0 = performance.now();
    const asks: Promise<void>[] = [];
    while (performance.now() - t0 < 500) {
      for (let i = 0; i < 20; i++) asks.push(l.request());
      await sleep(1);
    }
    await Promise.all(asks);
    const elapsed = performance.now() - t0;
    expect(asks.length).toBeGreaterThan(1000);
    expect(l.looks).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 1);
    expect(l.looks).toBeGreaterThanOrEqual(5);
  });

  it('a look that fails still answers its callers', async () => {
    const l = new Lookout(() => Promise.reject(new Error('store away')), 50);
    await expect(l.request()).resolves.toBeUndefined();
  });
});

describe('AccessGate: a key created a moment ago (read-your-writes)', () => {
  function setup() {
    const { limiter } = LocalLimiter.create(4);
    const known = generateKey();
    let reads = 0;
    let store: KeyTableData = table(1, [known]);
    // The store: a look reads it and sets the table, as the main thread does for the workers.
    const gate: AccessGate = new AccessGate(
      'http://x',
      limiter,
      () => Date.now(),
      () => lookout.request(),
    );
    const lookout = new Lookout(async () => {
      reads++;
      await sleep(1);
      gate.setTable(store);
    }, 50);
    gate.setTable(store);
    return {
      gate,
      known,
      reads: () => reads,
      publish: (t: KeyTableData) => {
        store = t;
      },
    };
  }

  it('admits a key the table did not list yet, after one look at the store', async () => {
    const { gate, known, reads, publish } = setup();
    const fresh = generateKey();
    publish(table(2, [known, fresh]));
    expect(await status(gate.admit(`Bearer ${fresh.key}`))).toBe(200);
    expect(reads()).toBe(1);
  });

  it('answers a known key at once, without a look or a promise (the hot path)', () => {
    const { gate, known, reads } = setup();
    for (let i = 0; i < 3; i++) {
      const d = gate.admit(`Bearer ${known.key}`);
      expect(d instanceof Promise).toBe(false);
      expect((d as GateDecision).ok).toBe(true);
    }
    expect(reads()).toBe(0);
  });

  it('refuses a revoked key at once and a token not shaped like a key without looking', () => {
    const { gate, known, reads } = setup();
    const gone = generateKey();
    gate.setTable(table(3, [known], [gone.hash]));
    for (const auth of [`Bearer ${gone.key}`, 'Bearer nope', 'Basic abc', '', `Bearer ${gone.key}x`]) {
      const d = gate.admit(auth);
      expect(d instanceof Promise, auth).toBe(false);
      expect((d as GateDecision).ok).toBe(false);
      expect((d as { status: string }).status).toBe('401 Unauthorized');
    }
    expect(reads()).toBe(0);
  });

  it('1,000 random well-formed unknown keys at once cost one store read, and each is refused', async () => {
    const { gate, reads } = setup();
    const ds = await Promise.all(
      Array.from({ length: 1000 }, () => status(gate.admit(`Bearer ${generateKey().key}`))),
    );
    expect(ds.every((s) => s === 401)).toBe(true);
    expect(reads()).toBe(1);
  });

  it('a flood of random keys over time reads the store at most once per 50 ms', async () => {
    const { gate, reads } = setup();
    const t0 = performance.now();
    const all: Promise<number>[] = [];
    for (let i = 0; i < 1000; i++) {
      all.push(status(gate.admit(`Bearer ${generateKey().key}`)));
      if (i % 10 === 9) await sleep(3);
    }
    const ds = await Promise.all(all);
    const elapsed = performance.now() - t0;
    expect(ds.every((s) => s === 401)).toBe(true);
    expect(reads()).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 1);
  });
});
