/**
 * A key works the moment `keys create` returns: on every thread of
 * a server, on a second server on the same Redis, and on the embedded store; and a
 * flood of made-up keys costs a bounded number of store reads.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_BODY_LENGTH, KEY_PREFIX } from '../accounts/keys.js';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { keys } from '../cli/commands/keys.js';
import { cli, generateAndBuild, type ServerProcess, startServe, tempDir } from './harness.js';

let dir: string;
let snapshots: string;
let plans: string;
const running: ServerProcess[] = [];
let redis: RedisServer | null = null;

beforeAll(() => {
  dir = tempDir('ryw');
  ({ snapshots } = generateAndBuild(dir, 3));
  plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ business: { burst: 1_000_000, monthly: 100_000_000 } }));
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `fundreturns keys create ACCOUNT --json` (the CLI's own code, in this process): the new key. */
async function createKey(store: string, account: string): Promise<string> {
  let out = '';
  const code = await keys.run(['create', account, '--json', '--store', store], {
    out: (s) => {
      out += s;
    },
    err: () => {},
    env: {},
    isTty: false,
  });
  expect(code).toBe(0);
  return (JSON.parse(out) as { key: string }).key;
}

/** One request on a connection of its own (so the kernel spreads them over the threads). */
function statusOf(server: ServerProcess, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = http.get(
      `${server.url}/v1/funds?limit=1`,
      { agent: false, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    r.on('error', reject);
  });
}

const randomKey = () =>
  KEY_PREFIX + randomBytes(KEY_BODY_LENGTH).toString('base64url').slice(0, KEY_BODY_LENGTH);

describe('read-your-writes for new keys', () => {
  it('a key works the moment `keys create` returns, a hundred times, on both threads of two servers on one Redis', async () => {
    redis = await startRedis();
    expect(cli(['accounts', 'create', 'ryw', '--plan', 'business', '--store', redis.url]).status).toBe(0);
    const flags = ['--store', redis.url, '--plans', plans, '--snapshots', snapshots, '--threads', '2'];
    const [a, b] = await Promise.all([startServe(flags), startServe(flags)]);
    running.push(a, b);
    const first: number[] = [];
    for (let i = 0; i < 100; i++) {
      const key = await createKey(redis.url, 'ryw');
      first.push(...(await Promise.all([statusOf(a, key), statusOf(b, key)])));
    }
    expect(first.filter((s) => s !== 200)).toEqual([]);
    expect(first).toHaveLength(200);

    // A flood of made-up keys (well formed, so each one could be new): every one is
    // refused, and the store is read a bounded number of times, not once a key.
    const c = createClient({ url: redis.url });
    await c.connect();
    const lranges = async () =>
      Number(/cmdstat_lrange:calls=(\d+)/.exec(await c.info('commandstats'))?.[1] ?? 0);
    const before = await lranges();
    const t0 = Date.now();
    const flood: number[] = [];
    for (let i = 0; i < 20; i++)
      flood.push(
        ...(await Promise.all(Array.from({ length: 50 }, (_, k) => statusOf(k % 2 ? a : b, randomKey())))),
      );
    const seconds = (Date.now() - t0) / 1000;
    const reads = (await lranges()) - before;
    await c.quit();
    console.log(`1,000 unknown keys in ${seconds.toFixed(2)} s: ${reads} store reads on two servers`);
    expect(flood.filter((s) => s !== 401)).toEqual([]);
    // Per server: a look at most every 50 ms, and its one-a-second poll.
    expect(reads).toBeLessThanOrEqual(2 * (Math.ceil(seconds * 20) + 1) + 2 * (Math.ceil(seconds) + 1));
    expect(reads).toBeLessThan(200);

    // A revoked key is refused at once, as before.
    const gone = await createKey(redis.url, 'ryw');
    expect(await statusOf(a, gone)).toBe(200);
    const id = (
      JSON.parse(cli(['keys', 'list', 'ryw', '--json', '--store', redis.url]).stdout) as Array<{
        id: string;
        prefix: string;
      }>
    ).find((k) => gone.startsWith(k.prefix))!.id;
    expect(cli(['keys', 'revoke', id, '--store', redis.url]).status).toBe(0);
    const t1 = Date.now();
    while ((await statusOf(a, gone)) !== 401) expect(Date.now() - t1).toBeLessThan(3000);
    const t2 = Date.now();
    for (let i = 0; i < 20; i++) expect(await statusOf(i % 2 ? a : b, gone)).toBe(401);
    // Twenty refusals in well under the time twenty looks would take.
    expect(Date.now() - t2).toBeLessThan(20 * 50);
  }, 120_000);

  it('a key works the moment `keys create` returns on the embedded store, on both threads', async () => {
    const store = join(dir, 'store');
    expect(cli(['accounts', 'create', 'local', '--plan', 'business', '--store', store]).status).toBe(0);
    const s = await startServe([
      '--store',
      store,
      '--plans',
      plans,
      '--snapshots',
      snapshots,
      '--threads',
      '2',
    ]);
    running.push(s);
    const first: number[] = [];
    for (let i = 0; i < 100; i++) {
      const key = await createKey(store, 'local');
      first.push(...(await Promise.all([statusOf(s, key), statusOf(s, key)])));
    }
    expect(first.filter((x) => x !== 200)).toEqual([]);
  }, 120_000);
});
