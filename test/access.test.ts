/**
 * Access control and metering end to end (SPEC 5, 7, 8; C22, C23, C25–C30): real
 * server processes, real keys from the operator CLI, limits from a plans file.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cli,
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  startServe,
  tempDir,
  testNow,
  waitFor,
} from './harness.js';

let dir: string;
let snapshots: string;
let code: string;

beforeAll(async () => {
  dir = tempDir('access');
  ({ snapshots } = generateAndBuild(dir, 10));
  // Any fund with prices will do: the first code the snapshot lists.
  const list = cli(['query', 'fund', firstCode(), '--snapshots', snapshots]);
  code = (JSON.parse(list.stdout) as { code: string }).code;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function firstCode(): string {
  const rows = readFileSync(join(dir, 'source', 'funds.csv'), 'utf8')
    .split('\n')
    .slice(1);
  return rows.filter((r) => /,(ETF|FUND),/.test(r))[0].split(',')[0];
}

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function req(
  server: ServerProcess,
  path: string,
  auth?: string,
  init: RequestInit = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
  if (auth !== undefined) headers.authorization = auth;
  const r = await fetch(server.url + path, { ...init, headers });
  const text = await r.text();
  return {
    status: r.status,
    headers: r.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

function rateLimit(h: Headers): { burst: number; quota: number } {
  const m = /"burst";r=(\d+);t=\d+, "quota";r=(\d+);t=\d+/.exec(h.get('ratelimit') ?? '');
  if (!m) throw new Error(`no RateLimit header: ${h.get('ratelimit')}`);
  return { burst: Number(m[1]), quota: Number(m[2]) };
}

describe('authentication (C22, C25)', () => {
  let server: ServerProcess;
  let key: string;
  let store: string;

  beforeAll(async () => {
    const a = setupAccess(join(dir, 'auth'), 'pro');
    key = a.key;
    store = a.store;
    server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '2']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('missing header, wrong scheme, unknown key: 401 problem+json with WWW-Authenticate', async () => {
    // The detail tells a client's mistake in the header from a key that is not (or no longer) valid.
    for (const [auth, detail] of [
      [undefined, /^Missing Authorization header/],
      [`Basic ${key}`, /^Malformed Authorization header/],
      [key, /^Malformed Authorization header/],
      ['Bearer', /^Malformed Authorization header/],
      ['Bearer fr_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', /^Invalid or revoked API key/],
      [`Bearer ${key}x`, /^Not an API key/],
    ] as const) {
      const r = await req(server, `/v1/funds/${code}`, auth);
      expect(r.status, String(auth)).toBe(401);
      expect(r.body.detail, String(auth)).toMatch(detail);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(r.body).toMatchObject({
        type: `${server.url}/problems/unauthorized`,
        status: 401,
        instance: `/v1/funds/${code}`,
      });
      expect(typeof r.body.title).toBe('string');
      expect(typeof r.body.detail).toBe('string');
      expect(r.headers.get('ratelimit')).toBeNull();
    }
  });

  it('a server with keys says how many at start and does not warn', async () => {
    // The JSON log line may follow the stderr line startServe waited for.
    await waitFor(() => /"keys":1,/.test(server.logs()), 15_000, 'the listening line');
    expect(server.logs()).not.toMatch(/no API keys/);
  });

  it('a server on a store without keys warns at start that every data request will be 401', async () => {
    const empty = await startServe(['--store', join(dir, 'auth', 'empty-store'), '--snapshots', snapshots]);
    try {
      // stderr and the JSON log on stdout arrive in either order.
      await waitFor(
        () => /warning: no API keys/.test(empty.logs()) && /"keys":0,/.test(empty.logs()),
        15_000,
        'the warning and the listening line',
      );
      expect(empty.logs()).toMatch(
        /warning: no API keys in .*empty-store: every \/v1 and \/mcp request answers 401/,
      );
      expect(empty.logs()).toMatch(/"keys":0,/);
      expect((await req(empty, `/v1/funds/${code}`, `Bearer ${key}`)).status).toBe(401);
    } finally {
      await empty.stop();
    }
  });

  it('the scheme is case-insensitive (C25)', async () => {
    expect((await req(server, `/v1/funds/${code}`, `bearer ${key}`)).status).toBe(200);
    expect((await req(server, `/v1/funds/${code}`, `BEARER ${key}`)).status).toBe(200);
  });

  it('auth comes before validation and lookup (C23)', async () => {
    expect((await req(server, `/v1/funds/${'X'.repeat(40)}`)).status).toBe(401);
    expect((await req(server, '/v1/funds?limit=0')).status).toBe(401);
    const post = await req(server, '/v1/trailing-returns/batch', undefined, {
      method: 'POST',
      body: '{bad json',
    });
    expect(post.status).toBe(401);
  });

  it('public endpoints need no key', async () => {
    expect((await req(server, '/openapi.json')).status).toBe(200);
    expect((await req(server, '/.well-known/api-catalog')).status).toBe(200);
    expect((await req(server, '/healthz')).status).toBe(200);
  });

  it('an inactive subscription is 403; reactivating lifts it within a second (C25)', async () => {
    expect(cli(['accounts', 'set-status', 'tester', 'past_due', '--store', store]).status).toBe(0);
    await waitFor(
      async () => (await req(server, `/v1/funds/${code}`, `Bearer ${key}`)).status === 403,
      3000,
      '403',
    );
    const r = await req(server, `/v1/funds/${code}`, `Bearer ${key}`);
    expect(r.body).toMatchObject({ status: 403, type: `${server.url}/problems/forbidden` });
    // Authenticated, so it carries the RateLimit fields (C29), and it counts nothing.
    expect(r.headers.get('ratelimit-policy')).toMatch(/^"burst";q=250;w=60, "quota";q=2500;w=\d+$/);
    const standing = rateLimit(r.headers);
    const again = rateLimit((await req(server, `/v1/funds/${code}`, `Bearer ${key}`)).headers);
    expect(again.quota).toBe(standing.quota);
    // The burst refills one every 240 ms meanwhile; a count would have taken one.
    expect(again.burst).toBeGreaterThanOrEqual(standing.burst);
    expect(r.headers.get('retry-after')).toBeNull();
    expect(cli(['accounts', 'set-status', 'tester', 'active', '--store', store]).status).toBe(0);
    await waitFor(
      async () => (await req(server, `/v1/funds/${code}`, `Bearer ${key}`)).status === 200,
      3000,
      '200',
    );
  });

  it('the CLI round trip: create, use, revoke, rejected on the running server within a second', async () => {
    const k = cli(['keys', 'create', 'tester', '--json', '--store', store]);
    expect(k.status).toBe(0);
    const created = JSON.parse(k.stdout) as { id: string; account: string; key: string; created_at: string };
    expect(Object.keys(created).sort()).toEqual(['account', 'created_at', 'id', 'key']);
    expect(created.key).toMatch(/^fr_live_[A-Za-z0-9_-]{32,}$/);
    await waitFor(
      async () => (await req(server, `/v1/funds/${code}`, `Bearer ${created.key}`)).status === 200,
      3000,
      'new key',
    );
    const list = cli(['keys', 'list', 'tester', '--json', '--store', store]);
    expect(list.stdout).not.toContain(created.key);
    expect(cli(['keys', 'revoke', created.id, '--store', store]).status).toBe(0);
    const started = Date.now();
    await waitFor(
      async () => (await req(server, `/v1/funds/${code}`, `Bearer ${created.key}`)).status === 401,
      3000,
      'revoked',
    );
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('a rotated key works through its grace period, then is refused', async () => {
    const k = JSON.parse(cli(['keys', 'create', 'tester', '--json', '--store', store]).stdout) as {
      id: string;
      key: string;
    };
    const rot = cli(['keys', 'rotate', k.id, '--grace', '2', '--json', '--store', store]);
    expect(rot.status).toBe(0);
    const fresh = (JSON.parse(rot.stdout) as { key: string }).key;
    await waitFor(
      async () => (await req(server, `/v1/funds/${code}`, `Bearer ${fresh}`)).status === 200,
      3000,
      'new key',
    );
    expect((await req(server, `/v1/funds/${code}`, `Bearer ${k.key}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2200));
    expect((await req(server, `/v1/funds/${code}`, `Bearer ${k.key}`)).status).toBe(401);
    expect((await req(server, `/v1/funds/${code}`, `Bearer ${fresh}`)).status).toBe(200);
  });
});

describe('limits (C26–C30)', () => {
  it('burst: 429 rate-limited after the plan burst, Retry-After, then recovery', async () => {
    const a = setupAccess(join(dir, 'burst'), 'free', { free: { burst: 60, monthly: 100_000 } });
    const server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '2']);
    try {
      const auth = `Bearer ${a.key}`;
      const results = await Promise.all(
        Array.from({ length: 60 }, () => req(server, `/v1/funds/${code}`, auth)),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const over = await req(server, `/v1/funds/${code}`, auth);
      expect(over.status).toBe(429);
      expect(over.headers.get('content-type')).toBe('application/problem+json');
      expect(over.body).toMatchObject({ status: 429, type: `${server.url}/problems/rate-limited` });
      const retry = Number(over.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(2);
      expect(rateLimit(over.headers).burst).toBe(0);
      await new Promise((r) => setTimeout(r, retry * 1000 + 100));
      expect((await req(server, `/v1/funds/${code}`, auth)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('a spent burst stays spent across a restart (C27)', async () => {
    // 5 a minute: one request every 12 s refills, so the restart happens well inside a refill.
    const a = setupAccess(join(dir, 'burst-restart'), 'free', { free: { burst: 5, monthly: 100_000 } });
    const auth = `Bearer ${a.key}`;
    let server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1']);
    for (let k = 0; k < 5; k++) expect((await req(server, `/v1/funds/${code}`, auth)).status).toBe(200);
    expect((await req(server, `/v1/funds/${code}`, auth)).status).toBe(429);
    expect(await server.stop()).toBe(0);
    server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1']);
    try {
      const after = await req(server, `/v1/funds/${code}`, auth);
      expect(after.status).toBe(429);
      expect(after.body).toMatchObject({ type: `${server.url}/problems/rate-limited` });
    } finally {
      await server.stop();
    }
  });

  it('quota: exactly the plan count, then 429 quota-exceeded until a plan upgrade lifts it at once', async () => {
    const a = setupAccess(join(dir, 'quota'), 'free', {
      free: { burst: 100_000, monthly: 25 },
      pro: { burst: 100_000, monthly: 50 },
    });
    const server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '2']);
    try {
      const auth = `Bearer ${a.key}`;
      const first = await req(server, `/v1/funds/${code}`, auth);
      expect(first.headers.get('ratelimit-policy')).toMatch(/^"burst";q=100000;w=60, "quota";q=25;w=\d+$/);
      expect(rateLimit(first.headers).quota).toBe(24);
      // A batch counts one, whatever its size (SPEC 8.2).
      const batch = await req(server, '/v1/trailing-returns/batch', auth, {
        method: 'POST',
        body: JSON.stringify({ codes: [code, code, 'NOPE'] }),
        headers: { 'content-type': 'application/json' },
      });
      expect(rateLimit(batch.headers).quota).toBe(23);
      // Validation failures count (C23): admitted by the limiter.
      const bad = await req(server, '/v1/funds?limit=0', auth);
      expect(bad.status).toBe(422);
      expect(rateLimit(bad.headers).quota).toBe(22);
      // Refused requests count nothing.
      for (let k = 0; k < 5; k++) await req(server, `/v1/funds/${code}`, 'Bearer nope');
      for (let k = 0; k < 22; k++) expect((await req(server, `/v1/funds/${code}`, auth)).status).toBe(200);
      const over = await req(server, `/v1/funds/${code}`, auth);
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ type: `${server.url}/problems/quota-exceeded` });
      // The suite's clock reads Monday 2026-11-23: the quota resets on 2026-12-01 (C28).
      const retry = Number(over.headers.get('retry-after'));
      expect(Math.abs(retry - (Date.parse('2026-12-01T00:00:00Z') - testNow()) / 1000)).toBeLessThan(5);
      expect(cli(['accounts', 'set-plan', 'tester', 'pro', '--store', a.store]).status).toBe(0);
      await waitFor(
        async () => (await req(server, `/v1/funds/${code}`, auth)).status === 200,
        3000,
        'upgrade',
      );
    } finally {
      await server.stop();
    }
  });

  it('counts survive a restart and are visible to the operator', async () => {
    const a = setupAccess(join(dir, 'restart'), 'free', { free: { burst: 100_000, monthly: 1000 } });
    let server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '2']);
    const auth = `Bearer ${a.key}`;
    for (let k = 0; k < 7; k++) await req(server, `/v1/funds/${code}`, auth);
    expect(await server.stop()).toBe(0);
    const usage = JSON.parse(cli(['accounts', 'usage', 'tester', '--json', '--store', a.store]).stdout) as {
      count: number;
    };
    expect(usage.count).toBe(7);
    server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '2']);
    try {
      expect(rateLimit((await req(server, `/v1/funds/${code}`, auth)).headers).quota).toBe(1000 - 8);
    } finally {
      await server.stop();
    }
  });

  it('a second server on the same embedded store or the same port refuses to start (C26, C28)', async () => {
    const a = setupAccess(join(dir, 'one-server'));
    const other = setupAccess(join(dir, 'other-store'));
    const server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1']);
    try {
      // Two counters on one store would each grant the whole burst and overwrite each other's usage.
      const twin = cli(['serve', ...a.flags, '--snapshots', snapshots, '--port', '0']);
      expect(twin.status).toBe(1);
      expect(twin.stderr).toMatch(/another server \(pid \d+ .*\) serves the store .*redis/);
      // SO_REUSEPORT would otherwise let a second server split this one's traffic.
      const port = new URL(server.url).port;
      const clash = cli(['serve', ...other.flags, '--snapshots', snapshots, '--port', port]);
      expect(clash.status).toBe(1);
      expect(clash.stderr).toMatch(new RegExp(`port ${port} .* is in use`));
      expect((await req(server, `/v1/funds/${code}`, `Bearer ${a.key}`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    // Released on a clean stop; a claim left by a dead process is taken over.
    const again = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1']);
    await again.stop();
    writeFileSync(
      join(a.store, 'serve.lock'),
      JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), at: 'then' }),
    );
    const afterCrash = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1']);
    await afterCrash.stop();
  });

  it('concurrent requests across threads never exceed the quota', async () => {
    const a = setupAccess(join(dir, 'race'), 'free', { free: { burst: 100_000, monthly: 150 } });
    const server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '2']);
    try {
      const auth = `Bearer ${a.key}`;
      const results = await Promise.all(
        Array.from({ length: 400 }, () => req(server, `/v1/funds/${code}`, auth)),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(150);
      expect(results.filter((r) => r.status === 429)).toHaveLength(250);
    } finally {
      await server.stop();
    }
  });

  it('MCP requests count one each against the same limits (C30)', async () => {
    const a = setupAccess(join(dir, 'mcp'), 'free', { free: { burst: 100_000, monthly: 3 } });
    const server = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1']);
    try {
      const auth = `Bearer ${a.key}`;
      const ping = {
        method: 'POST',
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      };
      expect((await req(server, '/mcp', auth, ping)).status).toBe(200);
      expect((await req(server, `/v1/funds/${code}`, auth)).status).toBe(200);
      expect((await req(server, '/mcp', auth, ping)).status).toBe(200);
      const over = await req(server, '/mcp', auth, ping);
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ type: `${server.url}/problems/quota-exceeded`, instance: '/mcp' });
    } finally {
      await server.stop();
    }
  });

  it('logs one request in --access-log-sample, with its path and status, never the key', async () => {
    const a = setupAccess(join(dir, 'log'), 'free', { free: { burst: 100_000, monthly: 100_000 } });
    const server = await startServe([
      ...a.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '1',
      '--access-log-sample',
      '3',
    ]);
    try {
      const auth = `Bearer ${a.key}`;
      // Direct answers (a latest row, an as_of row) and general ones (a list, a 404) alike.
      const paths = [
        `/v1/funds/${code}`,
        '/v1/funds?limit=1',
        `/v1/funds/${code}/trailing-returns`,
        `/v1/funds/${code}/trailing-returns?as_of=2020-06-30`,
        '/v1/funds/NO-SUCH-FUND',
        `/v1/funds/${code}/calendar-returns`,
      ];
      const statuses: number[] = [];
      for (const p of paths) statuses.push((await req(server, p, auth)).status);
      // MCP answers are written by their own writer: sampled the same (C30 counts them too).
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping' }),
        });
        expect(r.status).toBe(200);
      }
      await waitFor(
        () =>
          server
            .logs()
            .split('\n')
            .filter((l) => l.includes('"msg":"request"')).length >= 3,
      );
      const lines = server
        .logs()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'))
        .map((l) => JSON.parse(l) as { path: string; status: number; sample: number });
      expect(lines.map((l) => [l.path, l.status])).toEqual([
        [paths[2], statuses[2]],
        [paths[5], statuses[5]],
        ['/mcp', 200],
      ]);
      expect(lines.every((l) => l.sample === 3)).toBe(true);
      expect(server.logs()).not.toContain(a.key);
      // The server recorded its --plans in the store: the CLI reports them without the flag.
      const shown = JSON.parse(cli(['accounts', 'show', 'tester', '--json', '--store', a.store]).stdout) as {
        limits: unknown;
      };
      expect(shown.limits).toEqual({ burst: 100_000, monthly: 100_000 });
    } finally {
      await server.stop();
    }
  });

  it('a plans.json lost while serving is recorded again; a store refused at start is left as it was', async () => {
    const own = setupAccess(join(dir, 'plans-kept'));
    const recorded = join(own.store, 'plans.json');
    const server = await startServe([...own.flags, '--snapshots', snapshots, '--threads', '1']);
    try {
      await waitFor(() => existsSync(recorded), 5000, 'the plans recorded');
      const first = readFileSync(recorded, 'utf8');
      rmSync(recorded);
      // `accounts show|usage` read them: recorded again within the 5 s observer period.
      await waitFor(() => existsSync(recorded), 9000, 'the plans recorded again');
      expect(readFileSync(recorded, 'utf8')).toBe(first);
    } finally {
      await server.stop();
    }
    writeFileSync(recorded, 'as the operator left it');
    rmSync(join(own.store, 'access.log'));
    const refused = cli(['serve', '--port', '0', ...own.flags, '--snapshots', snapshots]);
    expect(refused.status).toBe(1);
    expect(readFileSync(recorded, 'utf8')).toBe('as the operator left it');
  });

  it('refuses a plans file with an unknown plan or a bad limit', () => {
    const bad = join(dir, 'bad-plans.json');
    const serveWith = (plans: unknown) => {
      writeFileSync(bad, JSON.stringify(plans));
      return cli([
        'serve',
        '--port',
        '0',
        '--snapshots',
        snapshots,
        '--plans',
        bad,
        '--store',
        join(dir, 'store-x'),
      ]);
    };
    const r = serveWith({ gold: { burst: 1, monthly: 1 } });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/gold/);
    // A misspelt limit would silently leave the default in force.
    const typo = serveWith({ free: { bursts: 100 } });
    expect(typo.status).toBe(1);
    expect(typo.stderr).toMatch(/free\.bursts is not a limit \(limits are burst, monthly\)/);
  });
});

describe('many machines: one Redis (C26–C28)', () => {
  /** A throw-away Redis with one free-plan account (these monthly limits), its key and serve flags. */
  async function redisAccount(name: string, monthly: number) {
    const { startRedis } = await import('../accounts/redis-server.test-helper.js');
    const redis = await startRedis();
    const plans = join(dir, `${name}-plans.json`);
    writeFileSync(plans, JSON.stringify({ free: { burst: 100_000, monthly } }));
    const flags = ['--store', redis.url, '--plans', plans, '--snapshots', snapshots, '--threads', '2'];
    expect(cli(['accounts', 'create', name, '--plan', 'free', '--store', redis.url]).status).toBe(0);
    const key = (
      JSON.parse(cli(['keys', 'create', name, '--json', '--store', redis.url]).stdout) as { key: string }
    ).key;
    return { redis, flags, auth: `Bearer ${key}` };
  }

  it('two server processes against one Redis share one key base and one quota', async () => {
    const { redis, flags, auth } = await redisAccount('shared', 120);
    const [a, b] = await Promise.all([startServe(flags), startServe(flags)]);
    try {
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, k) => req(k % 2 === 0 ? a : b, `/v1/funds/${code}`, auth)),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(120);
      expect(results.filter((r) => r.status === 429)).toHaveLength(180);
      const usage = JSON.parse(
        cli(['accounts', 'usage', 'shared', '--json', '--store', redis.url]).stdout,
      ) as { count: number };
      expect(usage.count).toBe(120);
      // A key revoked through Redis is refused by both servers within a second.
      const k2 = JSON.parse(cli(['keys', 'create', 'shared', '--json', '--store', redis.url]).stdout) as {
        id: string;
        key: string;
      };
      await waitFor(
        async () => (await req(b, `/v1/funds/${code}`, `Bearer ${k2.key}`)).status !== 401,
        3000,
        'new key on b',
      );
      expect(cli(['keys', 'revoke', k2.id, '--store', redis.url]).status).toBe(0);
      for (const s of [a, b]) {
        await waitFor(
          async () => (await req(s, `/v1/funds/${code}`, `Bearer ${k2.key}`)).status === 401,
          3000,
          'revoked',
        );
      }
      // A Redis flushed (or restarted empty) went back to change 0: the servers keep
      // the keys they know and say so, instead of refusing every key.
      const { createClient } = await import('redis');
      const c = createClient({ url: redis.url });
      await c.connect();
      await c.flushAll();
      await waitFor(async () => a.logs().includes('went back from change'), 5000, 'flush noticed');
      // The operator is told the counts went with it, not only the keys.
      expect(a.logs()).toMatch(/went back from change[^\n]*request counts and burst state in Redis/);
      // The plans each server recorded at start are recorded again (accounts show reads them).
      await waitFor(async () => (await c.get('fr:plans')) !== null, 8000, 'plans recorded again');
      // Polled every second meanwhile, the same problem is said once, not once a poll.
      expect(a.logs().split('went back from change').length - 1).toBe(1);
      expect(JSON.parse((await c.get('fr:plans')) ?? '{}')).toMatchObject({
        free: { burst: 100_000, monthly: 120 },
      });
      await c.quit();
      expect((await req(a, `/v1/funds/${code}`, auth)).status).not.toBe(401);
      expect((await req(b, `/v1/funds/${code}`, auth)).status).not.toBe(401);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await redis.stop();
    }
  });

  it('a Redis outage gives no account a fresh month: each server admits only what was left (README bound)', async () => {
    const { redis, flags, auth } = await redisAccount('outage', 30);
    const a = await startServe(flags);
    let b: Awaited<ReturnType<typeof startServe>> | null = null;
    try {
      const used = await Promise.all(Array.from({ length: 25 }, () => req(a, `/v1/funds/${code}`, auth)));
      expect(used.every((r) => r.status === 200)).toBe(true);
      // b has never served the account: it knows the count from Redis's usage, read at start.
      b = await startServe(flags);
      await redis.stop({ crash: true });
      for (const s of [a, b]) {
        const during = await Promise.all(Array.from({ length: 40 }, () => req(s, `/v1/funds/${code}`, auth)));
        expect(during.filter((r) => r.status === 200)).toHaveLength(5);
        expect(during.filter((r) => r.status === 429)).toHaveLength(35);
      }
      await waitFor(async () => a.logs().includes('Redis unreachable'), 3000, 'outage logged');
    } finally {
      await Promise.all([a.stop(), b?.stop()]);
      await redis.stop();
    }
  });
});
