/**
 * Which requests the example nginx (deploy/nginx/fundreturns.conf) sends to the other
 * server when the first drops the connection without an answer, as a stopping server
 * does to a kept-alive connection a request has just been written on. The read-only
 * POSTs (batches, MCP) are sent again and answered; a dashboard form, which changes
 * things, is not (a 502 rather than a second sign-up or key). The upstreams are two
 * loopback servers of the test's own: one drops every request it reads, the other
 * answers, so which request is resent is all that varies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './harness.js';
import { type RunningProxy, startProxy } from './nginx.js';
import { toolForTest } from './system-tool.js';

const run = toolForTest('nginx', 'nginx', true) && toolForTest('openssl', 'openssl', true);
const NAME = 'funds.example.test';

let ports: number[] = [];
let dropper: Server;
let answerer: Server;
let proxy: RunningProxy;
let client: Agent;
const dropped: string[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** A request through the proxy: its status. */
async function send(method: 'GET' | 'POST', path: string): Promise<number> {
  const r = await fetch(`https://${NAME}:${proxy.httpsPort}${path}`, {
    method,
    headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
    body: method === 'POST' ? '{"codes":["VFIAX"]}' : undefined,
    dispatcher: client,
  } as RequestInit);
  await r.arrayBuffer();
  return r.status;
}

/** A fresh proxy (nginx's count of each server's failures starts at nothing) for `f`. */
async function withProxy(f: () => Promise<void>): Promise<void> {
  proxy = await startProxy(tempDir('proxy-retry'), ports, NAME);
  client = new Agent({
    connect: {
      ca: proxy.ca,
      servername: NAME,
      lookup: (_h, opts, cb) =>
        opts.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4),
    },
  });
  try {
    await f();
  } finally {
    await client.close();
    await proxy.stop();
  }
}

/** Two requests through a fresh proxy: the two servers take turns, so one meets the dropping server first. */
async function twice(method: 'GET' | 'POST', path: string): Promise<number[]> {
  const statuses: number[] = [];
  dropped.length = 0;
  await withProxy(async () => {
    for (let i = 0; i < 2; i++) statuses.push(await send(method, path));
  });
  expect(dropped).toEqual([`${method} ${path}`]);
  return statuses;
}

describe.runIf(run)('the example nginx when a server drops a request unanswered', () => {
  beforeAll(async () => {
    // Reads the whole request, then closes the connection without a byte of answer.
    dropper = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        dropped.push(`${req.method} ${req.url}`);
        res.socket?.destroy();
      });
    });
    answerer = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    ports = [await listen(dropper), await listen(answerer)];
  });

  afterAll(async () => {
    if (dropper) await close(dropper);
    if (answerer) await close(answerer);
  });

  it('a dashboard form (POST /account/...) is not sent again: the drop is a 502', async () => {
    expect((await twice('POST', '/account/login')).sort()).toEqual([200, 502]);
  }, 30_000);

  it.each([
    ['POST', '/v1/trailing-returns/batch'],
    ['POST', '/v1/calendar-returns/batch'],
    ['POST', '/v1/risk/batch'],
    ['POST', '/mcp'],
    ['GET', '/v1/funds/VFIAX/trailing-returns'],
  ] as const)(
    '%s %s is sent to the other server and answered',
    async (method, path) => {
      expect(await twice(method, path)).toEqual([200, 200]);
    },
    30_000,
  );
});
