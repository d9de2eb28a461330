/**
 * A local stand-in for EOD Historical Data's API (node:http on 127.0.0.1, port 0):
 * it answers from fixtures/eodhd/, or from a generated universe (a source directory of
 * builder/generate: funds.csv, prices/, daily/), in the provider's documented formats,
 * and fails on request the way the provider does (429, 402, 5xx, a maintenance page,
 * no answer, a body cut short, an HTML page where a history should be).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFundsFile } from '../source/funds.js';
import { RATES_PATH } from '../source/rates.js';
import { RATES_SYMBOL } from './eodhd.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/eodhd/', import.meta.url));

/**
 * One scripted answer instead of the data: a status (with headers and body), silence,
 * a body, or the real body cut short (the connection dropped halfway, Content-Length
 * promising the whole).
 */
type Fault =
  | { status: number; headers?: Record<string, string>; body?: string }
  | { hang: true }
  | { body: string }
  | { cut: true };

export interface FakeEodhdOptions {
  /** A generated source directory to answer from instead of fixtures/eodhd/. */
  universe?: string;
  /** The provider's last day of data (YYYY-MM-DD): histories end there, later bulk days are empty. Default: all. */
  today?: string;
  /** The provider's daily limit in API calls (a bulk request is 100): past it, 402. Default: none. */
  dailyLimit?: number;
  /** Called with each request's number (from 1) and path before it is answered. */
  onRequest?: (n: number, path: string) => void;
}

export interface FakeEodhd {
  url: string;
  /** Every request's path and query, token included (the test checks it was sent). */
  requests: string[];
  /** When each request arrived (performance.now()), beside `requests`. */
  times: number[];
  /** Answers to give, in order, before the data, per route: `bulk`, `dividends`, `splits`, `symbols`, `eod`. */
  faults: Map<string, Fault[]>;
  /** A fault every history request of one code gets (an HTML page, a 404, an empty body). */
  codeFaults: Map<string, Fault>;
  /** The provider's last day of data; tests move it as the provider publishes a day. */
  today: string | undefined;
  /** API calls counted against the daily limit (set to 0: the midnight GMT reset). */
  calls: number;
  dailyLimit: number | undefined;
  close(): Promise<void>;
}

interface DailyRow {
  close: string;
  adj: string;
  dividend: string;
  split: string;
}

/** A generated universe as the provider holds it: its fund list, price files and daily files (by day, by code). */
class Universe {
  readonly lists: { active: string[][]; delisted: string[][] } = { active: [], delisted: [] };
  readonly days = new Map<string, Map<string, DailyRow>>();
  constructor(readonly dir: string) {
    const funds = parseFundsFile(readFileSync(join(dir, 'funds.csv')), 'funds.csv').funds;
    for (const f of funds) {
      const cells = [
        f.code,
        f.name ?? '',
        f.country ?? '',
        f.exchange ?? '',
        f.currency ?? '',
        f.type,
        f.isin ?? '',
      ];
      (f.isInactive ? this.lists.delisted : this.lists.active).push(cells);
    }
    const dailyDir = join(dir, 'daily');
    if (!existsSync(dailyDir)) return;
    for (const name of readdirSync(dailyDir).sort()) {
      const m = /^(\d{4}-\d{2}-\d{2})\.csv$/.exec(name);
      if (m === null) continue;
      const rows = new Map<string, DailyRow>();
      const [header, ...lines] = readFileSync(join(dailyDir, name), 'utf8').trimEnd().split('\n');
      if (header !== 'Code,Date,Close,Adjusted_close,Dividend,Split')
        throw new Error(`${name}: not a generated daily file (${header})`);
      for (const line of lines) {
        const [code, , close, adj, dividend, split] = line.split(',');
        rows.set(code, { close, adj, dividend, split });
      }
      this.days.set(m[1], rows);
    }
  }

  symbols(type: string | null, delisted: boolean): string {
    const want = type === 'etf' ? 'ETF' : type === 'fund' ? 'FUND' : null;
    let out = 'Code,Name,Country,Exchange,Currency,Type,Isin\n';
    for (const cells of delisted ? this.lists.delisted : this.lists.active)
      if (want === null || cells[5] === want) out += `${cells.map(csvCell).join(',')}\n`;
    return out;
  }

  /** `/api/eod/{CODE}.US`: the price file's rows and the daily files' rows up to `today`; null: no such ticker. */
  history(code: string, today: string | undefined): string | null {
    const file = upTo(join(this.dir, 'prices', `${code}.csv`), today);
    let out = file ?? 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
    let found = file !== null;
    for (const [day, rows] of this.days) {
      if (today !== undefined && day > today) break;
      const r = rows.get(code);
      if (r === undefined) continue;
      found = true;
      out += `${day},${r.close},${r.close},${r.close},${r.close},${r.adj},0\n`;
    }
    return found ? out : null;
  }

  /** A bulk day (prices, dividends or splits) from the daily files; empty when the provider has no such day (yet). */
  bulk(key: string, date: string, today: string | undefined): string {
    const rows = today !== undefined && date > today ? undefined : this.days.get(date);
    if (rows === undefined) return '';
    let out =
      key === 'dividends'
        ? 'Code,Ex,Date,Dividend,Currency\n'
        : key === 'splits'
          ? 'Code,Ex,Date,Split\n'
          : 'Code,Ex,Date,Open,High,Low,Close,Adjusted_close,Volume\n';
    for (const [code, r] of rows) {
      if (key === 'dividends') {
        if (r.dividend !== '') out += `${code},US,${date},${r.dividend},USD\n`;
      } else if (key === 'splits') {
        if (r.split !== '') out += `${code},US,${date},${splitText(Number(r.split))}\n`;
      } else out += `${code},US,${date},${r.close},${r.close},${r.close},${r.close},${r.adj},0\n`;
    }
    return out;
  }
}

/** A price file's rows up to `today` (all: undefined), or null when there is no such file. */
function upTo(path: string, today: string | undefined): string | null {
  if (!existsSync(path)) return null;
  const file = readFileSync(path, 'utf8');
  if (today === undefined) return file;
  const lines = file.split('\n');
  let keep = lines.length;
  while (keep > 1 && (lines[keep - 1] === '' || lines[keep - 1].slice(0, 10) > today)) keep--;
  return `${lines.slice(0, keep).join('\n')}\n`;
}

/** A split as the provider writes it, new/old shares: 2 → `2.000000/1.000000`, 0.25 → `1.000000/4.000000`. */
function splitText(ratio: number): string {
  return ratio >= 1 ? `${ratio.toFixed(6)}/1.000000` : `1.000000/${(1 / ratio).toFixed(6)}`;
}

function csvCell(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
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

export async function startFakeEodhd(token: string, opts: FakeEodhdOptions = {}): Promise<FakeEodhd> {
  const requests: string[] = [];
  const times: number[] = [];
  const faults = new Map<string, Fault[]>();
  const codeFaults = new Map<string, Fault>();
  const hanging = new Set<ServerResponse>();
  const universe = opts.universe === undefined ? null : new Universe(opts.universe);
  /** The answer from the data: a body, or null for a ticker the provider does not know (404). */
  const answer = (r: { key: string; file: string }, u: URL): string | null => {
    if (universe === null) {
      try {
        return readFileSync(join(FIXTURES, r.file), 'utf8');
      } catch {
        // The provider answers a day it has nothing for with an empty file.
        return '';
      }
    }
    const q = u.searchParams;
    if (r.key === 'symbols') return universe.symbols(q.get('type'), q.get('delisted') === '1');
    // The government-bond series (C41) as EODHD serves it: the same end-of-day CSV, the yield as its prices.
    if (r.file === `eod-${RATES_SYMBOL}.csv`) return upTo(join(universe.dir, RATES_PATH), fake.today);
    if (r.key === 'eod') return universe.history(r.file.slice(4, -7), fake.today);
    return universe.bulk(r.key, q.get('date') ?? '', fake.today);
  };
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(`${u.pathname}${u.search}`);
    times.push(performance.now());
    opts.onRequest?.(requests.length, u.pathname);
    if (u.searchParams.get('api_token') !== token) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthenticated');
      return;
    }
    const r = route(u.pathname, u.searchParams);
    if (r === null) {
      res.writeHead(404).end('Not found');
      return;
    }
    // The provider's count: a whole-exchange bulk request is 100 calls, anything else here 1.
    const cost = u.pathname.startsWith('/api/eod-bulk') ? 100 : 1;
    if (fake.dailyLimit !== undefined && fake.calls + cost > fake.dailyLimit) {
      res.writeHead(402, { 'content-type': 'text/plain' }).end('Payment Required: daily limit reached');
      return;
    }
    fake.calls += cost;
    const code =
      r.file === `eod-${RATES_SYMBOL}.csv` ? RATES_SYMBOL : r.key === 'eod' ? r.file.slice(4, -7) : '';
    const fault = faults.get(r.key)?.shift() ?? codeFaults.get(code);
    if (fault !== undefined && !('cut' in fault)) {
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
    const body = answer(r, u);
    if (body === null) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Ticker Not Found.');
      return;
    }
    if (fault !== undefined) {
      // Half the body, then the connection drops: the client must not take it for whole.
      const bytes = Buffer.from(body);
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(bytes.length) });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
      return;
    }
    res.writeHead(200, { 'content-type': 'text/csv' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fake: FakeEodhd = {
    url: `http://127.0.0.1:${port}`,
    requests,
    times,
    faults,
    codeFaults,
    today: opts.today,
    calls: 0,
    dailyLimit: opts.dailyLimit,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
