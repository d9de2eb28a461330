/**
 * End to end through a build: rows longer than their header and rows dated in the
 * future are bad rows (C36), counted per reason with file:line, toward the failure
 * bound, and never reach the snapshot.
 */
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCurrent } from '../../core/snapshot/directory.js';
import { BuildError, buildFromSource } from '../build.js';
import { fundRow, lookupOf, scratch, writeSource } from '../build.test-helper.js';
import { appendDaily } from '../daily-append.js';

const dir = scratch('fr-bad-rows-');

/** A source whose funds are exactly the price files given. */
function sourceOf(root: string, prices: Record<string, string>): string {
  return writeSource(root, Object.keys(prices).map(fundRow), prices);
}

const EOD = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
const GOOD = `${EOD}2024-01-02,1,1,1,16,16,0\n2024-01-03,1,1,1,16.16,16.16,0\n`;
// Line 4 has an unquoted thousands separator, line 5 is dated 2099; 3 of 10 data rows are bad.
const BAD = `${EOD}2024-01-02,1,1,1,16,16,0\n2024-01-03,1,1,1,16.16,16.16,0\n2024-01-04,1,1,1,1,234.5,1,234.5,0\n2099-12-31,1,1,1,17,17,0\n2024-01-05,1,1,1,10,5,10,5,0\n`;
const base = { keep: 5, threads: 2 };

describe('a full build with long and future rows (C36)', () => {
  it('skips them, reports each reason with file:line, and publishes the real rows only', async () => {
    const src = sourceOf(dir('src'), { AAA: BAD, BBB: GOOD, CCC: GOOD });
    const snaps = dir('snaps');
    const r = await buildFromSource({ ...base, maxBadShare: 0.5, source: src, snapshots: snaps });
    const report = r.report;
    expect(report.dataRows).toBe(9);
    expect(report.skippedRows).toBe(3);
    expect(report.perFund.get('AAA')).toBe(3);
    expect(report.reasons.get('long_row')).toMatchObject({
      count: 2,
      first: { file: join('prices', 'AAA.csv'), line: 4, code: 'AAA' },
    });
    expect(report.reasons.get('future_date')).toMatchObject({
      count: 1,
      first: { file: join('prices', 'AAA.csv'), line: 5, code: 'AAA' },
    });
    expect(report.summary()).toContain(`long_row: 2, first at ${join('prices', 'AAA.csv')}:4`);
    expect(report.summary()).toContain(`future_date: 1, first at ${join('prices', 'AAA.csv')}:5`);

    // The snapshot ends at the last real date, and AAA's 1D return is 16.16 → 16.16 … not −96 %.
    expect(r.manifest.as_of).toBe('2024-01-03');
    const l = await lookupOf(snaps);
    const aaa = JSON.parse(l.latestTrailingJson(0));
    expect(aaa.as_of_date).toBe('2024-01-03');
    expect(aaa.return_1d).toBe('1.0000');
  });

  it('counts them toward --max-bad-share: over the bound, nothing is published', async () => {
    const src = sourceOf(dir('bound-src'), { AAA: BAD, BBB: GOOD });
    const snaps = dir('bound-snaps');
    const failed = buildFromSource({ ...base, maxBadShare: 0.1, source: src, snapshots: snaps });
    await expect(failed).rejects.toBeInstanceOf(BuildError);
    expect(readCurrent(snaps)).toBeNull();
  });
});

describe('a daily append with long and future rows (C36, C37)', () => {
  it('skips them as daily_bad_row against the injected clock, and the fund keeps extending', async () => {
    const src = sourceOf(dir('daily-src'), { AAA: GOOD, BBB: GOOD });
    const snaps = dir('daily-snaps');
    await buildFromSource({ ...base, maxBadShare: 0, source: src, snapshots: snaps });
    const now = () => new Date(Date.UTC(2024, 0, 4, 15)); // today 2024-01-04: 2024-02-04 is the last day accepted
    const header = 'Code,Date,Close,Adjusted_close,Dividend,Split';

    const day1 = join(dir('daily-files'), '2024-01-04.csv');
    writeFileSync(
      day1,
      [header, 'AAA,2099-01-02,16.5,,,', 'BBB,2024-01-04,1,616,,,', 'AAA,2024-02-05,16.5,,,'].join('\n'),
    );
    const r1 = await appendDaily({ ...base, maxBadShare: 1, daily: day1, snapshots: snaps, now });
    expect(r1.unchanged).toBe(true);
    expect(r1.report.dataRows).toBe(3);
    expect(r1.report.skippedRows).toBe(3);
    expect(r1.report.reasons.get('daily_bad_row')).toMatchObject({
      count: 3,
      first: { file: '2024-01-04.csv', line: 2, code: 'AAA' },
    });
    expect(r1.report.examples.map((p) => p.detail)).toEqual([
      'dated 2099-01-02, after 2024-02-04, today + 31 days of grace',
      "long row: 7 fields, more than the header's 6",
      'dated 2024-02-05, after 2024-02-04, today + 31 days of grace',
    ]);

    // The fund is not frozen: the next real day appends.
    const day2 = join(dir('daily-files'), '2024-01-05.csv');
    writeFileSync(day2, [header, 'AAA,2024-01-04,16.32,,,', 'BBB,2024-01-05,16.5,,,'].join('\n'));
    const r2 = await appendDaily({ ...base, maxBadShare: 0, daily: day2, snapshots: snaps, now });
    expect(r2.report.skippedRows).toBe(0);
    expect(r2.manifest.as_of).toBe('2024-01-05');
    const l = await lookupOf(snaps);
    expect(JSON.parse(l.latestTrailingJson(0)).as_of_date).toBe('2024-01-04');
    expect(JSON.parse(l.latestTrailingJson(1)).as_of_date).toBe('2024-01-05');
  });
});

describe('files cut short or with a stray quote (C36)', () => {
  it('a row cut off mid-line is a short_row even with Date and the adjusted close in: not a price of 2', async () => {
    // An upload that stopped inside the last row's Adjusted_close: `16.26,2` of `16.26,20000`.
    const cut = `${EOD}2024-01-02,1,1,1,16,16,0\n2024-01-03,1,1,1,16.26,2`;
    const src = sourceOf(dir('cut-src'), { AAA: cut, BBB: GOOD });
    const snaps = dir('cut-snaps');
    const r = await buildFromSource({ ...base, maxBadShare: 0.5, source: src, snapshots: snaps });
    expect(r.report.reasons.get('short_row')).toMatchObject({
      count: 1,
      first: { file: join('prices', 'AAA.csv'), line: 3, detail: "6 of the header's 7 fields (cut short?)" },
    });
    const aaa = JSON.parse((await lookupOf(snaps)).latestTrailingJson(0));
    expect(aaa.as_of_date).toBe('2024-01-02');
  });

  it('rows swallowed by a stray quote each count as skipped, so the bound fails the build', async () => {
    const rows = Array.from(
      { length: 40 },
      (_, k) =>
        `2023-${String(1 + Math.floor(k / 28)).padStart(2, '0')}-${String(1 + (k % 28)).padStart(2, '0')},1,1,1,16,16,0`,
    );
    // A quote opens a field on line 3 and another closes one on line 40: 38 rows in one record.
    rows[1] = rows[1].replace(',1,1,1', ',"1,1,1');
    rows[38] = `${rows[38]}"`;
    const src = sourceOf(dir('quote-src'), { AAA: `${EOD}${rows.join('\n')}\n`, BBB: GOOD });
    const snaps = dir('quote-snaps');
    const failed = buildFromSource({ ...base, maxBadShare: 0.1, source: src, snapshots: snaps });
    await expect(failed).rejects.toBeInstanceOf(BuildError);
    const e = (await failed.catch((x: unknown) => x)) as BuildError;
    expect(e.report.reasons.get('multiline_row')).toMatchObject({ count: 38, first: { line: 3 } });
    expect(e.report.dataRows).toBe(42);
    expect(readCurrent(snaps)).toBeNull();
  });

  it('a file with CR-only line ends (classic Mac) is read row by row', async () => {
    const src = sourceOf(dir('cr-src'), { AAA: GOOD.replaceAll('\n', '\r'), BBB: GOOD });
    const snaps = dir('cr-snaps');
    const r = await buildFromSource({ ...base, maxBadShare: 0, source: src, snapshots: snaps });
    expect(r.report.skippedRows).toBe(0);
    expect(r.report.fundsIn).toBe(2);
  });

  it('two columns that both name the adjusted close leave the file unread, its rows counted (C35)', async () => {
    const twice = GOOD.replace('Close,Adjusted_close', 'Adjusted_close,Adjusted_close');
    const src = sourceOf(dir('twice-src'), { AAA: twice, BBB: GOOD, CCC: GOOD, DDD: GOOD });
    const snaps = dir('twice-snaps');
    const r = await buildFromSource({ ...base, maxBadShare: 0.5, source: src, snapshots: snaps });
    expect(r.report.reasons.get('missing_header_column')?.first.detail).toBe(
      'one adjusted close column, not 2 (Adjusted_close, Adjusted_close)',
    );
    expect(r.report.reasons.get('row_in_unreadable_file')?.count).toBe(2);
  });
});

describe('files in prices/ that are not read (C35)', () => {
  it('are reported, not silently skipped: a misnamed price file is a fund gone missing', async () => {
    const src = sourceOf(dir('ignored-src'), { AAA: GOOD, BBB: GOOD });
    writeFileSync(join(src, 'prices', 'CCC.CSV'), GOOD);
    writeFileSync(join(src, 'prices', 'notes.txt'), 'hello');
    const r = await buildFromSource({
      ...base,
      maxBadShare: 0,
      source: src,
      snapshots: dir('ignored-snaps'),
    });
    expect(r.report.reasons.get('ignored_file')).toMatchObject({
      count: 2,
      first: { file: join('prices', 'CCC.CSV'), detail: 'not read: price files are named <code>.csv' },
    });
    expect(r.report.skippedRows).toBe(0);
  });
});

describe('price files that cannot be read (C36)', () => {
  it('count their rows, estimated from their size, toward the bound: a build does not quietly lose them', async () => {
    const src = sourceOf(dir('unreadable-src'), { AAA: GOOD, BBB: GOOD });
    // A symlink to a directory reads as EISDIR; one into a loop as ELOOP: both "cannot be read".
    rmSync(join(src, 'prices', 'BBB.csv'));
    symlinkSync(join(src, 'prices'), join(src, 'prices', 'BBB.csv'));
    const failed = buildFromSource({
      ...base,
      maxBadShare: 0.2,
      source: src,
      snapshots: dir('unreadable-snaps'),
    });
    await expect(failed).rejects.toBeInstanceOf(BuildError);
    const e = (await failed.catch((x: unknown) => x)) as BuildError;
    expect(e.report.reasons.get('unreadable_file')).toMatchObject({ count: 1, first: { code: 'BBB' } });
    expect(e.report.reasons.get('row_in_unreadable_file')?.count).toBe(1);
    expect(e.report.skippedRows).toBe(1);
  });
});
