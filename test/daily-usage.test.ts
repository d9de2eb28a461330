/**
 * Requests per key per day end to end: a real server counts each
 * key's admitted and 429-refused requests on every thread, flushes them with the usage
 * counts, and `accounts usage NAME --daily --json` reads them back exactly, in the
 * embedded store and in Redis, across a restart (added, neither lost nor doubled).
 *
 * The truth a test checks against is what the server answered: each response's status
 * is tallied per key (200 admitted, 429 refused), so the burst refilling while a slow
 * machine runs the test changes the tally and the counts alike, never the verdict.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import {
  cli,
  generateAndBuild,
  type ServerProcess,
  startServe,
  tempDir,
  testNow,
  waitFor,
} from './harness.js';

/** Two requests per minute per account: the third in a row is refused by the burst limit (C27). */
const PLANS = { free: { burst: 2, monthly: 1000 } };

let dir: string;
let snapshots: string;
let plans: string;
/** Every server's flags but its store. */
let serveFlags: string[];
const servers: ServerProcess[] = [];

beforeAll(() => {
  dir = tempDir('daily-usage');
  ({ snapshots } = generateAndBuild(dir, 3));
  plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify(PLANS));
  serveFlags = ['--plans', plans, '--snapshots', snapshots, '--threads', '2'];
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Row {
  day: string;
  key_id: string;
  ok: number;
  refused: number;
}

/** An account with two keys on `store`: their ids and secrets. */
function accountWithTwoKeys(store: string, name: string): Array<{ id: string; key: string }> {
  expect(cli(['accounts', 'create', name, '--plan', 'free', '--store', store]).status).toBe(0);
  return [0, 1].map(() => {
    const r = cli(['keys', 'create', name, '--json', '--store', store]);
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { id: string; key: string };
  });
}

/** The server's answers as counts: key id → [admitted, refused]; `slugs` collects the 429s' types. */
class Tally {
  readonly counts = new Map<string, [number, number]>();
  readonly slugs = new Set<string>();

  async send(server: ServerProcess, k: { id: string; key: string }, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      // A new connection each time: the threads share the port, so both see requests.
      const r = await fetch(`${server.url}/v1/funds?limit=1`, {
        headers: { authorization: `Bearer ${k.key}`, connection: 'close' },
      });
      const body = (await r.json()) as { type?: string };
      const c = this.counts.get(k.id) ?? [0, 0];
      if (r.status === 200) c[0]++;
      else if (r.status === 429) {
        c[1]++;
        this.slugs.add(String(body.type).split('/').pop() ?? '');
      } else throw new Error(`unexpected status ${r.status}`);
      this.counts.set(k.id, c);
    }
  }

  /** What `accounts usage --daily --json` must print: one row per key, today (the test clock's day). */
  rows(): Row[] {
    const day = new Date(testNow()).toISOString().slice(0, 10);
    return [...this.counts]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key_id, [ok, refused]]) => ({ day, key_id, ok, refused }));
  }
}

function daily(store: string, name: string): Row[] {
  const r = cli(['accounts', 'usage', name, '--daily', '--json', '--store', store]);
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Row[];
}

async function serve(store: string): Promise<ServerProcess> {
  const s = await startServe(['--store', store, ...serveFlags]);
  servers.push(s);
  return s;
}

/** Wait until the daily counts read `want`, then a little longer: they must not grow past it. */
async function expectDaily(store: string, name: string, want: Row[], server?: ServerProcess): Promise<void> {
  await waitFor(
    () => JSON.stringify(daily(store, name)) === JSON.stringify(want),
    15_000,
    `daily counts ${JSON.stringify(want)} (last read ${JSON.stringify(daily(store, name))})`,
    server?.logs,
  );
  await new Promise((r) => setTimeout(r, 1500));
  expect(daily(store, name)).toEqual(want);
}

async function stop(server: ServerProcess): Promise<void> {
  expect(await server.stop()).toBe(0);
  servers.splice(servers.indexOf(server), 1);
}

describe('requests per key per day', () => {
  it('counts each key of an account apart, admitted and refused by the burst limit, exactly, within seconds', async () => {
    const store = join(dir, 'store-one');
    const [k1, k2] = accountWithTwoKeys(store, 'acme');
    const server = await serve(store);
    const tally = new Tally();
    await tally.send(server, k2, 1);
    await tally.send(server, k1, 4);
    await tally.send(server, k2, 2);
    // Both keys draw on the account's one burst of 2: at least 5 of the 7 were refused.
    expect(tally.slugs).toEqual(new Set(['rate-limited']));
    expect([...tally.counts.values()].reduce((n, [, r]) => n + r, 0)).toBeGreaterThanOrEqual(5);
    await expectDaily(store, 'acme', tally.rows(), server);
    // A request without a valid key is nobody's: it adds to no key's count.
    expect(
      (await fetch(`${server.url}/v1/funds?limit=1`, { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(401);
    await expectDaily(store, 'acme', tally.rows(), server);
  });

  it('adds across a restart: what was counted just before the stop is saved, and nothing is counted twice', async () => {
    const store = join(dir, 'store-restart');
    const [k1, k2] = accountWithTwoKeys(store, 'acme');
    const tally = new Tally();
    const first = await serve(store);
    await tally.send(first, k1, 3);
    await expectDaily(store, 'acme', tally.rows(), first);
    // Stopped at once after these: only the flush at the stop can save them.
    await tally.send(first, k2, 2);
    await stop(first);
    expect(daily(store, 'acme')).toEqual(tally.rows());
    const second = await serve(store);
    await tally.send(second, k1, 2);
    await tally.send(second, k2, 1);
    await expectDaily(store, 'acme', tally.rows(), second);
    await stop(second);
    expect(daily(store, 'acme')).toEqual(tally.rows());
  });

  it('prints a table with each key’s id and prefix, and refuses --days out of range or without --daily', async () => {
    const store = join(dir, 'store-table');
    const [k1] = accountWithTwoKeys(store, 'acme');
    const server = await serve(store);
    const tally = new Tally();
    await tally.send(server, k1, 1);
    await expectDaily(store, 'acme', tally.rows(), server);
    const r = cli(['accounts', 'usage', 'acme', '--daily', '--days', '1', '--store', store]);
    expect(r.status, r.stderr).toBe(0);
    const day = tally.rows()[0].day;
    expect(r.stdout).toContain(`acme: requests per key per day (UTC), ${day} to ${day}`);
    expect(r.stdout).toMatch(new RegExp(`${day}\\s+${k1.id}\\s+fr_live_\\S+\\s+1\\s+0`));
    for (const [args, message] of [
      [['--days', '7'], '--days goes with --daily'],
      [['--daily', '--days', '0'], '--days must be between 1 and 400'],
      [['--daily', '--days', '401'], '--days must be between 1 and 400'],
    ] as const) {
      const bad = cli(['accounts', 'usage', 'acme', ...args, '--store', store]);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(message);
    }
  });
});

describe('requests per key per day on Redis', () => {
  let redis: RedisServer | null = null;

  beforeAll(async () => {
    const data = join(dir, 'redis');
    mkdirSync(data);
    redis = await startRedis({ dir: data });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('two servers on one Redis each add their own counts, and a stop saves the last of them', async () => {
    const store = redis!.url;
    const [k1, k2] = accountWithTwoKeys(store, 'acme');
    const tally = new Tally();
    const [a, b] = [await serve(store), await serve(store)];
    await tally.send(a, k1, 2);
    await tally.send(b, k1, 2);
    await tally.send(b, k2, 1);
    expect(tally.counts.get(k1.id)?.[1]).toBeGreaterThan(0);
    await expectDaily(store, 'acme', tally.rows(), b);
    await tally.send(a, k2, 2);
    await stop(a);
    expect(daily(store, 'acme')).toEqual(tally.rows());
  });
});
