import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guard, guardRoutes, onInternalError } from './guard.js';
import { loadUws, type TemplatedApp, type us_listen_socket } from './uws.js';

let app: TemplatedApp;
let socket: us_listen_socket | null = null;
let base = '';
const reported: unknown[] = [];

beforeAll(async () => {
  const uws = loadUws();
  app = uws.App();
  guardRoutes(app);
  onInternalError((e) => reported.push(e));
  app.get('/throws', () => {
    throw new Error('handler bug');
  });
  app.get('/rejects', async () => {
    throw new Error('async handler bug');
  });
  app.get('/after-end', (res) => {
    res.end('done');
    throw new Error('bug after the answer');
  });
  app.post('/body-throws', (res) => {
    res.onAborted(() => {});
    res.onData((_chunk, last) =>
      guard(res, () => {
        if (last) throw new Error('bug in a body callback');
      }),
    );
  });
  app.get('/ok', (res) => {
    res.end('ok');
  });
  const port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => {
      if (!s) return reject(new Error('cannot listen'));
      socket = s;
      resolve(uws.us_socket_local_port(s));
    }),
  );
  base = `http://127.0.0.1:${port}`;
});

afterAll(() => {
  if (socket) loadUws().us_listen_socket_close(socket);
});

describe('an exception in a handler (C21)', () => {
  it('is a 500 with a detail, logged, and the server goes on', async () => {
    for (const path of ['/throws', '/rejects']) {
      const r = await fetch(base + path);
      expect(r.status).toBe(500);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(await r.json()).toEqual({ detail: 'Internal Server Error' });
    }
    const b = await fetch(`${base}/body-throws`, { method: 'POST', body: 'x'.repeat(100_000) });
    expect(b.status).toBe(500);
    expect(reported.map((e) => (e as Error).message)).toEqual([
      'handler bug',
      'async handler bug',
      'bug in a body callback',
    ]);
    expect(await (await fetch(`${base}/ok`)).text()).toBe('ok');
  });

  it('after the answer was written leaves that answer alone', async () => {
    const r = await fetch(`${base}/after-end`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('done');
    expect(await (await fetch(`${base}/ok`)).text()).toBe('ok');
  });
});
