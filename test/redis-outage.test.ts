/**
 * The README's overshoot bound for several servers on one Redis ("Several servers on one
 * Redis"), measured under load through a real outage: two server
 * processes of two threads each, one persistent Redis crashed and restarted on its port,
 * a plan with a small burst so that burst windows count within a short test.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { cli, generateAndBuild, type ServerProcess, startServe, tempDir, waitFor } from './harness.js';

let dir: string;
let snapshots: string;

beforeAll(() => {
  dir = tempDir('redis-outage');
  ({ snapshots } = generateAndBuild(dir, 3));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BURST = 20;
/** The GCRA emission interval of that burst, in ms. */
const INTERVAL_MS = 60_000 / BURST;
const SERVERS = 2;
/** Requests that may be in flight when the outage begins, a few per thread (README). */
const IN_FLIGHT = 4;

interface Sent {
  at: number;
  status: number;
}

/** One request every `everyMs` to each server for `ms`; resolves with every answer. */
async function steady(servers: ServerProcess[], auth: string, everyMs: number, ms: number): Promise<Sent[]> {
  const out: Promise<Sent>[] = [];
  const start = Date.now();
  for (let k = 0; Date.now() - start < ms; k++) {
    for (const s of servers)
      out.push(
        fetch(`${s.url}/v1/funds?limit=1`, { headers: { authorization: auth } }).then(async (r) => {
          await r.arrayBuffer();
          return { at: Date.now(), status: r.status };
        }),
      );
    const next = start + (k + 1) * everyMs;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
  }
  return Promise.all(out);
}

/**
 * The most any window of the run exceeds the README bound by: admitted requests in
 * [t_i, t_j] against N × (burst + the burst's refill over t_j - t_i), what N servers
 * each enforcing the burst alone can grant.
 */
function worstWindow(admittedAt: number[]): { excess: number; count: number; seconds: number } {
  const t = [...admittedAt].sort((a, b) => a - b);
  let worst = { excess: Number.NEGATIVE_INFINITY, count: 0, seconds: 0 };
  for (let i = 0; i < t.length; i++)
    for (let j = i; j < t.length; j++) {
      const w = t[j] - t[i];
      const excess = j - i + 1 - SERVERS * (BURST + w / INTERVAL_MS);
      if (excess > worst.excess) worst = { excess, count: j - i + 1, seconds: w / 1000 };
    }
  return worst;
}

describe('a Redis outage under load (README bound)', () => {
  let redis: RedisServer | null = null;
  const servers: ServerProcess[] = [];

  // afterEach, not afterAll: the servers and Redis start in the test, so they stop
  // gracefully before test/setup.ts ends whatever a test left running.
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.stop();
  });

  it('servers that granted alone during an outage charge the shared burst when Redis is back: no window exceeds N × burst, and they refuse until the burst has refilled', async () => {
    const data = join(dir, 'redis');
    rmSync(data, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(data);
    redis = await startRedis({ dir: data });
    const plans = join(dir, 'plans.json');
    writeFileSync(plans, JSON.stringify({ free: { burst: BURST, monthly: 1_000_000 } }));
    expect(cli(['accounts', 'create', 'load', '--plan', 'free', '--store', redis.url]).status).toBe(0);
    const created = cli(['keys', 'create', 'load', '--json', '--store', redis.url]);
    const auth = `Bearer ${(JSON.parse(created.stdout) as { key: string }).key}`;
    const flags = ['--store', redis.url, '--plans', plans, '--snapshots', snapshots, '--threads', '2'];
    servers.push(...(await Promise.all([startServe(flags), startServe(flags)])));

    // Light use first: Redis holds a bucket with most of the burst left.
    const t0 = Date.now();
    const before = await steady(servers, auth, 1000, 3000);
    expect(before.every((r) => r.status === 200)).toBe(true);

    // Redis crashes; a client keeps asking both servers, 10 times a second each.
    await redis.stop({ crash: true });
    const crashedAt = Date.now();
    const load = steady(servers, auth, 100, 17_000);
    await new Promise((r) => setTimeout(r, 9000));
    redis = await startRedis({ port: redis.port, dir: data });
    const backAt = Date.now();
    for (const s of servers)
      await waitFor(() => s.logs().split('Redis reachable again').length - 1 >= 2, 5000, 'both threads back');
    const reconciledAt = Date.now();
    const after = await load;

    const all = [...before, ...after];
    expect(all.filter((r) => r.status !== 200 && r.status !== 429)).toEqual([]);
    const admitted = all.filter((r) => r.status === 200).map((r) => r.at);
    const during = after.filter((r) => r.status === 200 && r.at < backAt).length;
    const settled = after.filter((r) => r.status === 200 && r.at >= reconciledAt).length;
    const worst = worstWindow(admitted);
    const figures = {
      before: before.length,
      duringOutage: during,
      betweenRestartAndReconciled: after.filter(
        (r) => r.status === 200 && r.at >= backAt && r.at < reconciledAt,
      ).length,
      afterReconciled: settled,
      refused: all.filter((r) => r.status === 429).length,
      reconcileMs: reconciledAt - backAt,
      outageMs: backAt - crashedAt,
      worstWindow: worst,
      runMs: Date.now() - t0,
    };
    console.log(`redis outage under load: ${JSON.stringify(figures)}`);
    // Alone, each server granted at most what its own bucket held (burst left + refill).
    expect(during).toBeLessThanOrEqual(SERVERS * (BURST + (backAt - crashedAt) / INTERVAL_MS) + IN_FLIGHT);
    // The README bound over every window of the run, the outage included.
    expect(worst.excess).toBeLessThanOrEqual(IN_FLIGHT);
    // Once every server has charged what it granted alone, the bucket owes more than a
    // burst: nothing more is granted for the rest of the run (it refills at one request
    // every 3 s only once the charge is paid, which takes longer than this run).
    expect(settled).toBe(0);
  }, 90_000);
});
