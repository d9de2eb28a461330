import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTradingDay, lastTradingDayOnOrBefore } from '../../core/calendar.js';
import { formatDay, fromYmd, parseDay } from '../../core/dates.js';
import { nextIndexValue } from '../../core/growth.js';
import { type GenerateSummary, generateUniverse } from './index.js';
import { isValidIsin } from './isin.js';
import { simulateFund } from './series.js';
import { planUniverse } from './universe.js';

const FROM = fromYmd(2022, 11, 1);
const TO = fromYmd(2024, 3, 15);
const SEED = 42;
const FUNDS = 60;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'generate-test-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Every file under dir, by relative path. */
function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else out.set(path, readFileSync(join(dir, path), 'utf8'));
    }
  };
  walk('');
  return out;
}

function lines(text: string): string[] {
  const l = text.split('\n');
  expect(l.pop()).toBe('');
  return l;
}

/** funds.csv rows as records (names may be quoted). */
function readFunds(dir: string): Record<string, string>[] {
  const [header, ...rows] = lines(readFileSync(join(dir, 'funds.csv'), 'utf8'));
  const keys = header.split(',');
  return rows.map((row) => {
    const fields: string[] = [];
    let i = 0;
    while (i <= row.length) {
      if (row[i] === '"') {
        let j = i + 1;
        let value = '';
        for (;;) {
          const q = row.indexOf('"', j);
          value += row.slice(j, q);
          if (row[q + 1] === '"') {
            value += '"';
            j = q + 2;
          } else {
            j = q + 1;
            break;
          }
        }
        fields.push(value);
        i = j + 1;
      } else {
        const end = row.indexOf(',', i);
        const stop = end < 0 ? row.length : end;
        fields.push(row.slice(i, stop));
        i = stop + 1;
      }
    }
    expect(fields.length, row).toBe(keys.length);
    return Object.fromEntries(keys.map((k, n) => [k, fields[n]]));
  });
}

async function generate(
  name: string,
  extra: { dailyDays?: number; threads?: number; funds?: number; seed?: number },
) {
  const out = join(root, name);
  const summary = await generateUniverse({
    out,
    funds: extra.funds ?? FUNDS,
    seed: extra.seed ?? SEED,
    from: FROM,
    to: TO,
    dailyDays: extra.dailyDays,
    threads: extra.threads ?? 1,
  });
  return { out, summary };
}

describe('generateUniverse', () => {
  let single: { out: string; summary: GenerateSummary };
  beforeAll(async () => {
    single = await generate('single', {});
  });

  it('writes the same bytes for the same seed whether it runs in one thread or two workers', async () => {
    const again = await generate('single-again', {});
    const twoThreads = await generate('two-threads', { threads: 2 });
    const a = readTree(single.out);
    expect(readTree(again.out)).toEqual(a);
    expect(readTree(twoThreads.out)).toEqual(a);
    expect(twoThreads.summary).toEqual(single.summary);
  });

  it('writes different data for a different seed', async () => {
    const other = await generate('other-seed', { seed: SEED + 1 });
    expect(readFileSync(join(other.out, 'funds.csv'), 'utf8')).not.toBe(
      readFileSync(join(single.out, 'funds.csv'), 'utf8'),
    );
  });

  it('writes C35 headers and one price file per ETF or FUND row', () => {
    const funds = readFunds(single.out);
    expect(readFileSync(join(single.out, 'funds.csv'), 'utf8').split('\n')[0]).toBe(
      'Code,Name,Country,Exchange,Currency,Type,Isin,IsInactive,InactiveDate',
    );
    const priced = funds.filter((f) => f.Type === 'ETF' || f.Type === 'FUND');
    const files = readdirSync(join(single.out, 'prices')).sort();
    expect(files).toEqual(priced.map((f) => `${f.Code}.csv`).sort());
    expect(priced.length).toBe(FUNDS);
    expect(funds.length).toBeGreaterThan(FUNDS); // at least one unpriced row of another type
    for (const f of files) {
      expect(readFileSync(join(single.out, 'prices', f), 'utf8').split('\n')[0]).toBe(
        'Date,Open,High,Low,Close,Adjusted_close,Volume',
      );
    }
    expect(single.summary.funds).toBe(FUNDS);
    expect(single.summary.dailyFiles).toBe(0);
    expect(single.summary.lastDate).toBe(formatDay(lastTradingDayOnOrBefore(TO)));
  });

  it('reports row and byte counts that match the files', () => {
    const tree = readTree(single.out);
    let rows = 0;
    let bytes = 0;
    for (const [path, text] of tree) {
      bytes += Buffer.byteLength(text);
      if (path.startsWith('prices/')) rows += lines(text).length - 1;
    }
    expect(single.summary.priceRows).toBe(rows);
    expect(single.summary.bytes).toBe(bytes);
  });

  it('dates every price row on an ascending trading day within the fund life and the range', () => {
    const funds = readFunds(single.out);
    for (const f of funds.filter((x) => x.Type === 'ETF' || x.Type === 'FUND')) {
      const rows = lines(readFileSync(join(single.out, 'prices', `${f.Code}.csv`), 'utf8')).slice(1);
      expect(rows.length).toBeGreaterThan(0);
      let prev = -Infinity;
      for (const row of rows) {
        const day = parseDay(row.slice(0, 10));
        expect(day, row).not.toBeNull();
        expect(isTradingDay(day as number), row).toBe(true);
        expect(day as number).toBeGreaterThan(prev);
        expect(day as number).toBeGreaterThanOrEqual(FROM);
        expect(day as number).toBeLessThanOrEqual(TO);
        prev = day as number;
      }
      if (f.IsInactive === 'true') {
        const inactive = parseDay(f.InactiveDate) as number;
        expect(inactive).toBeGreaterThan(prev);
        expect(inactive - prev).toBeLessThanOrEqual(7);
      } else {
        expect(f.IsInactive).toBe('false');
        expect(f.InactiveDate).toBe('');
      }
    }
  });

  it('writes prices a provider could have sent: 2-decimal closes, consistent OHLC, volume only for ETFs', () => {
    const funds = readFunds(single.out);
    for (const f of funds.filter((x) => x.Type === 'ETF' || x.Type === 'FUND')) {
      const rows = lines(readFileSync(join(single.out, 'prices', `${f.Code}.csv`), 'utf8')).slice(1);
      for (const row of rows) {
        const [, open, high, low, close, adj, volume] = row.split(',');
        for (const p of [open, high, low, close]) expect(p, row).toMatch(/^\d+\.\d\d$/);
        const [o, h, l, c] = [open, high, low, close].map(Number);
        expect(l).toBeGreaterThanOrEqual(0.01);
        expect(l).toBeLessThanOrEqual(Math.min(o, c));
        expect(h).toBeGreaterThanOrEqual(Math.max(o, c));
        expect(Number(adj)).toBeGreaterThan(0);
        expect(String(Number(adj))).toBe(adj);
        if (f.Type === 'FUND') {
          expect([o, h, l]).toEqual([c, c, c]);
          expect(volume).toBe('0');
        } else {
          expect(volume).toMatch(/^\d+$/);
        }
      }
    }
  });

  it('chains Adjusted_close with the C37 growth factor from the first close', () => {
    const u = planUniverse(SEED, FUNDS, FROM, TO);
    let events = 0;
    for (const plan of u.priced) {
      const s = simulateFund(u, plan);
      const rows = lines(readFileSync(join(single.out, 'prices', `${plan.code}.csv`), 'utf8')).slice(1);
      expect(rows.length).toBe(s.length);
      let prevAdj = Number.NaN;
      let prevClose = Number.NaN;
      rows.forEach((row, i) => {
        const f = row.split(',');
        const close = Number(f[4]);
        const adj = Number(f[5]);
        expect(f[0]).toBe(u.dates[s.dayIdx[i]]);
        expect(close).toBe(s.closeCents[i] / 100);
        if (i === 0) {
          expect(adj).toBe(close);
        } else {
          expect(adj).toBe(nextIndexValue(prevAdj, close, s.dividend[i], s.split[i], prevClose));
          if (s.dividend[i] !== 0 || s.split[i] !== 1) events++;
        }
        prevAdj = adj;
        prevClose = close;
      });
    }
    expect(events).toBeGreaterThan(0);
  });

  it('moves the last dailyDays trading days into daily files and leaves the series unchanged', async () => {
    const k = 3;
    const { out, summary } = await generate('daily', { dailyDays: k, threads: 2 });
    expect(readFileSync(join(out, 'funds.csv'), 'utf8')).toBe(
      readFileSync(join(single.out, 'funds.csv'), 'utf8'),
    );
    const u = planUniverse(SEED, FUNDS, FROM, TO);
    const dailyDates = u.dates.slice(-k);
    expect(readdirSync(join(out, 'daily')).sort()).toEqual(dailyDates.map((d) => `${d}.csv`));
    expect(summary.dailyFiles).toBe(k);
    expect(summary.lastDate).toBe(single.summary.lastDate);
    expect(summary.priceRows + summary.dailyRows).toBe(single.summary.priceRows);

    // Daily rows per fund, in file order.
    const daily = new Map<string, string[][]>();
    let dailyRows = 0;
    for (const date of dailyDates) {
      const [header, ...rows] = lines(readFileSync(join(out, 'daily', `${date}.csv`), 'utf8'));
      expect(header).toBe('Code,Date,Close,Adjusted_close,Dividend,Split');
      const codes = rows.map((r) => r.split(',')[0]);
      expect(codes).toEqual([...codes].sort());
      for (const row of rows) {
        const f = row.split(',');
        expect(f[1]).toBe(date);
        expect(f).toHaveLength(6);
        daily.set(f[0], [...(daily.get(f[0]) ?? []), f]);
        dailyRows++;
      }
    }
    expect(dailyRows).toBe(summary.dailyRows);

    for (const plan of u.priced) {
      const full = lines(readFileSync(join(single.out, 'prices', `${plan.code}.csv`), 'utf8'));
      const head = lines(readFileSync(join(out, 'prices', `${plan.code}.csv`), 'utf8'));
      const tail = daily.get(plan.code) ?? [];
      // The price file is a prefix of the full one; the daily rows are the rest.
      expect(full.slice(0, head.length)).toEqual(head);
      const rest = full.slice(head.length).map((r) => r.split(','));
      expect(tail.map((f) => [f[1], f[2], f[3]])).toEqual(rest.map((f) => [f[0], f[4], f[5]]));

      // What the builder's daily append does: chain from the last price row.
      const s = simulateFund(u, plan);
      let last = head[head.length - 1].split(',');
      let prevAdj = Number(last[5]);
      let prevClose = Number(last[4]);
      tail.forEach((f, j) => {
        const i = head.length - 1 + j;
        const dividend = f[4] === '' ? 0 : Number(f[4]);
        const split = f[5] === '' ? 1 : Number(f[5]);
        expect(dividend).toBe(s.dividend[i]);
        expect(split).toBe(s.split[i]);
        const adj = nextIndexValue(prevAdj, Number(f[2]), dividend, split, prevClose);
        expect(String(adj)).toBe(f[3]);
        prevAdj = adj;
        prevClose = Number(f[2]);
        last = f;
      });
    }
  });

  it('keeps dividends and splits exact in daily files over a window full of events', async () => {
    const from = fromYmd(2020, 1, 1);
    const to = fromYmd(2020, 12, 31);
    const out = join(root, 'daily-events');
    const k = 200;
    await generateUniverse({ out, funds: 40, seed: 3, from, to, dailyDays: k, threads: 1 });
    const u = planUniverse(3, 40, from, to);
    const byCode = new Map(u.priced.map((p) => [p.code, simulateFund(u, p)]));
    const lastRow = new Map<string, { adj: number; close: number; i: number }>();
    for (const p of u.priced) {
      const rows = lines(readFileSync(join(out, 'prices', `${p.code}.csv`), 'utf8')).slice(1);
      // A fund launched inside the window has only its header in the price file.
      if (rows.length === 0) continue;
      const f = rows[rows.length - 1].split(',');
      lastRow.set(p.code, { adj: Number(f[5]), close: Number(f[4]), i: rows.length - 1 });
    }
    let dividends = 0;
    for (const date of u.dates.slice(-k)) {
      for (const row of lines(readFileSync(join(out, 'daily', `${date}.csv`), 'utf8')).slice(1)) {
        const [code, , closeText, adjText, dividendText, splitText] = row.split(',');
        const s = byCode.get(code);
        if (s === undefined) throw new Error(`unknown fund ${code}`);
        const prev = lastRow.get(code);
        if (prev === undefined) {
          expect(Number(adjText)).toBe(Number(closeText));
          lastRow.set(code, { adj: Number(adjText), close: Number(closeText), i: 0 });
          continue;
        }
        const i = prev.i + 1;
        const dividend = dividendText === '' ? 0 : Number(dividendText);
        const split = splitText === '' ? 1 : Number(splitText);
        if (dividend > 0) {
          dividends++;
          expect(dividendText).toBe(String(s.dividend[i]));
        }
        expect(dividend).toBe(s.dividend[i]);
        expect(split).toBe(s.split[i]);
        const close = Number(closeText);
        const adj = nextIndexValue(prev.adj, close, dividend, split, prev.close);
        expect(adj).toBe(Number(adjText));
        expect(adj).toBe(s.adj[i]);
        lastRow.set(code, { adj, close, i });
      }
    }
    expect(dividends).toBeGreaterThan(20);
    for (const [code, last] of lastRow) expect(last.i, code).toBe((byCode.get(code)?.length ?? 0) - 1);
  });

  it('reports progress about every 1 % and finishes at the total', async () => {
    const calls: [number, number][] = [];
    await generateUniverse({
      out: join(root, 'progress'),
      funds: 300,
      seed: 5,
      from: fromYmd(2024, 1, 1),
      to: fromYmd(2024, 3, 31),
      threads: 2,
      onProgress: (done, total) => calls.push([done, total]),
    });
    expect(calls.length).toBeGreaterThanOrEqual(10);
    expect(calls.length).toBeLessThanOrEqual(110);
    expect(calls[calls.length - 1]).toEqual([300, 300]);
    for (let i = 1; i < calls.length; i++) expect(calls[i][0]).toBeGreaterThan(calls[i - 1][0]);
  });

  it('clears stale CSVs of an earlier generation but refuses a directory that is not a source', async () => {
    const out = join(root, 'stale');
    await generateUniverse({ out, funds: 20, seed: 1, from: FROM, to: TO, dailyDays: 2, threads: 1 });
    writeFileSync(join(out, 'prices', 'ZZZZZ.csv'), 'Date,Open,High,Low,Close,Adjusted_close,Volume\n');
    await generateUniverse({ out, funds: 20, seed: 1, from: FROM, to: TO, threads: 1 });
    expect(existsSync(join(out, 'prices', 'ZZZZZ.csv'))).toBe(false);
    expect(readdirSync(join(out, 'daily'))).toEqual([]);

    const foreign = join(root, 'foreign');
    mkdirSync(join(foreign, 'prices'), { recursive: true });
    writeFileSync(join(foreign, 'prices', 'keep.csv'), 'x\n');
    await expect(
      generateUniverse({ out: foreign, funds: 20, seed: 1, from: FROM, to: TO, threads: 1 }),
    ).rejects.toThrow(/refusing/);
    expect(existsSync(join(foreign, 'prices', 'keep.csv'))).toBe(true);
  });
});

describe('the generated fund list', () => {
  const from = fromYmd(2023, 1, 1);
  const to = fromYmd(2024, 12, 31);

  it('has ~85 % mutual funds, ~15 % ETFs and a few rows of other types, with realistic codes', () => {
    const u = planUniverse(11, 2000, from, to);
    const count = (t: string) => u.rows.filter((r) => r.type === t).length;
    expect(count('FUND') + count('ETF')).toBe(2000);
    expect(count('ETF') / 2000).toBeGreaterThan(0.12);
    expect(count('ETF') / 2000).toBeLessThan(0.18);
    const others = u.rows.filter((r) => !r.priced);
    expect(others.length).toBe(10);
    for (const r of others) expect(['Common Stock', 'INDEX', 'Unit']).toContain(r.type);
    const codes = u.rows.map((r) => r.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).toEqual([...codes].sort());
    for (const r of u.rows) {
      if (r.type === 'FUND') {
        expect(r.code).toMatch(/^[A-Z]{4}X$/);
        expect(r.exchange).toBe('NMFQS');
        expect(r.name).toMatch(/ Fund,? (Class [A-Z0-9]+|.* (Shares|Class))$/);
      } else if (r.type === 'ETF') {
        expect(r.code).toMatch(/^[A-Z]{2,4}$/);
        expect(['NYSE ARCA', 'NASDAQ', 'BATS', 'NYSE MKT']).toContain(r.exchange);
        expect(r.name).toMatch(/ ETF$/);
      }
      if (r.isin !== '') expect(isValidIsin(r.isin)).toBe(true);
    }
  });

  it('marks about 5 % of a 2,000-fund universe inactive, ending before the range does', async () => {
    const out = join(root, 'inactive');
    const summary = await generateUniverse({ out, funds: 2000, seed: 9, from, to, threads: 2 });
    const funds = readFunds(out).filter((f) => f.Type === 'ETF' || f.Type === 'FUND');
    const inactive = funds.filter((f) => f.IsInactive === 'true');
    expect(inactive.length / funds.length).toBeGreaterThan(0.035);
    expect(inactive.length / funds.length).toBeLessThan(0.065);
    for (const f of inactive.slice(0, 50)) {
      const text = readFileSync(join(out, 'prices', `${f.Code}.csv`), 'utf8');
      const last = parseDay(text.slice(text.lastIndexOf('\n', text.length - 2) + 1).slice(0, 10)) as number;
      expect(last).toBeLessThan(parseDay(summary.lastDate) as number);
      expect(parseDay(f.InactiveDate) as number).toBeLessThanOrEqual(to);
    }
    // Missing days: about 0.1 % of a fund's trading days are absent.
    const possible = funds.reduce((n, f) => n + (f.IsInactive === 'true' ? 0 : 1), 0);
    expect(possible).toBeGreaterThan(0);
    const u = planUniverse(9, 2000, from, to);
    let expected = 0;
    for (const p of u.priced) expected += p.lastIdx - p.firstIdx + 1;
    const missingShare = 1 - summary.priceRows / expected;
    expect(missingShare).toBeGreaterThan(0.0003);
    expect(missingShare).toBeLessThan(0.003);
  });

  it('sizes 32,000 funds from 1970 to a 2026 end date at about 100 million rows', () => {
    const u = planUniverse(1, 32000, fromYmd(1970, 1, 1), fromYmd(2026, 6, 30));
    let rows = 0;
    let etfsBefore1993 = 0;
    for (const p of u.priced) {
      rows += p.lastIdx - p.firstIdx + 1;
      if (p.type === 'ETF' && u.days[p.firstIdx] < fromYmd(1993, 1, 1)) etfsBefore1993++;
    }
    expect(rows).toBeGreaterThan(90e6);
    expect(rows).toBeLessThan(110e6);
    expect(u.days[Math.min(...u.priced.map((p) => p.firstIdx))]).toBeLessThan(fromYmd(1971, 1, 1));
    expect(etfsBefore1993).toBeLessThan(100);
  });

  it('simulates distributions, capital gains and ETF splits over a long history', () => {
    const u = planUniverse(2, 400, fromYmd(1990, 1, 1), fromYmd(2024, 12, 31));
    let dividends = 0;
    let splits = 0;
    let reverseSplits = 0;
    let decemberGains = 0;
    for (const p of u.priced) {
      const s = simulateFund(u, p);
      for (let i = 1; i < s.length; i++) {
        if (s.dividend[i] > 0) {
          dividends++;
          const close = s.closeCents[i] / 100;
          if (p.type === 'FUND' && u.month[s.dayIdx[i]] === 11 && s.dividend[i] / close > 0.01)
            decemberGains++;
        }
        if (s.split[i] !== 1) {
          expect(p.type).toBe('ETF');
          splits++;
          if (s.split[i] < 1) reverseSplits++;
          // The close on a split day is post-split: it moves with the split, not against it.
          const ratio = (s.closeCents[i] / s.closeCents[i - 1]) * s.split[i];
          expect(ratio).toBeGreaterThan(0.7);
          expect(ratio).toBeLessThan(1.4);
        }
      }
      if (p.frequency > 0 && s.length > 600)
        expect(s.adj[s.length - 1]).not.toBe(s.closeCents[s.length - 1] / 100);
    }
    expect(dividends).toBeGreaterThan(1000);
    expect(decemberGains).toBeGreaterThan(5);
    expect(splits).toBeGreaterThan(0);
    expect(reverseSplits).toBeGreaterThanOrEqual(0);
  });
});
