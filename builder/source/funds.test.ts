import { describe, expect, it } from 'vitest';
import { parseDay } from '../../core/dates.js';
import { type FundsFileResult, parseFundsFile } from './funds.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const parse = (text: string): FundsFileResult => parseFundsFile(enc(text), 'funds.csv');
const HEADER = 'Code,Name,Country,Exchange,Currency,Type,Isin,IsInactive,InactiveDate\n';

describe('parseFundsFile (C35, C36, C15, C17)', () => {
  it('reads a full row, and blank optional fields become null (C17)', () => {
    const r = parse(
      `${HEADER}SPY,SPDR S&P 500 ETF Trust,USA,NYSE ARCA,USD,ETF,US78462F1030,false,\nVFIAX,,,,,FUND,,,\n`,
    );
    expect(r.funds).toEqual([
      {
        code: 'SPY',
        name: 'SPDR S&P 500 ETF Trust',
        country: 'USA',
        exchange: 'NYSE ARCA',
        currency: 'USD',
        type: 'ETF',
        isin: 'US78462F1030',
        isInactive: false,
        inactiveDate: null,
      },
      {
        code: 'VFIAX',
        name: null,
        country: null,
        exchange: null,
        currency: null,
        type: 'FUND',
        isin: null,
        isInactive: false,
        inactiveDate: null,
      },
    ]);
    expect(r.dataRows).toBe(2);
    expect(r.problems).toEqual([]);
  });

  it('matches headers case-insensitively in any order and ignores extra columns; only Code and Type are required (C35)', () => {
    const r = parse('TYPE,extra,code,NAME\r\nETF,zzz,AAA,Alpha\r\n');
    expect(r.funds).toHaveLength(1);
    expect(r.funds[0]).toMatchObject({
      code: 'AAA',
      name: 'Alpha',
      type: 'ETF',
      isInactive: false,
      isin: null,
    });
  });

  it('a missing Code or Type column yields no funds and one missing_header_column problem', () => {
    const r = parse('Code,Name\nAAA,Alpha\n');
    expect(r.funds).toEqual([]);
    expect(r.problems).toEqual([
      { reason: 'missing_header_column', file: 'funds.csv', line: 1, detail: 'Type' },
    ]);
    expect(parse('').problems.map((p) => p.reason)).toEqual(['missing_header_column']);
  });

  it('keeps only Type exactly ETF or FUND; other types are counted, not problems (C35, C36)', () => {
    const r = parse(`${HEADER}A,,,,,ETF,,,\nB,,,,,Common Stock,,,\nC,,,,,etf,,,\nD,,,,,FUND,,,\nE,,,,,,,,\n`);
    expect(r.funds.map((f) => f.code)).toEqual(['A', 'D']);
    expect(r.skippedOtherTypes).toBe(3);
    expect(r.dataRows).toBe(5);
    expect(r.problems).toEqual([]);
  });

  it('IsInactive is true/false/1/0 in any case, blank meaning false; anything else is a bad row (C36)', () => {
    const r = parse(
      `${HEADER}A,,,,,ETF,,TRUE,\nB,,,,,ETF,,False,\nC,,,,,ETF,,1,\nD,,,,,ETF,,0,\nE,,,,,ETF,,,\nF,,,,,ETF,,yes,\n`,
    );
    expect(r.funds.map((f) => [f.code, f.isInactive])).toEqual([
      ['A', true],
      ['B', false],
      ['C', true],
      ['D', false],
      ['E', false],
    ]);
    expect(r.problems).toMatchObject([{ reason: 'bad_fund_row', line: 7, code: 'F' }]);
  });

  it('InactiveDate is blank or a valid date, with an optional 00:00:00 suffix; 2015-02-29 is a bad row (C36)', () => {
    const r = parse(
      `${HEADER}A,,,,,ETF,,true,2020-03-31\nB,,,,,ETF,,true,2020-03-31 00:00:00\nC,,,,,ETF,,true,2015-02-29\nD,,,,,ETF,,true,31/03/2020\n`,
    );
    expect(r.funds.map((f) => [f.code, f.inactiveDate])).toEqual([
      ['A', parseDay('2020-03-31')],
      ['B', parseDay('2020-03-31')],
    ]);
    expect(r.problems.map((p) => [p.reason, p.line, p.code])).toEqual([
      ['bad_fund_row', 4, 'C'],
      ['bad_fund_row', 5, 'D'],
    ]);
  });

  it('a repeated code keeps its first row and reports the later one as duplicate_fund (C36)', () => {
    const r = parse(`${HEADER}A,First,,,,ETF,,,\nA,Second,,,,FUND,,,\n`);
    expect(r.funds).toHaveLength(1);
    expect(r.funds[0].name).toBe('First');
    expect(r.problems).toEqual([{ reason: 'duplicate_fund', file: 'funds.csv', line: 3, code: 'A' }]);
  });

  it('a bad first row does not hide a later good row with the same code', () => {
    const r = parse(`${HEADER}A,Bad,,,,ETF,,maybe,\nA,Good,,,,ETF,,,\n`);
    expect(r.funds.map((f) => f.name)).toEqual(['Good']);
    expect(r.problems.map((p) => p.reason)).toEqual(['bad_fund_row']);
  });

  it('codes are case-sensitive: SPY and spy are two funds (C15)', () => {
    const r = parse(`${HEADER}SPY,,,,,ETF,,,\nspy,,,,,ETF,,,\n`);
    expect(r.funds.map((f) => f.code)).toEqual(['SPY', 'spy']);
  });

  it('a code that cannot exist (empty, over 32 characters, control characters) is a bad row (C15)', () => {
    const long = 'A'.repeat(33);
    const ok32 = 'B'.repeat(32);
    const r = parse(`${HEADER},,,,,ETF,,,\n${long},,,,,ETF,,,\n"C\tD",,,,,ETF,,,\n${ok32},,,,,ETF,,,\n`);
    expect(r.funds.map((f) => f.code)).toEqual([ok32]);
    expect(r.problems.map((p) => [p.reason, p.line])).toEqual([
      ['bad_fund_row', 2],
      ['bad_fund_row', 3],
      ['bad_fund_row', 4],
    ]);
  });

  it('names may be quoted, hold commas, doubled quotes and non-ASCII UTF-8', () => {
    const r = parse(`\uFEFF${HEADER}A,"Fonds Société, ""Série A"" – ü",FRA,PA,EUR,FUND,,,\n`);
    expect(r.funds[0].name).toBe('Fonds Société, "Série A" – ü');
    expect(r.funds[0].country).toBe('FRA');
  });

  it('blank lines are ignored and line numbers stay physical (C36)', () => {
    const r = parse(`${HEADER}\nA,,,,,ETF,,,\n\r\n\nB,,,,,ETF,,x,\n`);
    expect(r.dataRows).toBe(2);
    expect(r.problems).toMatchObject([{ reason: 'bad_fund_row', line: 6, code: 'B' }]);
  });

  it('a row with fewer fields than the header’s known columns is a bad row', () => {
    const r = parse(`${HEADER}A,Name,USA\n`);
    expect(r.funds).toEqual([]);
    expect(r.problems).toMatchObject([{ reason: 'bad_fund_row', line: 2 }]);
  });

  it('a row with more fields than the header is a bad_fund_row, not a shifted Type or Isin (C36)', () => {
    const r = parse(
      `${HEADER}AAA,Acme, Inc. Fund,USA,NMFQS,USD,FUND,US0000000000,false,\n` +
        `BBB,"Acme, Inc. Fund",USA,NMFQS,USD,FUND,,false,\n`,
    );
    expect(r.funds.map((f) => [f.code, f.name])).toEqual([['BBB', 'Acme, Inc. Fund']]);
    expect(r.problems).toEqual([
      {
        reason: 'bad_fund_row',
        file: 'funds.csv',
        line: 2,
        detail: "long row: 10 fields, more than the header's 9",
      },
    ]);
  });
});
