/**
 * What this uWebSockets.js build (@trufflesuite/uws-js-unofficial 20.30.0, built from
 * uWebSockets 7999d09) does on its own, pinned against a bare app: the README's list of
 * the parser's limits rests on these, and a newer build that changes one fails here.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUws, type TemplatedApp, type us_listen_socket } from './uws.js';

let app: TemplatedApp;
let socket: us_listen_socket | null = null;
let port = 0;
let handled = 0;

beforeAll(async () => {
  const uws = loadUws();
  app = uws.App();
  app.any('/*', (res) => {
    handled++;
    res.end('ok');
  });
  port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => {
      if (!s) return reject(new Error('cannot listen'));
      socket = s;
      resolve(uws.us_socket_local_port(s));
    }),
  );
});

afterAll(() => {
  if (socket) loadUws().us_listen_socket_close(socket);
});

/** Send `text` on a new connection; what came back and when the server closed it (ms), or null by `waitMs`. */
function exchange(text: string, waitMs: number): Promise<{ text: string; closedAfter: number | null }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(text));
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text: got, closedAfter: null });
    }, waitMs);
    s.on('data', (d) => {
      got += d;
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text: got, closedAfter: Date.now() - t0 });
    });
  });
}

const request = (header: string) => `GET / HTTP/1.1\r\nHost: x\r\n${header}\r\nConnection: close\r\n\r\n`;

describe('this uWebSockets.js build', () => {
  it('runs no handler and sends no answer for a control byte in a header value, and drops the ' +
    'connection only at its idle timeout of 10 s: no app can answer it 400', async () => {
    // The parser (HttpParser.h getHeaders) returns 0 for an invalid byte as for a request
    // not yet complete: the bytes wait in its 4 KB fallback buffer, nothing reaches
    // JavaScript, and only uSockets' timeout (10 s, swept every 4 s: 8–12 s) ends it.
    // uWebSockets answers 400 from 5ee9ac5 (v20.69.0, 2024) on.
    const before = handled;
    const bad = ['\x00', '\x01', '\x1b', '\x1f'].map((c) => exchange(request(`X-A: a${c}b`), 20_000));
    // Meanwhile every other connection is served, and TAB is a byte a value may hold.
    const tab = await exchange(request('X-A: a\tb'), 5000);
    expect(tab.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(tab.closedAfter).not.toBeNull();
    for (const r of await Promise.all(bad)) {
      expect(r.text).toBe('');
      expect(r.closedAfter).not.toBeNull();
      expect(r.closedAfter!).toBeGreaterThan(6000);
      expect(r.closedAfter!).toBeLessThan(14_000);
    }
    expect(handled - before).toBe(1);
  }, 30_000);

  it('sends no `uWebSockets: 20` header once loadUws has silenced it', async () => {
    const r = await exchange(request('Accept: */*'), 5000);
    expect(r.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(r.text).toMatch(/\r\nDate: /);
    expect(r.text).not.toMatch(/uWebSockets/i);
  });
});
