/**
 * `--store redis://…` when Redis accepts connections but does not answer (stopped with
 * SIGSTOP, hung, or the path to it black-holed): the command line fails within seconds
 * with one line naming the URL, and a server's store still rides the stall out and
 * recovers. A proxy in front of a real redis-server plays the hung Redis: frozen, it
 * accepts connections and forwards nothing, as a stopped process's kernel does.
 */
import net from 'node:net';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AccessChange, Account } from '../accounts/model.js';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { RedisAccessStore } from '../accounts/store-redis.js';
import { cliAsync, testNow } from './harness.js';

interface Proxy {
  readonly url: string;
  /** Stop forwarding in both directions (connections stay open; new ones are accepted). */
  freeze(): void;
  thaw(): void;
  /** Freeze as soon as the client sends bytes containing `marker` (those bytes are held too). */
  freezeOn(marker: string): void;
  close(): Promise<void>;
}

async function startProxy(targetPort: number): Promise<Proxy> {
  let frozen = false;
  let marker: string | null = null;
  const pairs = new Set<{ c: net.Socket; u: net.Socket; held: Buffer[] }>();
  const server = net.createServer((c) => {
    const u = net.connect({ port: targetPort, host: '127.0.0.1' });
    const pair = { c, u, held: [] as Buffer[] };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      c.destroy();
      u.destroy();
    };
    c.on('error', end).on('close', end);
    u.on('error', end).on('close', end);
    c.on('data', (d: Buffer) => {
      if (!frozen && marker !== null && d.includes(marker)) {
        marker = null;
        pair.held.push(d);
        freeze();
        return;
      }
      u.write(d);
    });
    u.on('data', (d: Buffer) => c.write(d));
    if (frozen) {
      c.pause();
      u.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  function freeze(): void {
    frozen = true;
    for (const p of pairs) {
      p.c.pause();
      p.u.pause();
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    freeze,
    thaw() {
      frozen = false;
      for (const p of pairs) {
        for (const d of p.held.splice(0)) p.u.write(d);
        p.c.resume();
        p.u.resume();
      }
    },
    freezeOn(m) {
      marker = m;
    },
    async close() {
      for (const p of pairs) {
        p.c.destroy();
        p.u.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const account = (name: string): Account => ({
  id: `acct_${Buffer.from(name.padEnd(6, '_').slice(0, 6)).toString('hex')}`,
  name,
  plan: 'free',
  status: 'active',
  created_at: new Date(testNow()).toISOString(),
});

let redis: RedisServer;
let proxy: Proxy;
const stores: RedisAccessStore[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  proxy?.thaw();
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await proxy?.close();
  const c = createClient({ url: redis.url });
  await c.connect();
  await c.flushAll();
  await c.close();
});

async function openStore(url: string, log?: (msg: string) => void): Promise<RedisAccessStore> {
  const s = new RedisAccessStore(url, {
    pollMs: 100,
    timeoutMs: 300,
    connectTimeoutMs: 500,
    log: (_level, msg) => log?.(msg),
  });
  stores.push(s);
  await s.connect();
  return s;
}

describe('the command line against a Redis that does not answer', () => {
  it('fails within seconds with one line naming the URL and exit 1, instead of hanging', async () => {
    proxy = await startProxy(redis.port);
    proxy.freeze();
    for (const args of [
      ['accounts', 'list'],
      ['accounts', 'create', 'acme', '--plan', 'free'],
    ]) {
      const r = await cliAsync([...args, '--store', proxy.url]);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.ms).toBeLessThan(9000);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `fundreturns: cannot connect to the store at ${proxy.url}: no answer from Redis within 5000 ms`,
      );
    }
  });

  it('still fails at once when Redis refuses connections', async () => {
    proxy = await startProxy(redis.port);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const r = await cliAsync(['accounts', 'list', '--store', `redis://127.0.0.1:${port}`]);
    expect(r.status).toBe(1);
    expect(r.ms).toBeLessThan(3000);
    expect(r.stderr).toContain(`cannot connect to the store at redis://127.0.0.1:${port}`);
    expect(r.stderr).toContain('ECONNREFUSED');
  });

  it('works through the proxy when Redis answers (the proxy itself is transparent)', async () => {
    proxy = await startProxy(redis.port);
    const r = await cliAsync(['accounts', 'create', 'acme', '--plan', 'free', '--store', proxy.url]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('never prints a password from the URL', async () => {
    proxy = await startProxy(redis.port);
    proxy.freeze();
    const url = proxy.url.replace('redis://', 'redis://admin:s3cret@');
    const r = await cliAsync(['accounts', 'list', '--store', url]);
    expect(r.status).toBe(1);
    expect(r.stderr).not.toContain('s3cret');
    const refused = await cliAsync(['accounts', 'list', '--store', 'redis://admin:s3cret@127.0.0.1:1']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).not.toContain('s3cret');
  });
});

describe('RedisAccessStore when Redis stops answering', () => {
  it('connect() fails after connectTimeoutMs, and close() then returns', async () => {
    proxy = await startProxy(redis.port);
    proxy.freeze();
    const s = new RedisAccessStore(proxy.url, { connectTimeoutMs: 400 });
    const t = Date.now();
    await expect(s.connect()).rejects.toThrow('no answer from Redis within 400 ms');
    expect(Date.now() - t).toBeLessThan(2000);
    await s.close();
  });

  it('a hung call fails with the URL after timeoutMs, and the store recovers when Redis answers again', async () => {
    proxy = await startProxy(redis.port);
    const s = await openStore(proxy.url);
    await s.change({ op: 'account.create', account: account('acme') });
    proxy.freeze();
    const t = Date.now();
    await expect(s.read()).rejects.toThrow(`no answer from Redis at ${proxy.url} within 300 ms`);
    // Meanwhile calls fail at once (the replacement connection is still reconnecting).
    await expect(s.readUsage('2026-01')).rejects.toThrow(
      `Redis at ${proxy.url} is unreachable (reconnecting)`,
    );
    expect(Date.now() - t).toBeLessThan(2000);
    proxy.thaw();
    // The replaced connection retries in the background: no restart needed.
    let names: string[] = [];
    for (let i = 0; i < 50 && names.length === 0; i++) {
      names = await s.read().then(
        (st) => st.accounts.map((a) => a.name),
        () => [],
      );
      if (names.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(names).toEqual(['acme']);
  });

  it('a server-side subscriber warns once, keeps going, and hears changes again after the stall', async () => {
    proxy = await startProxy(redis.port);
    const logs: string[] = [];
    const s = await openStore(proxy.url, (m) => logs.push(m));
    await s.read();
    let changes = 0;
    s.subscribe(() => {
      changes++;
    });
    await new Promise((r) => setTimeout(r, 300));
    proxy.freeze();
    await new Promise((r) => setTimeout(r, 1500));
    expect(logs.filter((m) => m.includes('unreachable'))).toHaveLength(1);
    proxy.thaw();
    // A change made directly in Redis (another admin) is heard once Redis answers.
    const other = await openStore(redis.url);
    await other.change({ op: 'account.create', account: account('later') });
    for (let i = 0; i < 50 && changes === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(changes).toBeGreaterThan(0);
    for (let i = 0; i < 50 && !logs.includes('redis access store reachable again'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(logs).toContain('redis access store reachable again');
    expect((await s.read()).accounts.map((a) => a.name)).toEqual(['later']);
  });

  it('close() returns while a subscriber is still waiting for a Redis that does not answer', async () => {
    proxy = await startProxy(redis.port);
    const s = await openStore(proxy.url);
    proxy.freeze();
    s.subscribe(() => {});
    await new Promise((r) => setTimeout(r, 200));
    const t = Date.now();
    stores.splice(stores.indexOf(s), 1);
    await s.close();
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it('a change whose reply never comes says it may or may not have been recorded', async () => {
    proxy = await startProxy(redis.port);
    const s = await openStore(proxy.url);
    await s.read();
    proxy.freezeOn('EVALSHA');
    const c: AccessChange = { op: 'account.create', account: account('acme') };
    await expect(s.change(c)).rejects.toThrow(
      /no answer from Redis at .* within 300 ms: the change may or may not/,
    );
  });
});
