/**
 * The source files' writers (beside their readers) against those readers: what a
 * writer writes, the reader reads back as the same records, whatever the names hold.
 */
import { describe, expect, it } from 'vitest';
import { formatDay, parseDay } from '../../core/dates.js';
import type { FundRecord } from '../../core/types.js';
import { csvCell, RecordReader } from './csv.js';
import {
  DAILY_HEADER,
  dailyHeader,
  dailyLine,
  dividendCell,
  parseDailyFile,
  splitCell,
} from './daily-file.js';
import { FUNDS_HEADER, fundsFileText, parseFundsFile } from './funds.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A daily file of 2026-11-20 read as the build reads it. */
const readDaily = (text: string) =>
  parseDailyFile(enc(text), 'daily/2026-11-20.csv', parseDay('2026-11-20') as number, 'the test day');

/** Cells a naive writer would break: separators, quotes, line breaks, blanks, spaces, other scripts. */
const AWKWARD = [
  'Growth, Income & Value Fund',
  'The "Best" Fund',
  '"',
  '""',
  ',',
  'Line one\nline two',
  'Carriage\r\nreturn',
  'Ends with a quote"',
  ' spaced ',
  'Fonds européen — 株式',
  '',
];

/** What the readers get back: the cell itself, its line breaks made spaces (csvCell says why). */
const oneLine = (s: string): string => s.replace(/\r\n|[\r\n]/g, ' ');

describe('csvCell and the reader it writes for', () => {
  it('every awkward cell is read back exactly, line breaks as spaces, each record on one line', () => {
    const text = `${AWKWARD.map(csvCell).join(',')}\n${AWKWARD.slice().reverse().map(csvCell).join(',')}\n`;
    const r = new RecordReader(enc(text));
    expect(r.next()).toBe(true);
    expect(r.texts()).toEqual(AWKWARD.map(oneLine));
    expect(r.spanned).toBe(0);
    expect(r.next()).toBe(true);
    expect(r.texts()).toEqual(AWKWARD.slice().reverse().map(oneLine));
    expect(r.next()).toBe(false);
  });

  it('quotes only what needs it, and writes null as a blank cell', () => {
    expect(csvCell('Vanguard 500 Index')).toBe('Vanguard 500 Index');
    expect(csvCell('A, "B"')).toBe('"A, ""B"""');
    expect(csvCell(null)).toBe('');
  });
});

describe('funds.csv: fundsFileText and parseFundsFile (C35)', () => {
  it('the records written are the records read, names with commas and quotes included; a newline is read as a space, never a lost fund', () => {
    const funds: FundRecord[] = AWKWARD.filter((n) => n.trim() !== '').map((name, i) => ({
      code: `F${String(i).padStart(3, '0')}X`,
      name,
      country: i % 2 === 0 ? 'USA' : null,
      exchange: i % 3 === 0 ? 'NYSE ARCA' : 'NMFQS',
      currency: 'USD',
      type: i % 2 === 0 ? 'ETF' : 'FUND',
      isin: i % 4 === 0 ? null : 'US78462F1030',
      isInactive: i % 5 === 0,
      inactiveDate: i % 5 === 0 ? parseDay('2024-02-29') : null,
    }));
    const text = fundsFileText(funds);
    expect(text.startsWith(FUNDS_HEADER)).toBe(true);
    const read = parseFundsFile(enc(text), 'funds.csv');
    expect(read.problems).toEqual([]);
    expect(read.funds).toEqual(funds.map((f) => ({ ...f, name: oneLine(f.name as string) })));
  });

  it('a row of another type is written and counted, not read as a fund (C35)', () => {
    const text = fundsFileText([
      {
        code: 'SPY',
        name: 'S, P',
        country: 'USA',
        exchange: 'NYSE',
        currency: 'USD',
        type: 'Common Stock',
        isin: null,
        isInactive: false,
        inactiveDate: null,
      },
    ]);
    const read = parseFundsFile(enc(text), 'funds.csv');
    expect(read.funds).toEqual([]);
    expect(read.skippedOtherTypes).toBe(1);
  });
});

describe('daily files: dailyLine and parseDailyFile (C37)', () => {
  it('the rows written are the rows read, blank dividend, split and adjusted close included', () => {
    const rows = [
      { code: 'VFIAX', date: '2026-11-20', close: 512.34, adj: '512.34', dividend: 0, split: 1 },
      { code: 'SPY', date: '2026-11-20', close: 601.5, adj: '', dividend: 1.7435, split: 1 },
      { code: 'QQQ', date: '2026-11-20', close: 99.125, adj: '99.1', dividend: 0, split: 2 },
      { code: 'BRK.B', date: '2026-11-20', close: 0.01, adj: '', dividend: 0, split: 0.5 },
    ];
    let text = DAILY_HEADER;
    for (const r of rows)
      text += dailyLine({
        code: r.code,
        date: r.date,
        close: String(r.close),
        adjClose: r.adj,
        dividend: dividendCell(r.dividend),
        split: splitCell(r.split),
      });
    const read = readDaily(text);
    expect(read.problems).toEqual([]);
    expect(read.rows.codes).toEqual(rows.map((r) => r.code));
    expect([...read.rows.dates].map(formatDay)).toEqual(rows.map((r) => r.date));
    expect([...read.rows.close]).toEqual(rows.map((r) => r.close));
    expect([...read.rows.dividend]).toEqual(rows.map((r) => r.dividend));
    expect([...read.rows.split]).toEqual(rows.map((r) => r.split));
  });

  it('writes the header the contract documents (C37), or it without Adjusted_close, and lines to match', () => {
    expect(DAILY_HEADER).toBe('Code,Date,Close,Adjusted_close,Dividend,Split\n');
    const text = `${dailyHeader(false)}${dailyLine({ code: 'SPY', date: '2026-11-20', close: '601.5', dividend: '1.7', split: '' })}`;
    expect(text).toBe('Code,Date,Close,Dividend,Split\nSPY,2026-11-20,601.5,1.7,\n');
    const read = readDaily(text);
    expect(read.problems).toEqual([]);
    expect([read.rows.close[0], read.rows.dividend[0], read.rows.split[0]]).toEqual([601.5, 1.7, 1]);
  });
});
