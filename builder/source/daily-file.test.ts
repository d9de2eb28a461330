import { describe, expect, it } from 'vitest';
import { fromYmd, parseDay } from '../../core/dates.js';
import { type DailyFileResult, parseDailyFile } from './daily-file.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const parse = (text: string): DailyFileResult => parseDailyFile(enc(text), 'daily/2020-01-03.csv');
const HEADER = 'Code,Date,Close,Adjusted_close,Dividend,Split\n';

describe('parseDailyFile (C37)', () => {
  it('reads rows into parallel arrays; blank Dividend is 0 and blank Split is 1', () => {
    const r = parse(
      `${HEADER}SPY,2020-01-03,320.5,999,1.25,\nVFIAX,2020-01-03 00:00:00,280,,,2\nAGG,2020-01-03,110,,,\n`,
    );
    expect(r.rows.length).toBe(3);
    expect(r.rows.codes).toEqual(['SPY', 'VFIAX', 'AGG']);
    expect([...r.rows.dates]).toEqual([
      parseDay('2020-01-03'),
      parseDay('2020-01-03'),
      parseDay('2020-01-03'),
    ]);
    expect([...r.rows.close]).toEqual([320.5, 280, 110]);
    expect([...r.rows.dividend]).toEqual([1.25, 0, 0]);
    expect([...r.rows.split]).toEqual([1, 2, 1]);
    expect([...r.rows.lines]).toEqual([2, 3, 4]);
    expect(r.dataRows).toBe(3);
    expect(r.problems).toEqual([]);
  });

  it('ignores Adjusted_close, even when it is garbage (C37)', () => {
    const r = parse(`${HEADER}SPY,2020-01-03,320.5,NaN,,\n`);
    expect(r.rows.length).toBe(1);
    expect(r.problems).toEqual([]);
  });

  it('matches headers case-insensitively in any order; Dividend and Split columns may be absent (C35)', () => {
    const r = parse('close,CODE,date\r\n10,X,2020-01-03\r\n');
    expect(r.rows.codes).toEqual(['X']);
    expect([...r.rows.dividend]).toEqual([0]);
    expect([...r.rows.split]).toEqual([1]);
  });

  it('a missing Close column yields no rows and one missing_header_column problem', () => {
    const r = parse('Code,Date,Adjusted_close\nX,2020-01-03,1\n');
    expect(r.rows.length).toBe(0);
    expect(r.problems).toEqual([
      { reason: 'missing_header_column', file: 'daily/2020-01-03.csv', line: 1, detail: 'Close' },
    ]);
  });

  it('a negative dividend, a split ≤ 0, a bad or non-positive Close, a bad date or code is a daily_bad_row (C37, C36)', () => {
    const r = parse(
      [
        'Code,Date,Close,Adjusted_close,Dividend,Split', // 1
        'A,2020-01-03,10,,-0.5,', // 2 negative dividend
        'B,2020-01-03,10,,,0', // 3 split 0
        'C,2020-01-03,10,,,-2', // 4 split < 0
        'D,2020-01-03,0,,,', // 5 close 0
        'E,2020-01-03,NaN,,,', // 6
        'F,2015-02-29,10,,,', // 7 impossible date
        ',2020-01-03,10,,,', // 8 empty code
        'G,2020-01-03', // 9 short
        '', // 10 blank
        'H,2020-01-03,10,,Infinity,', // 11
        'I,2020-01-03,10,,,x', // 12
        'J,2020-01-03,10,,-0,', // 13 ok: -0 is not negative
      ].join('\n'),
    );
    expect(r.rows.codes).toEqual(['J']);
    expect(Object.is(r.rows.dividend[0], 0)).toBe(true);
    expect(r.dataRows).toBe(11);
    expect(r.problems.map((p) => [p.reason, p.line, p.code])).toEqual([
      ['daily_bad_row', 2, 'A'],
      ['daily_bad_row', 3, 'B'],
      ['daily_bad_row', 4, 'C'],
      ['daily_bad_row', 5, 'D'],
      ['daily_bad_row', 6, 'E'],
      ['daily_bad_row', 7, 'F'],
      ['daily_bad_row', 8, undefined],
      ['daily_bad_row', 9, undefined],
      ['daily_bad_row', 11, 'H'],
      ['daily_bad_row', 12, 'I'],
    ]);
    for (const p of r.problems) expect(p.detail).toBeTruthy();
  });

  it('an empty file is a missing header', () => {
    expect(parse('').problems.map((p) => p.reason)).toEqual(['missing_header_column']);
  });

  it('a row with more fields than the header is a daily_bad_row: `1,234.5` is not a Close of 1 (C36)', () => {
    const r = parse(
      [
        'Code,Date,Close,Adjusted_close,Dividend,Split', // 1
        'A,2020-01-03,1,234.5,,,', // 2 thousands separator
        'B,2020-01-03,10,5,,,', // 3 decimal comma
        'C,2020-01-03,"1,234.5",,,', // 4 quoted: one field, still not a plain number
        'D,2020-01-03,"12",,,', // 5 ok, quoted
      ].join('\n'),
    );
    expect(r.rows.codes).toEqual(['D']);
    expect([...r.rows.close]).toEqual([12]);
    expect(r.dataRows).toBe(4);
    expect(r.problems).toEqual([
      {
        reason: 'daily_bad_row',
        file: 'daily/2020-01-03.csv',
        line: 2,
        detail: "long row: 7 fields, more than the header's 6",
      },
      {
        reason: 'daily_bad_row',
        file: 'daily/2020-01-03.csv',
        line: 3,
        detail: "long row: 7 fields, more than the header's 6",
      },
      {
        reason: 'daily_bad_row',
        file: 'daily/2020-01-03.csv',
        line: 4,
        code: 'C',
        detail: 'Close "1,234.5" is not a positive number',
      },
    ]);
  });

  it('a row dated after today (UTC) plus the days of grace is a daily_bad_row (C36)', () => {
    const latest = fromYmd(2020, 1, 4); // the last day accepted
    const r = parseDailyFile(
      new TextEncoder().encode(
        `${HEADER}A,2020-01-03,10,,,\nB,2020-01-04,10,,,\nC,2020-01-05,10,,,\nD,2099-01-02 00:00:00,10,,,\n`,
      ),
      'daily/2020-01-03.csv',
      latest,
    );
    expect(r.rows.codes).toEqual(['A', 'B']);
    expect(r.problems.map((p) => [p.reason, p.line, p.code, p.detail])).toEqual([
      ['daily_bad_row', 4, 'C', 'dated 2020-01-05, after 2020-01-04, today + 31 days of grace'],
      ['daily_bad_row', 5, 'D', 'dated 2099-01-02, after 2020-01-04, today + 31 days of grace'],
    ]);
  });
});

describe('parseDailyFile: cut and swallowed rows (C36, C37)', () => {
  it('a row cut off after its Close is a daily_bad_row, not a close of 1', () => {
    const r = parse(`${HEADER}SPY,2020-01-03,320.5,320.5,,\nXHTPX,2020-01-03,1`);
    expect(r.rows.codes).toEqual(['SPY']);
    expect(r.problems).toMatchObject([
      { reason: 'daily_bad_row', line: 3, detail: "short row: 3 of the header's 6 fields (cut short?)" },
    ]);
  });

  it('rows swallowed by a stray quote are each a daily_bad_row', () => {
    const r = parse(
      `${HEADER}SPY,"2020-01-03,320.5,,,\nAGG,2020-01-03,110,,,\nVTI,2020-01-03,200,,,"\nBND,2020-01-03,70,,,\n`,
    );
    expect(r.rows.codes).toEqual(['BND']);
    expect(r.dataRows).toBe(4);
    expect(r.problems.map((p) => [p.reason, p.line])).toEqual([
      ['daily_bad_row', 2],
      ['daily_bad_row', 3],
      ['daily_bad_row', 4],
    ]);
  });
});
