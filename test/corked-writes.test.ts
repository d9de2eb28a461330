/**
 * Answers decided after the route callback returns (a Redis gate's reply, an unknown
 * key looked up in the store, a body that arrives later) are written inside a corked
 * callback: uWS otherwise warns on stderr for every such request (a log anyone can
 * flood without a key) and sends the answer in several writes. test/setup.ts fails a
 * test during which any server printed a uWS warning; these requests are the ones that
 * did.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_BODY_LENGTH, KEY_PREFIX } from '../accounts/keys.js';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { cli, generateAndBuild, type ServerProcess, setupAccess, startServe, tempDir } from './harness.js';
import { takeUwsWarnings } from './processes.js';

const dir = tempDir('corked');
let snapshots: string;
let codes: string[];
let redis: RedisServer | undefined;
const servers: ServerProcess[] = [];

const unknownKey = () =>
  KEY_PREFIX + randomBytes(KEY_BODY_LENGTH).toString('base64url').slice(0, KEY_BODY_LENGTH);

/**
 * One request on its own connection, the whole answer read as raw bytes: the number
 * of TCP reads is not asserted (the kernel may merge writes), only that it is whole.
 */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => {
      out += d;
    });
    s.on('end', () => resolve(out));
    s.on('error', reject);
    // No half-close: uWS drops a request whose client has shut its side before the answer.
    s.write(request);
  });
}

function post(path: string, key: string, body: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

beforeAll(async () => {
  ({ snapshots } = generateAndBuild(dir, 12));
});

afterAll(async () => {
  for (const s of servers) await s.stop();
  await redis?.stop();
});

async function fundCodes(server: ServerProcess, key: string): Promise<string[]> {
  const r = await fetch(`${server.url}/v1/funds?limit=3`, { headers: { authorization: `Bearer ${key}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: { code: string }[] }).data.map((f) => f.code);
}

describe('answers written after the route callback are corked', () => {
  it('a batch POST answered 200 through the Redis gate: no uWS warning', async () => {
    redis = await startRedis();
    expect(cli(['accounts', 'create', 'corked', '--plan', 'business', '--store', redis.url]).status).toBe(0);
    const k = cli(['keys', 'create', 'corked', '--json', '--store', redis.url]);
    expect(k.status).toBe(0);
    const key = (JSON.parse(k.stdout) as { key: string }).key;
    const server = await startServe(['--store', redis.url, '--snapshots', snapshots, '--threads', '1']);
    servers.push(server);
    codes = await fundCodes(server, key);
    takeUwsWarnings();
    for (const path of ['/v1/trailing-returns/batch', '/v1/calendar-returns/batch']) {
      const answer = await raw(server.port, post(path, key, JSON.stringify({ codes })));
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(answer).toContain(`"code":"${codes[0]}"`);
    }
    // Let stderr arrive before test/setup.ts looks at it.
    await new Promise((r) => setTimeout(r, 200));
    expect(takeUwsWarnings()).toEqual([]);
  }, 60_000);

  it('POSTs with a well-formed unknown key on the embedded store (batch and /mcp): 401, no uWS warning', async () => {
    const access = setupAccess(`${dir}/file-store`);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '1']);
    servers.push(server);
    takeUwsWarnings();
    const mcp = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    for (let i = 0; i < 5; i++) {
      const batch = await raw(
        server.port,
        post('/v1/trailing-returns/batch', unknownKey(), '{"codes":["X"]}'),
      );
      expect(batch).toMatch(/^HTTP\/1\.1 401 /);
      const rpc = await raw(server.port, post('/mcp', unknownKey(), mcp));
      expect(rpc).toMatch(/^HTTP\/1\.1 401 /);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(takeUwsWarnings()).toEqual([]);
  }, 60_000);
});
