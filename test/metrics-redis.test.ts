/**
 * /metrics through a Redis outage (docs/monitoring.md, `fundreturns_redis_up` and
 * `fundreturns_limits_local`; the FundReturnsRedisUnreachable alert reads them): a
 * server on a Redis store says Redis is up, then, once Redis is gone, that its
 * threads count limits alone, and that Redis is back once it is.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { cli, generateAndBuild, type ServerProcess, tempDir, waitFor } from './harness.js';
import { startServeWithMetrics } from './metrics-server.js';

let dir: string;
let redis: RedisServer | null = null;
let server: ServerProcess | null = null;
let adminPort: number;
let auth: string;

beforeAll(async () => {
  dir = tempDir('metrics-redis');
  const { snapshots } = generateAndBuild(dir, 3);
  const data = join(dir, 'redis');
  mkdirSync(data);
  redis = await startRedis({ dir: data });
  expect(cli(['accounts', 'create', 'r', '--plan', 'business', '--store', redis.url]).status).toBe(0);
  const created = cli(['keys', 'create', 'r', '--json', '--store', redis.url]);
  auth = `Bearer ${(JSON.parse(created.stdout) as { key: string }).key}`;
  ({ server, adminPort } = await startServeWithMetrics(['--store', redis.url, '--snapshots', snapshots]));
});

afterAll(async () => {
  await server?.stop();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Each thread's value of a per-thread gauge. */
async function perThread(metric: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${metric}\\{thread="([^"]+)"\\} (\\S+)$`, 'gm')))
    out[m[1]] = Number(m[2]);
  return out;
}

/** A few requests on separate connections, so both threads see traffic (and notice Redis). */
async function traffic(): Promise<void> {
  await Promise.all(
    Array.from({ length: 8 }, () =>
      fetch(`${server!.url}/v1/funds?limit=1`, {
        headers: { authorization: auth, connection: 'close' },
      }).then((r) => r.arrayBuffer()),
    ),
  );
}

it('says Redis is up, then that limits are counted locally while it is out, then that it is back', async () => {
  const threads = { 'worker-1': 1, 'worker-2': 1 };
  await waitFor(
    async () => JSON.stringify(await perThread('fundreturns_redis_up')) === JSON.stringify(threads),
  );
  expect(await perThread('fundreturns_limits_local')).toEqual({ 'worker-1': 0, 'worker-2': 0 });

  const port = redis!.port;
  await redis!.stop({ crash: true });
  await waitFor(
    async () => {
      await traffic();
      return Object.values(await perThread('fundreturns_limits_local')).includes(1);
    },
    20_000,
    'a thread counting locally',
    server!.logs,
  );
  const down = await perThread('fundreturns_redis_up');
  const local = await perThread('fundreturns_limits_local');
  for (const t of Object.keys(local)) expect(down[t], t).toBe(1 - local[t]);

  redis = await startRedis({ port, dir: join(dir, 'redis') });
  await waitFor(
    async () => {
      await traffic();
      return JSON.stringify(await perThread('fundreturns_redis_up')) === JSON.stringify(threads);
    },
    20_000,
    'every thread back on Redis',
    server!.logs,
  );
  expect(await perThread('fundreturns_limits_local')).toEqual({ 'worker-1': 0, 'worker-2': 0 });
}, 60_000);
