/**
 * A local stand-in for EOD Historical Data's API (node:http on 127.0.0.1, port 0):
 * it answers from fixtures/eodhd/ in the provider's documented formats, and fails on
 * request the way the provider does (429, 402, 5xx, a maintenance page, no answer).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('./fixtures/eodhd/', import.meta.url));

/** One scripted answer instead of the fixture: a status (with headers and body), or silence. */
export type Fault =
  | { status: number; headers?: Record<string, string>; body?: string }
  | { hang: true }
  | { body: string };

export interface FakeEodhd {
  url: string;
  /** Every request's path and query, token included (the test checks it was sent). */
  requests: string[];
  /** Answers to give, in order, before the fixture, per route: `bulk`, `dividends`, `splits`, `symbols`, `eod`. */
  faults: Map<string, Fault[]>;
  close(): Promise<void>;
}

function route(path: string, q: URLSearchParams): { key: string; file: string } | null {
  if (path === '/api/eod-bulk-last-day/US') {
    const type = q.get('type');
    const key = type === 'dividends' ? 'dividends' : type === 'splits' ? 'splits' : 'bulk';
    return { key, file: `${key === 'bulk' ? 'eod-bulk' : key}-${q.get('date')}.csv` };
  }
  if (path === '/api/exchange-symbol-list/US')
    return { key: 'symbols', file: `exchange-symbol-list-${q.get('type')}.csv` };
  const m = /^\/api\/eod\/([^/]+)$/.exec(path);
  if (m) return { key: 'eod', file: `eod-${decodeURIComponent(m[1])}.csv` };
  return null;
}

export async function startFakeEodhd(token: string): Promise<FakeEodhd> {
  const requests: string[] = [];
  const faults = new Map<string, Fault[]>();
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(`${u.pathname}${u.search}`);
    if (u.searchParams.get('api_token') !== token) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthenticated');
      return;
    }
    const r = route(u.pathname, u.searchParams);
    if (r === null) {
      res.writeHead(404).end('Not found');
      return;
    }
    const fault = faults.get(r.key)?.shift();
    if (fault !== undefined) {
      if ('hang' in fault) {
        hanging.add(res);
        return;
      }
      if ('status' in fault) {
        res.writeHead(fault.status, fault.headers ?? { 'content-type': 'text/plain' }).end(fault.body ?? '');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv' }).end(fault.body);
      return;
    }
    let body: string;
    try {
      body = readFileSync(join(FIXTURES, r.file), 'utf8');
    } catch {
      // The provider answers a day it has nothing for with an empty file.
      body = '';
    }
    res.writeHead(200, { 'content-type': 'text/csv' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
