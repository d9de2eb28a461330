import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromYmd } from '../../core/dates.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { scratch } from '../build.test-helper.js';
import { CallMeter } from './call-meter.js';
import { eodhdProvider, RATES_SYMBOL } from './eodhd.js';
import { type FakeEodhd, startFakeEodhd } from './eodhd-server.test-helper.js';
import { LOAD_REPORT, LOAD_STATE_DIR, type LoadProgress, LoadStopped } from './first-load.js';
import {
  buildOfUniverse,
  currentCodes,
  expectSameSnapshot,
  filesUnder,
  type StandInUniverse,
  standInUniverse,
} from './first-load.test-helper.js';
import { DEFAULT_GATES } from './gates.js';
import { type RefreshOptions, refresh } from './refresh.js';
import { evening } from './refresh.test-helper.js';

const dir = scratch('fr-first-load-');
const TOKEN = 'first-L0ad-t0ken-never-shown';
// Friday 2026-11-20: the universe's last session; its daily files hold the 19th and the 20th.
const TO = fromYmd(2026, 11, 20);
const NOW = evening('2026-11-20');

let universe: StandInUniverse;
let expected: string;
beforeAll(async () => {
  universe = await standInUniverse(dir('universe'), {
    funds: 60,
    seed: 11,
    from: fromYmd(2016, 1, 4),
    to: TO,
    dailyDays: 2,
  });
  expected = await buildOfUniverse(universe, dir('expected'), NOW);
}, 120_000);

const servers: FakeEodhd[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function standIn(opts: Parameters<typeof startFakeEodhd>[1] = {}): Promise<FakeEodhd> {
  const s = await startFakeEodhd(TOKEN, { universe: universe.dir, ...opts });
  servers.push(s);
  return s;
}

/** A first load into `name`'s empty directories, from `server`; its lines, progress and waits kept. */
function loader(name: string, server: FakeEodhd) {
  const root = dir(name);
  const source = join(root, 'source');
  const snapshots = join(root, 'snapshots');
  const said: string[] = [];
  const progress: LoadProgress[] = [];
  const waits: number[] = [];
  const run = (more: Partial<RefreshOptions> & { maxCalls?: number; maxRate?: number } = {}) => {
    const meter = new CallMeter({ maxRate: more.maxRate ?? 1_000_000, maxCalls: more.maxCalls });
    const provider = eodhdProvider({
      baseUrl: server.url,
      token: TOKEN,
      timeoutMs: 2000,
      retries: 3,
      meter,
      sleep: async (ms) => {
        waits.push(ms);
      },
      say: (l) => said.push(l),
    });
    const opts: RefreshOptions = {
      source,
      snapshots,
      provider,
      keep: 5,
      maxBadShare: 0.01,
      gates: DEFAULT_GATES,
      now: NOW,
      say: (l) => said.push(l),
      load: { concurrency: 4, meter, onProgress: (p) => progress.push(p) },
      ...more,
    };
    return refresh(opts);
  };
  return { source, snapshots, said, progress, waits, run };
}

/** Funds' histories: not the rates (C41), which a load asks for once. */
const historyRequests = (s: FakeEodhd) =>
  s.requests.filter((r) => r.startsWith('/api/eod/') && !r.startsWith(`/api/eod/${RATES_SYMBOL}`));
const codeOf = (r: string) => (/^\/api\/eod\/([^.?]+)\.US/.exec(r) as RegExpExecArray)[1];

describe('the first load from nothing (EODHD stand-in serving a generated universe)', () => {
  it('publishes a snapshot whose every figure equals build of the universe’s files, the last day from the bulk API', async () => {
    // The provider publishes the 20th while the load runs: the first histories end on the 19th.
    let histories = 0;
    const server: FakeEodhd = await standIn({
      today: universe.dailyDates[0],
      onRequest: (_n, path) => {
        if (path.startsWith('/api/eod/') && ++histories === 20) server.today = universe.to;
      },
    });
    const l = loader('whole', server);
    const r = await l.run();
    expect(r.outcome).toBe('published');
    expect(r.days).toEqual([universe.to]);
    await expectSameSnapshot(l.snapshots, expected);
    // Current and delisted lists, one history per fund, one bulk day (prices, dividends, splits).
    const lists = server.requests.filter((q) => q.startsWith('/api/exchange-symbol-list/US'));
    expect(
      lists
        .map((q) => new URLSearchParams(q.split('?')[1]))
        .map((p) => `${p.get('type')}${p.get('delisted') ?? ''}`)
        .sort(),
    ).toEqual(['etf', 'etf1', 'fund', 'fund1']);
    const codes = historyRequests(server).map(codeOf);
    expect(new Set(codes).size).toBe(codes.length);
    expect(server.requests.filter((q) => q.startsWith('/api/eod-bulk-last-day/US'))).toHaveLength(3);
    // … and the rates, once (C41).
    expect(server.requests.filter((q) => q.startsWith(`/api/eod/${RATES_SYMBOL}?`))).toHaveLength(1);
    // The load's summary counts its phases (lists, histories, days); the rates call comes after it.
    expect(r.load?.calls).toBe(4 + codes.length + 300);
    // The cost was said before anything but the lists was spent.
    const estimate = l.said.findIndex((s) => s.includes('to fetch:'));
    expect(l.said[estimate]).toMatch(
      /to fetch: \d+ histories \(\d+ API calls\) and up to 1 trading day .*300 calls each/,
    );
    // The source is what `build` reproduces it from; the load's state is gone.
    expect(existsSync(join(l.source, LOAD_STATE_DIR))).toBe(false);
    expect(readdirSync(join(l.source, 'daily'))).toEqual([`${universe.to}.csv`]);
    expect(l.progress.at(-1)).toMatchObject({ phase: 'build', done: 1, total: 1 });
    // Run again: it is a daily refresh now, up to date.
    expect((await l.run()).outcome).toBe('up_to_date');
  });

  it('--max-calls stops cleanly at the budget; the next run goes on and fetches no history twice', async () => {
    const server = await standIn();
    const l = loader('budget', server);
    const e = await l.run({ maxCalls: 24 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(LoadStopped);
    expect((e as LoadStopped).why).toBe('budget');
    expect((e as Error).message).toMatch(
      /--max-calls budget: 24 of 24 API calls spent.*run the same command again tomorrow/,
    );
    expect(readCurrent(l.snapshots)).toBeNull();
    const first = historyRequests(server).map(codeOf);
    expect(first).toHaveLength(20);
    const kept = readdirSync(join(l.source, 'prices'));
    expect(kept).toHaveLength(20);
    server.requests.length = 0;
    expect((await l.run()).outcome).toBe('published');
    const second = historyRequests(server).map(codeOf);
    expect(second.filter((c) => first.includes(c))).toEqual([]);
    // The lists were kept too: not asked for again.
    expect(server.requests.some((q) => q.includes('exchange-symbol-list'))).toBe(false);
    await expectSameSnapshot(l.snapshots, expected);
  });

  it('402 (the daily limit) mid-load stops it, resumable; after the midnight reset it finishes', async () => {
    const server = await standIn({ dailyLimit: 30 });
    const l = loader('402', server);
    const e = (await l.run().catch((x: unknown) => x)) as LoadStopped;
    expect(e).toBeInstanceOf(LoadStopped);
    expect(e.why).toBe('daily_limit');
    expect(e.message).toMatch(/daily API limit is reached \(402\).*midnight GMT/);
    expect(l.waits).toEqual([]);
    server.calls = 0;
    server.dailyLimit = undefined;
    expect((await l.run()).outcome).toBe('published');
    await expectSameSnapshot(l.snapshots, expected);
  });

  it('429 with Retry-After, a 5xx and a body cut short are retried; a cut body is never written', async () => {
    const server = await standIn();
    server.faults.set('eod', [
      { status: 429, headers: { 'retry-after': '3' } },
      { status: 502 },
      { cut: true },
      { cut: true },
    ]);
    const l = loader('faults', server);
    expect((await l.run()).outcome).toBe('published');
    expect(l.waits).toContain(3000);
    expect(l.said.filter((s) => s.includes('a network error'))).toHaveLength(2);
    await expectSameSnapshot(l.snapshots, expected);
  });

  it('histories that are HTML, empty, without an adjusted close or unknown are left out and reported by code and reason', async () => {
    const server = await standIn();
    const codes = currentCodes(universe);
    const [html, empty, noAdj, unknown] = codes;
    server.codeFaults.set(html, {
      status: 200,
      headers: { 'content-type': 'text/csv' },
      body: '<!DOCTYPE html><p>Oops</p>',
    });
    server.codeFaults.set(empty, { body: '' });
    server.codeFaults.set(noAdj, { body: 'Date,Open,High,Low,Close,Volume\n2026-11-19,1,1,1,1,0\n' });
    server.codeFaults.set(unknown, { status: 404, body: 'Ticker Not Found.' });
    const l = loader('bad', server);
    const r = await l.run();
    expect(r.outcome).toBe('published');
    expect(r.load?.failed).toEqual(
      [
        { code: html, reason: 'html', detail: expect.stringContaining('HTML') },
        { code: empty, reason: 'empty', detail: 'the history is empty' },
        { code: noAdj, reason: 'no_adjusted_close', detail: expect.stringContaining('Adjusted_close') },
        { code: unknown, reason: 'not_found', detail: expect.stringContaining('404') },
      ].sort((a, b) => (a.code < b.code ? -1 : 1)),
    );
    const report = JSON.parse(readFileSync(join(l.source, LOAD_REPORT), 'utf8'));
    expect(report.funds.map((f: { code: string }) => f.code).sort()).toEqual(
      [html, empty, noAdj, unknown].sort(),
    );
    const live = readFileSync(join(l.source, 'funds.csv'), 'utf8');
    for (const c of [html, empty, noAdj, unknown]) expect(live).not.toMatch(new RegExp(`^${c},`, 'm'));
  });

  it('the coverage gate refuses a universe with too few usable histories: nothing published, the report says which', async () => {
    const server = await standIn();
    const codes = currentCodes(universe);
    for (const c of codes.slice(0, 10)) server.codeFaults.set(c, { body: '' });
    const l = loader('coverage', server);
    await expect(l.run()).rejects.toThrow(
      /current funds have a usable history .* under the 90 %.*--min-coverage/,
    );
    expect(readCurrent(l.snapshots)).toBeNull();
    expect(JSON.parse(readFileSync(join(l.source, LOAD_REPORT), 'utf8')).leftOut).toBe(10);
    // Fixed at the provider: the next run fetches just those again and publishes.
    server.codeFaults.clear();
    server.requests.length = 0;
    expect((await l.run()).outcome).toBe('published');
    expect(historyRequests(server).map(codeOf).sort()).toEqual(codes.slice(0, 10).sort());
    await expectSameSnapshot(l.snapshots, expected);
  });

  it('a short bulk day is refused before anything is written; the next run fetches it again and publishes', async () => {
    const server = await standIn({ today: universe.dailyDates[0] });
    const l = loader('short-day', server);
    // Every history ends the day before the last; then the provider publishes the last day, cut short.
    const first = await l.run().catch((x: unknown) => x);
    expect((first as Error).message).toMatch(/has no data for|bulk file .* is empty/);
    server.today = universe.to;
    server.faults.set('bulk', [{ body: 'Code,Ex,Date,Open,High,Low,Close,Adjusted_close,Volume\n' }]);
    await expect(l.run()).rejects.toThrow(/is empty/);
    const text = readFileSync(join(universe.dir, 'daily', `${universe.to}.csv`), 'utf8').split('\n');
    const cut = text
      .slice(1, 6)
      .map((r) => r.split(','))
      .map(([code, date, close, adj]) => `${code},US,${date},${close},${close},${close},${close},${adj},0`);
    server.faults.set('bulk', [
      { body: `Code,Ex,Date,Open,High,Low,Close,Adjusted_close,Volume\n${cut.join('\n')}\n` },
    ]);
    await expect(l.run()).rejects.toThrow(
      /has rows for 5 of the \d+ current funds with a history, under the 90 %/,
    );
    expect(readdirSync(join(l.source, 'daily'))).toEqual([]);
    expect((await l.run()).outcome).toBe('published');
    await expectSameSnapshot(l.snapshots, expected);
  });

  it('--max-rate spaces the requests: 20 a second never come faster', async () => {
    const server = await standIn();
    const l = loader('rate', server);
    expect((await l.run({ maxRate: 1200 })).outcome).toBe('published');
    const n = server.times.length;
    expect(n).toBeGreaterThan(60);
    // Request starts at least 50 ms apart: the arrivals span at least (n - 2) × 50 ms (the first may arrive late; a busy machine only adds).
    expect(server.times[n - 1] - server.times[0]).toBeGreaterThanOrEqual((n - 2) * 50);
  });

  it('--estimate says the cost and fetches nothing but the fund lists', async () => {
    const server = await standIn();
    const l = loader('estimate', server);
    const r = await l.run({ estimate: true });
    expect(r.outcome).toBe('estimate');
    expect(server.requests.every((q) => q.startsWith('/api/exchange-symbol-list/US'))).toBe(true);
    expect(r.load?.estimate).toMatchObject({ histories: r.load?.listed, days: 1 });
    expect(r.load?.estimate.calls).toBe((r.load?.listed ?? 0) + 300);
    expect(readCurrent(l.snapshots)).toBeNull();
  });

  it('a source directory with files but no snapshot is not loaded over: build it first', async () => {
    const server = await standIn();
    const l = loader('not-empty', server);
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(l.source, { recursive: true });
    writeFileSync(join(l.source, 'notes.txt'), 'mine');
    await expect(l.run()).rejects.toThrow(/neither empty nor a load in progress/);
    expect(server.requests).toEqual([]);
  });

  it('the token is in no file the load writes', async () => {
    const server = await standIn();
    const l = loader('token', server);
    await l.run();
    const all = [...filesUnder(l.source), ...filesUnder(l.snapshots)];
    expect(all.length).toBeGreaterThan(10);
    for (const p of all) expect(readFileSync(p).includes(TOKEN), p).toBe(false);
    expect(l.said.join('\n')).not.toContain(TOKEN);
  });
});
