/**
 * Clients that pipeline requests and never read the answers: the
 * server holds a bounded amount of unread answers per connection, whatever the plan's
 * burst, and drops a connection that falls that far behind.
 */
import { readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedUniverse, startServedUniverse, waitFor } from './harness.js';

let u: ServedUniverse;

beforeAll(async () => {
  // A plan with a burst of 1,000,000 a minute (harness.setupAccess): the limiter never stops them.
  u = await startServedUniverse('unread');
});

afterAll(async () => {
  await u?.server.stop();
  if (u) rmSync(u.dir, { recursive: true, force: true });
});

/** The server process's resident memory, in bytes (VmRSS of /proc/<pid>/status). */
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error('no VmRSS');
  return Number(m[1]) * 1024;
}

describe('clients that pipeline and never read', () => {
  it('cannot pile batch answers up in the server: memory stays bounded, they are dropped, others are served', async () => {
    const SOCKETS = 8;
    const REQUESTS = 300;
    const body = JSON.stringify({ codes: u.codes.slice(0, 100) });
    const request =
      `POST /v1/trailing-returns/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${u.access.headers.authorization}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // One answer's size, to say how much the requests ask for in all.
    const one = await fetch(`${u.server.url}/v1/trailing-returns/batch`, {
      method: 'POST',
      headers: { ...u.access.headers, 'content-type': 'application/json' },
      body,
    });
    const answerBytes = (await one.arrayBuffer()).byteLength;
    expect(answerBytes).toBeGreaterThan(30_000);
    const pid = u.server.child.pid!;
    const before = rss(pid);

    const sockets: Socket[] = [];
    const received = new Map<Socket, number>();
    const closed = new Set<Socket>();
    try {
      for (let i = 0; i < SOCKETS; i++) {
        const s = connect(u.server.port, '127.0.0.1');
        // Not reading: the kernel's buffers fill, then whatever the server keeps is its own memory.
        s.pause();
        s.on('error', () => {});
        s.on('close', () => closed.add(s));
        s.on('data', (d: Buffer) => received.set(s, (received.get(s) ?? 0) + d.length));
        await new Promise<void>((resolve) => s.once('connect', () => resolve()));
        s.write(request.repeat(REQUESTS));
        sockets.push(s);
      }
      // ~8 × 300 × 46 KB ≈ 110 MB of answers asked for, past what loopback's socket buffers hold.
      expect(SOCKETS * REQUESTS * answerBytes).toBeGreaterThan(100_000_000);
      let grown = 0;
      for (const end = Date.now() + 3000; Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 100));
        grown = Math.max(grown, rss(pid) - before);
      }
      // A normal request on a fresh connection is answered at once.
      const t0 = Date.now();
      const r = await fetch(`${u.server.url}/v1/funds/${u.codes[0]}`, { headers: u.access.headers });
      expect(r.status).toBe(200);
      expect(Date.now() - t0).toBeLessThan(500);
      // Under 1 MiB per connection stays in the server; the rest is V8's garbage and noise.
      expect(grown, `RSS grew by ${(grown / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(40 * 2 ** 20);
      // Reading now, each client finds its connection closed after a part of its answers
      // (a paused socket sees the server's close only when it reads).
      for (const s of sockets) s.resume();
      await waitFor(() => closed.size === SOCKETS, 10_000, 'every connection closed by the server');
      for (const s of sockets) expect(received.get(s) ?? 0).toBeLessThan((REQUESTS * answerBytes) / 2);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('single lookups too: a client pipelining 50,000 of them without reading is dropped once far behind', async () => {
    // The commonest answers (a prepared row, written straight from the route callback)
    // take the same bound: ~40 MB asked for, of which the server sends what the socket
    // buffers take, keeps at most ~1 MiB, and then drops the connection.
    const REQUESTS = 50_000;
    const request = `GET /v1/funds/${u.codes[3]}/trailing-returns HTTP/1.1\r\nHost: x\r\nAuthorization: ${u.access.headers.authorization}\r\n\r\n`;
    const one = await fetch(`${u.server.url}/v1/funds/${u.codes[3]}/trailing-returns`, {
      headers: u.access.headers,
    });
    expect(one.status).toBe(200);
    const answerBytes = (await one.arrayBuffer()).byteLength;
    const s = connect(u.server.port, '127.0.0.1');
    let received = 0;
    let closed = false;
    try {
      s.pause();
      s.on('error', () => {});
      s.on('close', () => {
        closed = true;
      });
      s.on('data', (d: Buffer) => {
        received += d.length;
      });
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
      s.write(request.repeat(REQUESTS));
      await new Promise((r) => setTimeout(r, 2000));
      s.resume();
      await waitFor(() => closed, 10_000, 'the server closing the connection');
      expect(received).toBeLessThan((REQUESTS * answerBytes) / 2);
    } finally {
      s.destroy();
    }
  });
});
