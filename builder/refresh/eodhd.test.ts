import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCurrent } from '../../core/snapshot/directory.js';
import { scratch } from '../build.test-helper.js';
import { eodhdProvider, redactToken, splitRatio } from './eodhd.js';
import { type FakeEodhd, startFakeEodhd } from './eodhd-server.test-helper.js';
import { refresh } from './refresh.js';
import { evening, HISTORY, lastDate, live, tenFunds } from './refresh.test-helper.js';

const dir = scratch('fr-eodhd-');
const TOKEN = 'tok3n-S3cret-0f-the-operator';

let server: FakeEodhd;
beforeEach(async () => {
  server = await startFakeEodhd(TOKEN);
});
afterEach(async () => {
  await server.close();
});

/** A refresh of Monday 2026-11-23 from the fake provider; its log lines and waits are kept. */
async function refreshFrom(name: string, token = TOKEN) {
  const t = await tenFunds(dir(name));
  const said: string[] = [];
  const waits: number[] = [];
  const provider = eodhdProvider({
    baseUrl: server.url,
    token,
    timeoutMs: 300,
    retries: 2,
    sleep: async (ms) => {
      waits.push(ms);
    },
    say: (l) => said.push(l),
  });
  const run = () => refresh({ ...t.opts(evening('2026-11-23')), provider, say: (l) => said.push(l) });
  return { t, said, waits, run };
}

describe('the eodhd provider, against a local server in its documented formats', () => {
  it("publishes a day from the bulk API with its dividends and splits; a new fund enters with /api/eod's history", async () => {
    const { t, run } = await refreshFrom('day');
    const r = await run();
    expect(r.outcome).toBe('published');
    expect(r.days).toEqual(['2026-11-23']);
    expect(r.report.universe?.newFunds).toEqual(['KKKKX']);
    const cols = await live(t.snapshots);
    expect(lastDate(cols, 'AAAAX')).toBe('2026-11-23');
    expect(lastDate(cols, 'KKKKX')).toBe('2026-11-23');
    expect(cols.funds.name[cols.funds.code.indexOf('KKKKX')]).toBe('Kappa Fund, Class I');
    // Stocks in the bulk file are not funds: not applied, not even reported.
    expect(r.report.reasons.has('daily_unknown_fund')).toBe(false);
    // The split (2 for 1 at half the price) and the dividend enter the growth factor (C37).
    const daily = readFileSync(join(t.source, 'daily', '2026-11-23.csv'), 'utf8');
    expect(daily).toContain('BBBBX,2026-11-23,11.4,0.05,\n');
    expect(daily).toContain('CCCCX,2026-11-23,6.2,,2\n');
    const c = cols.funds.code.indexOf('CCCCX');
    const end = cols.funds.seriesOffset[c] + cols.funds.seriesLength[c] - 1;
    const previousClose = 12 + (HISTORY.length - 1) * 0.01;
    expect(cols.series.value[end] / cols.series.value[end - 1]).toBeCloseTo(12.4 / previousClose, 12);
    expect(server.requests.every((q) => q.includes(`api_token=${TOKEN}`))).toBe(true);
  });

  it('fetches the 3-month T-bill yield as US3M.GBOND with the prices, keeps it in the source and the snapshot (C41)', async () => {
    const { t, run } = await refreshFrom('rates');
    const r = await run();
    expect(r.outcome).toBe('published');
    expect(server.requests.some((q) => q.startsWith('/api/eod/US3M.GBOND?'))).toBe(true);
    const fixture = readFileSync(new URL('./fixtures/eodhd/eod-US3M.GBOND.csv', import.meta.url), 'utf8');
    expect(readFileSync(join(t.source, 'rates', 'US3M.csv'), 'utf8')).toBe(fixture);
    const cols = await live(t.snapshots);
    expect(Array.from(cols.rates.yield)).toEqual([4.32, 4.31, 4.3, 4.29]);
  });

  it('a rates request the provider keeps failing leaves the rates as the source has them, and the day still publishes', async () => {
    const { t, said, run } = await refreshFrom('rates-down');
    server.codeFaults.set('US3M.GBOND', { status: 503 });
    const r = await run();
    expect(r.outcome).toBe('published');
    expect(said.some((l) => /US3M\.GBOND.*the rates stay as the source has them/.test(l))).toBe(true);
    expect((await live(t.snapshots)).rates.date.length).toBe(0);
  });

  it('the token appears in no log line, error message or report', async () => {
    const { t, said, run } = await refreshFrom('token');
    server.faults.set('bulk', [{ status: 500 }]);
    server.faults.set('dividends', [{ status: 429 }]);
    const r = await run();
    const manifest = readFileSync(
      join(t.snapshots, readCurrent(t.snapshots) as string, 'manifest.json'),
      'utf8',
    );
    expect(said.length).toBeGreaterThan(0);
    for (const text of [...said, r.report.summary(), JSON.stringify(r.report.toJSON()), manifest])
      expect(text).not.toContain(TOKEN);
    const bad = await refreshFrom('token-refused', 'wrong-token-also-secret');
    const e = (await bad.run().catch((x: unknown) => x)) as Error;
    expect(e.message).toMatch(/eodhd refused the token \(401\)/);
    expect(e.message).not.toContain('wrong-token-also-secret');
    expect(e.message).toContain('/api/exchange-symbol-list/US?');
    expect(redactToken(`${server.url}/api/eod/X.US?fmt=csv&api_token=${TOKEN}&x=1`)).toBe(
      `${server.url}/api/eod/X.US?fmt=csv&api_token=REDACTED&x=1`,
    );
  });

  it('a 5xx, then success: retried after a bounded backoff', async () => {
    const { said, waits, run } = await refreshFrom('5xx');
    server.faults.set('bulk', [{ status: 502 }, { status: 500 }]);
    const r = await run();
    expect(r.outcome).toBe('published');
    expect(waits).toEqual([5000, 10000]);
    expect(said.filter((l) => l.includes('a server error'))).toHaveLength(2);
  });

  it("429 (the minute's limit), then success: waits what Retry-After says", async () => {
    const { waits, run } = await refreshFrom('429');
    server.faults.set('bulk', [{ status: 429, headers: { 'retry-after': '7' } }]);
    expect((await run()).outcome).toBe('published');
    expect(waits).toEqual([7000]);
  });

  it('402 (the daily limit): fails at once with a clear message, retryable later; nothing published', async () => {
    const { t, waits, run } = await refreshFrom('402');
    const before = readCurrent(t.snapshots);
    server.faults.set('bulk', [{ status: 402 }]);
    await expect(run()).rejects.toMatchObject({
      retryable: true,
      message: expect.stringMatching(/daily API limit is reached \(402\).*midnight GMT/),
    });
    expect(waits).toEqual([]);
    expect(readCurrent(t.snapshots)).toBe(before);
  });

  it('no answer within the timeout, then success', async () => {
    const { run, said } = await refreshFrom('timeout');
    server.faults.set('splits', [{ hang: true }]);
    expect((await run()).outcome).toBe('published');
    expect(said.some((l) => l.includes('no answer within 0.3 s'))).toBe(true);
  });

  it('the maintenance window (503, or a page that is not CSV) is waited out', async () => {
    const { run, waits } = await refreshFrom('maintenance');
    server.faults.set('symbols', [
      { status: 503, body: 'Scheduled maintenance' },
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' },
    ]);
    expect((await run()).outcome).toBe('published');
    expect(waits).toEqual([60_000, 120_000]);
  });

  it('bounded: a provider that keeps failing ends the refresh with the reason, retryable', async () => {
    const { run } = await refreshFrom('down');
    server.faults.set('bulk', [{ status: 500 }, { status: 500 }, { status: 500 }]);
    await expect(run()).rejects.toMatchObject({
      retryable: true,
      message: expect.stringMatching(/failed 3 times, last with a server error \(500\)/),
    });
  });

  it('a short bulk file on a trading day is refused: nothing published', async () => {
    const { t, run } = await refreshFrom('short');
    const before = readCurrent(t.snapshots);
    const text = readFileSync(
      new URL('./fixtures/eodhd/eod-bulk-2026-11-23.csv', import.meta.url),
      'utf8',
    ).split('\n');
    server.faults.set('bulk', [{ body: `${text.slice(0, 6).join('\n')}\n` }]);
    // The header, a stock and four of the ten funds.
    await expect(run()).rejects.toThrow(/has rows for 4 of the 10 live funds/);
    expect(readCurrent(t.snapshots)).toBe(before);
  });

  it('an empty bulk file on a trading day is a retryable failure, not a day without data', async () => {
    const { run } = await refreshFrom('empty');
    server.faults.set('bulk', [{ body: '' }]);
    await expect(run()).rejects.toMatchObject({
      retryable: true,
      message: expect.stringContaining('the bulk file for 2026-11-23 is empty'),
    });
  });

  it('--estimate on a built snapshot says what the missing days cost in API calls and fetches nothing', async () => {
    const { t, said } = await refreshFrom('estimate');
    const provider = eodhdProvider({ baseUrl: server.url, token: TOKEN });
    const before = readCurrent(t.snapshots);
    // Tuesday evening: Monday and Tuesday are missing.
    const r = await refresh({
      ...t.opts(evening('2026-11-24')),
      provider,
      estimate: true,
      say: (l) => said.push(l),
    });
    expect(r.outcome).toBe('estimate');
    expect(said).toContain(
      '2 trading days to fetch (2026-11-23..2026-11-24): 602 API calls (300 a day, 2 for the fund lists), plus 1 per fund new in the lists',
    );
    expect(server.requests).toEqual([]);
    expect(readCurrent(t.snapshots)).toBe(before);
  });

  it('reads splits written new/old', () => {
    expect(splitRatio('2.000000/1.000000')).toBe('2');
    expect(splitRatio('1.000000/20.000000')).toBe('0.05');
    expect(splitRatio(undefined)).toBe('');
  });
});
