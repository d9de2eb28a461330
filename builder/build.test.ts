import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fromYmd } from '../core/dates.js';
import { listSnapshots, readCurrent } from '../core/snapshot/directory.js';
import type { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { track } from '../test/processes.js';
import { BuildError, buildFromSource } from './build.js';
import { fundRow, lookupOf, scratch, writeSource } from './build.test-helper.js';
import { appendDaily } from './daily-append.js';
import { generateUniverse } from './generate/index.js';

const dir = scratch('fr-build-');

/** Every served row of every fund, for comparing two snapshots as a client would. */
function servedRows(l: SnapshotLookup): string[] {
  const out: string[] = [];
  for (let i = 0; i < l.fundCount; i++) {
    out.push(l.fundJson(i), l.latestTrailingJson(i), l.defaultCalendarJson(i) ?? 'null');
    for (let y = 1990; y <= 2026; y++) out.push(l.calendarYearJson(i, y) ?? 'null');
  }
  return out;
}

const base = { keep: 5, maxBadShare: 0.01, threads: 2 };

describe('daily append (C37)', () => {
  it.each([
    ['mid-year', fromYmd(2026, 11, 20)],
    ['across a year end', fromYmd(2026, 1, 6)],
  ])('appending daily files day by day equals a full build of the same data (%s)', async (label, to) => {
    const opts = { funds: 40, seed: 11, from: fromYmd(2015, 1, 1), to, threads: 1 };
    const full = dir(`daily-full-${label}`);
    const split = dir(`daily-split-${label}`);
    await generateUniverse({ ...opts, out: full, dailyDays: 0 });
    const gen = await generateUniverse({ ...opts, out: split, dailyDays: 4 });
    expect(gen.dailyFiles).toBe(4);

    const snapFull = dir(`snap-full-${label}`);
    await buildFromSource({ ...base, source: full, snapshots: snapFull });
    const snapSplit = dir(`snap-split-${label}`);
    await buildFromSource({ ...base, source: split, snapshots: snapSplit });
    const dailyDir = join(split, 'daily');
    const files = readdirSync(dailyDir).sort();
    for (const f of files) {
      const r = await appendDaily({ ...base, daily: join(dailyDir, f), snapshots: snapSplit });
      expect(r.report.skippedRows).toBe(0);
    }
    const a = await lookupOf(snapFull);
    const b = await lookupOf(snapSplit);
    expect(b.cols.series.date).toEqual(a.cols.series.date);
    // Bit-identical index values, not merely close ones.
    expect(
      Buffer.from(b.cols.series.value.buffer, b.cols.series.value.byteOffset, b.cols.series.value.byteLength),
    ).toEqual(
      Buffer.from(a.cols.series.value.buffer, a.cols.series.value.byteOffset, a.cols.series.value.byteLength),
    );
    expect(servedRows(b)).toEqual(servedRows(a));
  });

  it('an index equal to the close stays the close through days without dividends: a tie rounds as on the prices (C1, C37)', async () => {
    const src = writeSource(dir('tie-src'), [fundRow('TIE')], {
      TIE:
        'Date,Open,High,Low,Close,Adjusted_close,Volume\n' +
        '2026-11-09,0,0,0,12.50,12.50,0\n2026-11-10,0,0,0,12.61,12.61,0\n2026-11-11,0,0,0,12.80,12.80,0\n',
    });
    const snaps = dir('tie-snaps');
    await buildFromSource({ ...base, source: src, snapshots: snaps });
    const daily = join(src, 'daily');
    mkdirSync(daily);
    // A path on which multiplying by each day's growth drifted below 13.66 (found by search).
    const closes: Array<[string, string]> = [
      ['2026-11-12', '12.42'],
      ['2026-11-13', '12.38'],
      ['2026-11-16', '12.15'],
      ['2026-11-17', '12.03'],
      ['2026-11-18', '13.66'],
    ];
    for (const [date, close] of closes)
      writeFileSync(
        join(daily, `${date}.csv`),
        `Code,Date,Close,Adjusted_close,Dividend,Split\nTIE,${date},${close},,,\n`,
      );
    await appendDaily({ ...base, daily, snapshots: snaps });
    const l = await lookupOf(snaps);
    const s = l.series(0);
    expect(Array.from(s.value.subarray(s.start + 3, s.start + s.length))).toEqual(
      closes.map(([, c]) => Number(c)),
    );
    // 13.66 / 12.80 − 1 is exactly +6.71875 %: half away from zero (C1).
    const row = JSON.parse(l.trailingAtJson(0, fromYmd(2026, 11, 18)) ?? 'null') as { return_1w: string };
    expect(row.return_1w).toBe('6.7188');
  });

  it('files in daily/ not named YYYY-MM-DD.csv are reported, not applied in silence', async () => {
    const src = writeSource(dir('daily-names-src'), [fundRow('AAA')], {
      AAA: 'Date,Close,Adjusted_close\n2026-11-10,10,10\n2026-11-11,11,11\n',
    });
    const snaps = dir('daily-names-snaps');
    await buildFromSource({ ...base, source: src, snapshots: snaps });
    const daily = join(src, 'daily');
    mkdirSync(daily);
    const row = (d: string) => `Code,Date,Close,Adjusted_close,Dividend,Split\nAAA,${d},12,,,\n`;
    writeFileSync(join(daily, '2026-11-12.csv'), row('2026-11-12'));
    writeFileSync(join(daily, '2026-11-13.CSV'), row('2026-11-13'));
    writeFileSync(join(daily, '2026-11-13.csv.bak'), row('2026-11-13'));
    const r = await appendDaily({ ...base, daily, snapshots: snaps });
    expect(r.report.reasons.get('ignored_file')).toMatchObject({
      count: 2,
      first: { file: '2026-11-13.CSV', detail: 'not applied: daily files are named YYYY-MM-DD.csv' },
    });
    expect(r.manifest.as_of).toBe('2026-11-12');
  });

  it('a daily row at or before a fund last observation is a reported no-op, never a duplicate (C37)', async () => {
    const src = dir('stale-src');
    await generateUniverse({
      funds: 10,
      seed: 5,
      from: fromYmd(2024, 1, 1),
      to: fromYmd(2026, 11, 20),
      threads: 1,
      out: src,
      dailyDays: 1,
    });
    const snaps = dir('stale-snaps');
    await buildFromSource({ ...base, source: src, snapshots: snaps });
    const dailyFile = join(src, 'daily', readdirSync(join(src, 'daily'))[0]);
    const first = await appendDaily({ ...base, daily: dailyFile, snapshots: snaps });
    expect(first.report.reasons.get('daily_stale_row')).toBeUndefined();
    const before = (await lookupOf(snaps)).cols.series.date.length;
    const again = await appendDaily({ ...base, daily: dailyFile, snapshots: snaps });
    expect(again.report.reasons.get('daily_stale_row')?.count).toBe(countRows(dailyFile));
    expect(again.report.skippedRows).toBe(0);
    expect(again.unchanged).toBe(true);
    expect(readCurrent(snaps)).toBe(first.id);
    expect((await lookupOf(snaps)).cols.series.date.length).toBe(before);
  });

  it('an unreadable daily file (empty, binary, no header) fails and publishes nothing', async () => {
    const src = dir('unreadable-daily-src');
    await generateUniverse({
      funds: 3,
      seed: 9,
      from: fromYmd(2025, 1, 1),
      to: fromYmd(2026, 11, 20),
      threads: 1,
      out: src,
    });
    const snaps = dir('unreadable-daily-snaps');
    const first = await buildFromSource({ ...base, source: src, snapshots: snaps });
    const daily = dir('unreadable-daily-files');
    for (const [name, body] of [
      ['2026-11-23.csv', ''],
      ['2026-11-24.csv', '\u001f\u008b\u0008\u0000binary\n\u0001\u0002\n'],
      ['2026-11-25.csv', 'Ticker,When,Price\nAAA,2026-11-25,10\n'],
    ]) {
      writeFileSync(join(daily, name), body);
      await expect(appendDaily({ ...base, daily: join(daily, name), snapshots: snaps })).rejects.toThrow(
        /cannot be read as a daily file/,
      );
    }
    expect(readCurrent(snaps)).toBe(first.id);
  });

  it('bad daily rows are skipped and reported with file and line (C37, C36)', async () => {
    const src = dir('bad-daily-src');
    await generateUniverse({
      funds: 5,
      seed: 9,
      from: fromYmd(2025, 1, 1),
      to: fromYmd(2026, 11, 20),
      threads: 1,
      out: src,
    });
    const snaps = dir('bad-daily-snaps');
    await buildFromSource({ ...base, source: src, snapshots: snaps });
    const l = await lookupOf(snaps);
    const code = l.cols.funds.code[0];
    const other = l.cols.funds.code[1];
    const file = join(dir('daily-bad-files'), '2026-11-23.csv');
    writeFileSync(
      file,
      [
        'Code,Date,Close,Adjusted_close,Dividend,Split',
        `${code},2026-11-23,10.5,,,`,
        `${other},2026-11-23,10.5,,-1,`,
        `${other},2026-11-24,10.5,,,0`,
        'NOSUCH,2026-11-23,10,,,',
      ].join('\n'),
    );
    const r = await appendDaily({ ...base, maxBadShare: 1, daily: file, snapshots: snaps });
    expect(r.report.reasons.get('daily_bad_row')?.count).toBe(2);
    expect(r.report.reasons.get('daily_bad_row')?.first.line).toBe(3);
    expect(r.report.reasons.get('daily_unknown_fund')?.count).toBe(1);
    const after = await lookupOf(snaps);
    expect(JSON.parse(after.fundJson(0)).max_return_date).toBe('2026-11-23');
    expect(JSON.parse(after.fundJson(1)).max_return_date).toBe(JSON.parse(l.fundJson(1)).max_return_date);
  });
});

function countRows(file: string): number {
  return readFileSync(file, 'utf8').trim().split('\n').length - 1;
}

const GOOD = 'Date,Adjusted_close\n2024-01-02,10\n2024-01-03,10.5\n2024-01-04,10.2\n';

describe('bad input in a full build (C36)', () => {
  it('leaves out and reports funds without prices, prices without funds and funds with no valid row', async () => {
    const src = writeSource(
      dir('c36-src'),
      [
        'AAA,A fund,USA,NMFQS,USD,FUND,,false,',
        'BBB,B fund,USA,NMFQS,USD,FUND,,false,',
        'CCC,C,USA,NMFQS,USD,FUND,,false,',
        'STK,Stock,USA,NYSE,USD,Common Stock,,false,',
      ],
      { AAA: GOOD, CCC: 'Date,Adjusted_close\n2024-01-02,NaN\n', ZZZ: GOOD },
    );
    const r = await buildFromSource({ ...base, maxBadShare: 1, source: src, snapshots: dir('c36-snaps') });
    expect(r.manifest.counts.funds).toBe(1);
    // Named at its funds.csv row (the header is line 1).
    expect(r.report.reasons.get('fund_without_prices')?.first).toMatchObject({
      code: 'BBB',
      file: 'funds.csv',
      line: 3,
    });
    expect(r.report.reasons.get('prices_without_fund')?.first.code).toBe('ZZZ');
    expect(r.report.reasons.get('fund_without_valid_rows')?.first.code).toBe('CCC');
    expect(r.report.reasons.get('unparsable_price')?.first).toMatchObject({
      file: 'prices/CCC.csv',
      line: 2,
    });
    expect(r.report.skippedFundTypes).toBe(1);
    expect(r.report.perFund.get('CCC')).toBe(1);
  });

  it('fails over the bad-row bound and publishes nothing (C36)', async () => {
    const snaps = dir('bound-snaps');
    const ok = writeSource(dir('bound-ok'), ['AAA,A,USA,NMFQS,USD,FUND,,false,'], { AAA: GOOD });
    const first = await buildFromSource({ ...base, source: ok, snapshots: snaps });
    const bad = writeSource(dir('bound-bad'), ['AAA,A,USA,NMFQS,USD,FUND,,false,'], {
      AAA: `${GOOD}2024-01-05,x\n2024-01-08,-3\n`,
    });
    await expect(
      buildFromSource({ ...base, maxBadShare: 0.2, source: bad, snapshots: snaps }),
    ).rejects.toBeInstanceOf(BuildError);
    expect(readCurrent(snaps)).toBe(first.id);
    expect(listSnapshots(snaps).map((s) => s.id)).toEqual([first.id]);
    // Within the bound the same source publishes, the bad rows skipped.
    const r = await buildFromSource({ ...base, maxBadShare: 0.5, source: bad, snapshots: snaps });
    expect(r.manifest.counts.observations).toBe(3);
  });

  /**
   * A published universe of five funds in `<name>-snaps`, and its source with funds.csv
   * cut off after two rows: three funds' price files then have no fund row.
   */
  async function shrinkSetup(name: string) {
    const codes = ['AAA', 'BBB', 'CCC', 'DDD', 'EEE'];
    const prices = Object.fromEntries(codes.map((c) => [c, GOOD]));
    const snaps = dir(`${name}-snaps`);
    const full = await buildFromSource({
      ...base,
      source: writeSource(dir(`${name}-full`), codes.map(fundRow), prices),
      snapshots: snaps,
    });
    const cut = writeSource(dir(`${name}-cut`), codes.slice(0, 2).map(fundRow), prices);
    return { codes, prices, snaps, full, cut };
  }

  it('a universe under half the live one is refused unless --allow-shrink (a truncated funds.csv)', async () => {
    const { codes, prices, snaps, full, cut } = await shrinkSetup('shrink');
    await expect(buildFromSource({ ...base, source: cut, snapshots: snaps })).rejects.toThrow(
      /would have 2 funds, the live one .* has 5: .*--allow-shrink/,
    );
    expect(readCurrent(snaps)).toBe(full.id);
    const forced = await buildFromSource({ ...base, source: cut, snapshots: snaps, allowShrink: true });
    expect(readCurrent(snaps)).toBe(forced.id);
    // Half or more is an ordinary build.
    const three = writeSource(dir('shrink-three'), codes.slice(0, 3).map(fundRow), prices);
    await buildFromSource({
      ...base,
      source: writeSource(dir('shrink-back'), codes.map(fundRow), prices),
      snapshots: snaps,
    });
    await buildFromSource({ ...base, source: three, snapshots: snaps });
  });

  it('with CURRENT missing or naming an unreadable snapshot, the newest readable one is the measure of a shrink', async () => {
    const { codes, prices, snaps, full, cut } = await shrinkSetup('shrink-lost');
    for (const damage of [
      () => writeFileSync(join(snaps, 'CURRENT'), 'gone\n'),
      () => rmSync(join(snaps, 'CURRENT')),
    ]) {
      damage();
      await expect(buildFromSource({ ...base, source: cut, snapshots: snaps })).rejects.toThrow(
        new RegExp(`would have 2 funds, the newest published one \\(${full.id}\\) has 5: .*--allow-shrink`),
      );
    }
    // A live snapshot whose manifest no longer reads: the newest readable one measures.
    const second = await buildFromSource({
      ...base,
      source: writeSource(dir('shrink-lost-again'), codes.slice(0, 4).map(fundRow), prices),
      snapshots: snaps,
    });
    writeFileSync(join(snaps, second.id, 'manifest.json'), '{');
    await expect(buildFromSource({ ...base, source: cut, snapshots: snaps })).rejects.toThrow(
      new RegExp(`the newest published one \\(${full.id}\\) has 5`),
    );
  });

  it('rows of a price file whose header lost its price column are skipped rows, so the bound holds (C36)', async () => {
    const codes = ['AAA', 'BBB', 'CCC', 'DDD', 'EEE'];
    const broken = GOOD.replace('Adjusted_close', 'Adj_Closing');
    const src = writeSource(
      dir('header-src'),
      codes.map(fundRow),
      Object.fromEntries(codes.map((c, k) => [c, k === 0 ? GOOD : broken])),
    );
    const snaps = dir('header-snaps');
    const e = await buildFromSource({ ...base, source: src, snapshots: snaps }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BuildError);
    const report = (e as BuildError).report;
    expect([report.dataRows, report.skippedRows]).toEqual([15, 12]);
    expect(report.reasons.get('row_in_unreadable_file')?.first).toMatchObject({
      file: 'prices/BBB.csv',
      line: 2,
    });
    expect(readCurrent(snaps)).toBeNull();
  });

  it('a source without funds.csv fails clearly', async () => {
    const empty = dir('no-funds');
    await expect(
      buildFromSource({ ...base, source: empty, snapshots: dir('no-funds-snaps') }),
    ).rejects.toThrow(/funds\.csv/);
  });
});

describe('publishing (DESIGN snapshot)', () => {
  it('one and two reader threads publish identical snapshots', async () => {
    const src = dir('threads-src');
    await generateUniverse({
      funds: 40,
      seed: 2,
      from: fromYmd(2010, 1, 1),
      to: fromYmd(2026, 11, 20),
      threads: 1,
      out: src,
    });
    const one = await buildFromSource({ ...base, threads: 1, source: src, snapshots: dir('threads-1') });
    const two = await buildFromSource({ ...base, threads: 2, source: src, snapshots: dir('threads-2') });
    for (const f of ['funds.arrow', 'series.arrow', 'trailing.arrow', 'calendar.arrow'] as const) {
      expect(two.manifest.files[f]?.sha256).toBe(one.manifest.files[f]?.sha256);
    }
  });

  it('keeps the newest snapshots up to --keep, always including CURRENT', async () => {
    const src = writeSource(dir('keep-src'), ['AAA,A,USA,NMFQS,USD,FUND,,false,'], { AAA: GOOD });
    const snaps = dir('keep-snaps');
    const ids: string[] = [];
    for (let k = 0; k < 4; k++) {
      ids.push(
        (
          await buildFromSource({
            ...base,
            keep: 2,
            source: src,
            snapshots: snaps,
            now: () => new Date(Date.UTC(2026, 0, 1, 0, k)),
          })
        ).id,
      );
    }
    expect(listSnapshots(snaps).map((s) => s.id)).toEqual(ids.slice(2));
    expect(readCurrent(snaps)).toBe(ids[3]);
  });

  it("--keep prunes only snapshots: an operator's own directories stay and do not count", async () => {
    const src = writeSource(dir('keep-other-src'), ['AAA,A,USA,NMFQS,USD,FUND,,false,'], { AAA: GOOD });
    const snaps = dir('keep-other-snaps');
    const first = await buildFromSource({ ...base, keep: 2, source: src, snapshots: snaps });
    for (const other of ['0-operator-backup', 'zz-notes', '2020-01-01-20200101T000000Z-abcd']) {
      mkdirSync(join(snaps, other));
      writeFileSync(join(snaps, other, 'keep-me.txt'), 'mine');
    }
    const second = await buildFromSource({ ...base, keep: 2, source: src, snapshots: snaps });
    const third = await buildFromSource({ ...base, keep: 2, source: src, snapshots: snaps });
    expect(listSnapshots(snaps).map((x) => x.id)).toEqual([second.id, third.id]);
    expect(existsSync(join(snaps, first.id))).toBe(false);
    // Not snapshots (a name of its own, or no manifest): untouched.
    for (const other of ['0-operator-backup', 'zz-notes', '2020-01-01-20200101T000000Z-abcd'])
      expect(readFileSync(join(snaps, other, 'keep-me.txt'), 'utf8')).toBe('mine');
  });

  it('two daily appends at once both land, one after the other (C37)', async () => {
    const src = dir('daily-race-src');
    await generateUniverse({
      funds: 30,
      seed: 5,
      from: fromYmd(2020, 1, 1),
      to: fromYmd(2026, 11, 20),
      threads: 1,
      out: src,
      dailyDays: 1,
    });
    const snaps = dir('daily-race-snaps');
    await buildFromSource({ ...base, source: src, snapshots: snaps });
    // One day's file split in two halves, appended by two processes at the same moment.
    const daily = readdirSync(join(src, 'daily'))[0];
    const [header, ...rows] = readFileSync(join(src, 'daily', daily), 'utf8')
      .trimEnd()
      .split('\n');
    const half = Math.ceil(rows.length / 2);
    const parts = [rows.slice(0, half), rows.slice(half)].map((r, k) => {
      const f = join(dir(`daily-race-part-${k}`), daily);
      writeFileSync(f, `${[header, ...r].join('\n')}\n`);
      return f;
    });
    const bin = fileURLToPath(new URL('../bin/fundreturns.js', import.meta.url));
    const codes = await Promise.all(
      parts.map(
        (f) =>
          new Promise<number | null>((resolve) =>
            track(
              spawn(process.execPath, [bin, 'build', '--daily', f, '--snapshots', snaps], {
                stdio: 'ignore',
              }),
              'fundreturns build --daily',
            ).on('exit', resolve),
          ),
      ),
    );
    expect(codes).toEqual([0, 0]);
    const l = await lookupOf(snaps);
    const day = Number(daily.slice(0, 10).replaceAll('-', ''));
    const lastDays = l.cols.funds.code.map((_, i) => {
      const { seriesOffset, seriesLength } = l.cols.funds;
      return l.cols.series.date[seriesOffset[i] + seriesLength[i] - 1];
    });
    const want = fromYmd(Math.floor(day / 10000), Math.floor(day / 100) % 100, day % 100);
    expect(lastDays.filter((d) => d === want).length).toBe(rows.length);
  });

  it('a build killed while writing leaves CURRENT and the live snapshot untouched', async () => {
    const src = dir('kill-src');
    await generateUniverse({
      funds: 400,
      seed: 4,
      from: fromYmd(1990, 1, 1),
      to: fromYmd(2026, 11, 20),
      threads: 1,
      out: src,
    });
    const snaps = dir('kill-snaps');
    const first = await buildFromSource({ ...base, source: src, snapshots: snaps });
    const cli = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
    const child = track(
      spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          `import(${JSON.stringify(cli)}).then((m) => m.main(['build', '--source', ${JSON.stringify(src)}, '--snapshots', ${JSON.stringify(snaps)}]))`,
        ],
        { stdio: 'ignore' },
      ),
      'fundreturns build (killed mid-write)',
    );
    // Kill it as soon as its staging directory appears, i.e. mid-write.
    await new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const timer = setInterval(() => {
        const staging = readdirSync(snaps).some((n) => n.startsWith('.tmp-'));
        if (staging || Date.now() - started > 30_000) {
          clearInterval(timer);
          child.kill('SIGKILL');
          staging ? resolve() : reject(new Error('no staging directory seen'));
        }
      }, 2);
    });
    await new Promise((r) => child.on('exit', r));
    expect(readCurrent(snaps)).toBe(first.id);
    expect(existsSync(join(snaps, first.id, 'manifest.json'))).toBe(true);
    await loadSnapshot(join(snaps, first.id));
    // The next build succeeds and sweeps the abandoned staging directory.
    const next = await buildFromSource({ ...base, source: src, snapshots: snaps });
    expect(readCurrent(snaps)).toBe(next.id);
    expect(readdirSync(snaps).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });
});
