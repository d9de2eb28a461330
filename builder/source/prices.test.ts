import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fromYmd, parseDay } from '../../core/dates.js';
import { type PriceFileResult, parsePriceFile } from './prices.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const parse = (text: string): PriceFileResult => parsePriceFile(enc(text), 'X.csv', 'X');
const day = (s: string): number => parseDay(s) ?? Number.NaN;
const EOD = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
const REAL = new URL('../../../shared/data/real/prices/', import.meta.url);

function problemsOf(r: PriceFileResult): [string, number][] {
  return r.problems.map((p) => [p.reason, p.line]);
}

describe('parsePriceFile: dialects (C35)', () => {
  it('reads the EODHD header, values from Adjusted_close and lastClose from Close', () => {
    const r = parse(`${EOD}2020-01-02,1,1,1,10.5,10.25,100\n2020-01-03,1,1,1,11,10.75,100\n`);
    expect([...r.dates]).toEqual([day('2020-01-02'), day('2020-01-03')]);
    expect([...r.values]).toEqual([10.25, 10.75]);
    expect(r.lastClose).toBe(11);
    expect(r.dataRows).toBe(2);
    expect(r.problems).toEqual([]);
  });

  it('reads the Yahoo header (Adj Close) with CRLF and an extra trailing stock column', () => {
    const r = parse(
      'Date,Open,High,Low,Close,Adj Close,Volume,stock\r\n' +
        '1993-01-29,43.96875,43.96875,43.75,43.9375,25.122339,1003200,SPY.csv\r\n' +
        '1993-02-01,43.96875,44.25,43.96875,44.25,25.301025,480500,SPY.csv\r\n',
    );
    expect([...r.values]).toEqual([25.122339, 25.301025]);
    expect(r.lastClose).toBe(44.25);
    expect(r.problems).toEqual([]);
  });

  it('reads the yfinance multi-row header: the mislabelled second Price column is the adjusted close', () => {
    const r = parse(
      'Price,Price,Close,High,Low,Open,Volume\n' +
        'Ticker,AGG,AGG,AGG,AGG,AGG,AGG\n' +
        'Ticker,AGG,AGG,AGG,AGG,AGG,AGG\n' +
        'Date,,,,,,\n' +
        '2003-09-29 00:00:00,50.9034309387207,101.5,101.5,101.0,101.2,3600\n' +
        '2003-09-30 00:00:00,51.0,101.7,101.9,101.4,101.5,2000\n',
    );
    expect([...r.dates]).toEqual([day('2003-09-29'), day('2003-09-30')]);
    expect([...r.values]).toEqual([50.9034309387207, 51]);
    expect(r.lastClose).toBe(101.7);
    expect(r.dataRows).toBe(2);
    expect(r.problems).toEqual([]);
  });

  it('reads the yfinance header that labels Adj Close, wherever that column is', () => {
    const r = parse(
      'Price,Close,Adj Close,High,Low,Open,Volume\nTicker,X,X,X,X,X,X\nDate,,,,,,\n' +
        '2020-01-02 00:00:00,10,9,10,10,10,1\n',
    );
    expect([...r.values]).toEqual([9]);
    expect(r.lastClose).toBe(10);
  });

  it('reads a yfinance file with a single Ticker line and no Date line', () => {
    const r = parse('Price,Adj Close,Close\nTicker,X,X\n2020-01-02 00:00:00,9,10\n');
    expect([...r.values]).toEqual([9]);
    expect(r.dataRows).toBe(1);
  });

  it('needs only Date and Adjusted_close; without Close, lastClose is NaN (C35)', () => {
    const r = parse('Date,Adjusted_close\n2020-01-02,5\n');
    expect([...r.values]).toEqual([5]);
    expect(r.lastClose).toBeNaN();
  });

  it('matches header names case-insensitively in any order, ignoring extra columns (C35)', () => {
    const r = parse('volume,ADJUSTED_CLOSE,Note,close,DATE\n100,5.5,hello,6,2020-01-02\n');
    expect([...r.dates]).toEqual([day('2020-01-02')]);
    expect([...r.values]).toEqual([5.5]);
    expect(r.lastClose).toBe(6);
  });

  it('skips a UTF-8 BOM before the header', () => {
    const r = parse(`\uFEFF${EOD}2020-01-02,1,1,1,1,2,1\n`);
    expect([...r.values]).toEqual([2]);
    expect(r.problems).toEqual([]);
  });

  it('accepts dates with a 00:00:00 suffix in any dialect (C36)', () => {
    const r = parse('Date,Adjusted_close\n2020-01-02 00:00:00,5\n2020-01-03,6\n');
    expect([...r.dates]).toEqual([day('2020-01-02'), day('2020-01-03')]);
  });

  it('reads quoted fields', () => {
    const r = parse('"Date","Adj Close","Close"\n"2020-01-02","5.5","6"\n');
    expect([...r.values]).toEqual([5.5]);
    expect(r.lastClose).toBe(6);
  });
});

describe('parsePriceFile: bad input (C36)', () => {
  it('a missing Adjusted_close column yields no rows: its data rows are skipped rows (C36)', () => {
    const r = parse('Date,Open,High,Low,Close,Volume\n2020-01-02,1,1,1,1,1\n\n2020-01-03,1,1,1,1,1\n');
    expect(r.dates.length).toBe(0);
    expect(r.dataRows).toBe(2);
    expect(r.problems).toEqual([
      { reason: 'missing_header_column', file: 'X.csv', line: 1, code: 'X', detail: 'Adjusted_close' },
      { reason: 'row_in_unreadable_file', file: 'X.csv', line: 2, code: 'X' },
      { reason: 'row_in_unreadable_file', file: 'X.csv', line: 4, code: 'X' },
    ]);
  });

  it('a missing Date column yields no rows: its data rows are skipped rows (C36)', () => {
    const r = parse('Day,Adjusted_close\n2020-01-02,1\n');
    expect(r.dates.length).toBe(0);
    expect(problemsOf(r)).toEqual([
      ['missing_header_column', 1],
      ['row_in_unreadable_file', 2],
    ]);
  });

  it('an empty file is a missing header, not a crash', () => {
    expect(problemsOf(parse(''))).toEqual([['missing_header_column', 1]]);
    expect(problemsOf(parse('\uFEFF\n\n'))).toEqual([['missing_header_column', 1]]);
  });

  it('a header-only file has no rows and no problems (leaving out the fund is the build’s call)', () => {
    const r = parse(EOD);
    expect(r.dates.length).toBe(0);
    expect(r.dataRows).toBe(0);
    expect(r.problems).toEqual([]);
  });

  it('every kind of bad row is skipped and reported with its 1-based line, blank lines ignored (C36)', () => {
    const text = [
      'Date,Close,Adjusted_close', // 1
      '2020-01-02,10,1.0', // 2 ok
      '', // 3 blank
      '2015-02-29,10,1.1', // 4 impossible date
      '2020-01-03,10,NaN', // 5
      '2020-01-03,10,Infinity', // 6
      '2020-01-03,10,12.3.4', // 7
      '2020-01-03,10,', // 8 empty price
      '2020-01-03,10,0', // 9
      '2020-01-03,10,-2', // 10
      '2020-01-02,10,1.2', // 11 duplicate of line 2
      '2019-12-31,10,1.3', // 12 earlier
      '2020-01-03,10', // 13 short
      '   ', // 14 blank
      '2020-01-03,10,1.4', // 15 ok
      '2020-01-03 00:00:01,10,1.5', // 16 bad time
      '2020-01-04,10,1e400', // 17 overflows to Infinity
      '2020-01-04,10,1e-400', // 18 underflows to 0
      '2020-01-04,10,0x10', // 19
      '2020-01-04', // 20 short
    ].join('\n');
    const r = parse(text);
    expect([...r.dates]).toEqual([day('2020-01-02'), day('2020-01-03')]);
    expect([...r.values]).toEqual([1, 1.4]);
    expect(r.dataRows).toBe(17);
    expect(problemsOf(r)).toEqual([
      ['unparsable_date', 4],
      ['unparsable_price', 5],
      ['unparsable_price', 6],
      ['unparsable_price', 7],
      ['unparsable_price', 8],
      ['non_positive_price', 9],
      ['non_positive_price', 10],
      ['duplicate_date', 11],
      ['out_of_order_date', 12],
      ['short_row', 13],
      ['unparsable_date', 16],
      ['unparsable_price', 17],
      ['non_positive_price', 18],
      ['unparsable_price', 19],
      ['short_row', 20],
    ]);
    for (const p of r.problems) expect(p).toMatchObject({ file: 'X.csv', code: 'X' });
    expect(r.problems[0].detail).toBe('2015-02-29');
  });

  it('an impossible date 2015-02-29 is a bad row, not 2015-03-01 (C36)', () => {
    const r = parse('Date,Adjusted_close\n2015-02-28,1\n2015-02-29,2\n2015-03-01,3\n');
    expect([...r.dates]).toEqual([fromYmd(2015, 2, 28), fromYmd(2015, 3, 1)]);
    expect(problemsOf(r)).toEqual([['unparsable_date', 3]]);
  });

  it('duplicate and out-of-order dates are judged against the previous valid row only (C36)', () => {
    const r = parse(
      'Date,Adjusted_close\n2020-01-05,1\n2020-01-09,x\n2020-01-06,2\n2020-01-06,3\n2020-01-05,4\n',
    );
    expect([...r.dates]).toEqual([day('2020-01-05'), day('2020-01-06')]);
    expect(problemsOf(r)).toEqual([
      ['unparsable_price', 3],
      ['duplicate_date', 5],
      ['out_of_order_date', 6],
    ]);
  });

  it('a bad Close does not make a row bad; it only makes lastClose NaN (C36, C37)', () => {
    const r = parse(`${EOD}2020-01-02,1,1,1,10,5,1\n2020-01-03,1,1,1,NaN,6,1\n`);
    expect([...r.values]).toEqual([5, 6]);
    expect(r.problems).toEqual([]);
    expect(r.lastClose).toBeNaN();
    expect(parse(`${EOD}2020-01-02,1,1,1,0,5,1\n`).lastClose).toBeNaN();
    expect(parse('Date,Adjusted_close,Close\n2020-01-02,5\n').lastClose).toBeNaN();
  });

  it('lastClose comes from the last valid row, not from a later bad one', () => {
    const r = parse(`${EOD}2020-01-02,1,1,1,10,5,1\n2020-01-01,1,1,1,99,6,1\n`);
    expect(r.lastClose).toBe(10);
  });

  it('lastClose from a quoted last row survives the scratch buffer being reused', () => {
    const r = parse('Date,Close,Adjusted_close\n"2020-01-02","10.5",5\n"2020-01-01","99",6\n');
    expect(r.lastClose).toBe(10.5);
  });

  it('results of one file are not disturbed by parsing the next (the row buffer is reused)', () => {
    const a = parse('Date,Adjusted_close\n2020-01-02,1\n2020-01-03,2\n');
    parse('Date,Adjusted_close\n1999-01-02,7\n1999-01-03,8\n');
    expect([...a.values]).toEqual([1, 2]);
    expect([...a.dates]).toEqual([day('2020-01-02'), day('2020-01-03')]);
  });

  it('handles a file larger than the initial row buffer', () => {
    // 40,000 days ending in 1997, so none is in the future (C36).
    const first = -30_000;
    const lines = ['Date,Adjusted_close'];
    for (let d = 0; d < 40_000; d++)
      lines.push(`${new Date((first + d) * 86_400_000).toISOString().slice(0, 10)},${d + 1}`);
    const r = parse(lines.join('\n'));
    expect(r.dates.length).toBe(40_000);
    expect(r.dates[39_999]).toBe(first + 39_999);
    expect(r.values[39_999]).toBe(40_000);
  });
});

describe('parsePriceFile: rows longer than the header (C36)', () => {
  it('a row with more fields than the header is a long_row: `1,234.5` is not a price of 1', () => {
    const r = parse(
      [
        'Date,Open,High,Low,Close,Adjusted_close,Volume', // 1
        '2020-01-02,1,1,1,16.16,16.16,0', // 2 ok
        '2020-01-03,1,1,1,16.16,1,234.5,0', // 3 unquoted thousands separator
        '2020-01-06,1,1,1,10,10,5,0', // 4 decimal comma
        '2020-01-07,1,1,1,16.2,"1,234.5",0', // 5 quoted: one field, still not a plain number
        '2020-01-08,1,1,1,16.3,16.3,0,', // 6 a trailing empty field is still one too many
        '2020-01-09,1,1,1,16.4,"16.4",0', // 7 ok, quoted
      ].join('\n'),
    );
    expect([...r.dates]).toEqual([day('2020-01-02'), day('2020-01-09')]);
    expect([...r.values]).toEqual([16.16, 16.4]);
    expect(r.dataRows).toBe(6);
    expect(problemsOf(r)).toEqual([
      ['long_row', 3],
      ['long_row', 4],
      ['unparsable_price', 5],
      ['long_row', 6],
    ]);
    expect(r.problems[0]).toEqual({
      reason: 'long_row',
      file: 'X.csv',
      line: 3,
      code: 'X',
      detail: "more fields than the header's 7",
    });
  });

  it('a long row is caught even when Date and Adjusted_close come first, and in a quoted record', () => {
    const r = parse('Date,Adjusted_close\n2020-01-02,10,5\n"2020-01-03",10,5\n2020-01-06,10.5\n');
    expect([...r.values]).toEqual([10.5]);
    expect(problemsOf(r)).toEqual([
      ['long_row', 2],
      ['long_row', 3],
    ]);
  });

  it('extra and reordered header columns still give the same series (C35)', () => {
    const plain = parse('Date,Adjusted_close\n2020-01-02,10\n2020-01-03,10.5\n');
    const extra = parse(
      'Note,Adj Close,Volume,DATE,Close,stock\nx,10,1,2020-01-02,11,X.csv\n,10.5,2,2020-01-03,12,\n',
    );
    expect(extra.problems).toEqual([]);
    expect([...extra.dates]).toEqual([...plain.dates]);
    expect([...extra.values]).toEqual([...plain.values]);
    expect(extra.lastClose).toBe(12);
  });
});

describe('parsePriceFile: rows dated in the future (C36)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a row dated after today (UTC) plus the days of grace is a future_date and does not block later rows', () => {
    const latest = fromYmd(2020, 1, 7); // the last day accepted
    const r = parsePriceFile(
      enc(
        'Date,Adjusted_close\n2020-01-02,10\n2099-12-31,11\n2020-01-06,12\n2020-01-07 00:00:00,13\n2020-01-08,14\n',
      ),
      'X.csv',
      'X',
      latest,
    );
    expect([...r.dates]).toEqual([day('2020-01-02'), day('2020-01-06'), day('2020-01-07')]);
    expect([...r.values]).toEqual([10, 12, 13]);
    expect(r.dataRows).toBe(5);
    expect(problemsOf(r)).toEqual([
      ['future_date', 3],
      ['future_date', 6],
    ]);
    expect(r.problems[0].detail).toBe('2099-12-31 is after 2020-01-07, today + 31 days of grace');
  });

  it('without an explicit date, today is read from the clock', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(Date.UTC(2024, 2, 10, 23, 30)));
    // Today 2024-03-10: 31 days of grace end on 2024-04-10.
    const r = parse('Date,Adjusted_close\n2024-03-08,10\n2024-04-10,11\n2024-04-11,12\n');
    expect([...r.dates]).toEqual([day('2024-03-08'), day('2024-04-10')]);
    expect(problemsOf(r)).toEqual([['future_date', 4]]);
  });
});

describe('parsePriceFile: the real files in data/real/prices (C35)', () => {
  const dir = fileURLToPath(REAL);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.csv'))
    .sort();
  const read = (name: string): PriceFileResult =>
    parsePriceFile(readFileSync(new URL(name, REAL)), name, name.slice(0, -4));
  const expectedRows: Record<string, number> = {
    AGG: 5535,
    DIA: 6351,
    EFA: 6057,
    FNILX: 1143,
    GLD: 5247,
    IVV: 5762,
    IWM: 6372,
    QQQ: 6065,
    SPY: 7607,
    SWPPX: 6519,
    TLT: 5829,
    TRIWX: 892,
    VFIAX: 1260,
    VFINX: 10162,
    VNQ: 5283,
    VOO: 3171,
    VTI: 5492,
    VTWO: 3162,
    VUSTX: 8550,
  };

  it('all 19 files parse with zero problems and the row counts of SOURCES.md', () => {
    expect(files.length).toBe(19);
    for (const f of files) {
      const r = read(f);
      expect(r.problems, f).toEqual([]);
      expect(r.dates.length, f).toBe(expectedRows[f.slice(0, -4)]);
      expect(r.dataRows, f).toBe(r.dates.length);
      for (let i = 1; i < r.dates.length; i++)
        if (r.dates[i] <= r.dates[i - 1]) throw new Error(`${f} order`);
      expect(r.lastClose, f).toBeGreaterThan(0);
    }
  });

  it('AGG.csv (yfinance) gives 5535 rows starting 2003-09-29 at 50.9034309387207', () => {
    const r = read('AGG.csv');
    expect(r.dates.length).toBe(5535);
    expect(r.dates[0]).toBe(fromYmd(2003, 9, 29));
    expect(r.values[0]).toBe(50.9034309387207);
    expect(r.dates[r.dates.length - 1]).toBe(fromYmd(2025, 9, 26));
    expect(r.lastClose).toBe(100.06999969482422);
  });

  it('SPY.csv (Yahoo with a stock column) gives 7607 rows', () => {
    const r = read('SPY.csv');
    expect(r.dates.length).toBe(7607);
    expect(r.dates[0]).toBe(fromYmd(1993, 1, 29));
    expect(r.values[0]).toBe(25.122339);
    expect(r.lastClose).toBe(412.459991);
  });

  it('VFINX.csv, whose last line has no newline, gives 10162 rows including that line', () => {
    const r = read('VFINX.csv');
    expect(r.dates.length).toBe(10162);
    expect(r.dates[10161]).toBe(fromYmd(2020, 4, 20));
    expect(r.values[10161]).toBe(260.829987);
  });

  it('every value equals Number() of the adjusted-close text (checked against a naive split)', () => {
    for (const f of ['AGG.csv', 'SPY.csv', 'VUSTX.csv']) {
      const text = readFileSync(new URL(f, REAL), 'utf8');
      const lines = text.split(/\r?\n/).filter((l) => /^\d{4}-/.test(l));
      const col = f === 'AGG.csv' ? 1 : 5;
      const r = read(f);
      const naive = lines.map((l) => Number(l.split(',')[col]));
      expect([...r.values], f).toEqual(naive);
    }
  });
});
