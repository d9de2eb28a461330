import { describe, expect, it } from 'vitest';
import {
  addMonths,
  daysInMonth,
  endOfMonthAfter,
  formatDay,
  fromYmd,
  monthFirstDay,
  parseDay,
  parseDayAt,
  parseDayBytes,
  toYmd,
  weekday,
  writeDayBytes,
} from './dates.js';

describe('day numbers', () => {
  it('1970-01-01 is day 0 and a Thursday', () => {
    expect(fromYmd(1970, 1, 1)).toBe(0);
    expect(weekday(0)).toBe(4);
  });

  it('round-trips every day from 1900 to 2100 and agrees with Date.UTC', () => {
    for (let day = fromYmd(1900, 1, 1); day <= fromYmd(2100, 12, 31); day++) {
      const { y, m, d } = toYmd(day);
      expect(fromYmd(y, m, d)).toBe(day);
      if (day % 997 === 0) expect(Date.UTC(y, m - 1, d) / 86_400_000).toBe(day);
    }
  });

  it('formats and parses YYYY-MM-DD', () => {
    expect(formatDay(fromYmd(2024, 2, 29))).toBe('2024-02-29');
    expect(parseDay('2024-02-29')).toBe(fromYmd(2024, 2, 29));
    expect(formatDay(fromYmd(1, 1, 1))).toBe('0001-01-01');
  });

  it('the first day of every month, tabled or not, is fromYmd(y, m, 1)', () => {
    for (let y = 1700; y <= 2300; y++)
      for (let m = 1; m <= 12; m++) expect(monthFirstDay(y * 12 + m - 1)).toBe(fromYmd(y, m, 1));
  });

  it('writes the same YYYY-MM-DD as bytes and parses it inside a longer string', () => {
    const b = new Uint8Array(12);
    for (let day = fromYmd(1, 1, 1); day <= fromYmd(9999, 12, 31); day += 311) {
      expect(writeDayBytes(b, 1, day)).toBe(11);
      expect(Buffer.from(b.subarray(1, 11)).toString('latin1')).toBe(formatDay(day));
      expect(parseDayAt(`as_of=${formatDay(day)}`, 6)).toBe(day);
    }
    expect(parseDayAt('as_of=2015-02-29', 6)).toBeNull();
  });

  it('rejects impossible and malformed dates rather than rolling them over (C36)', () => {
    for (const bad of [
      '2015-02-29',
      '2023-13-01',
      '2023-00-10',
      '2023-04-31',
      '2023-4-01',
      '2023-04-1',
      '+023-04-01',
      '2023/04/01',
      '',
      '2023-04-011',
    ]) {
      expect(parseDay(bad), bad).toBeNull();
    }
    expect(parseDay('2000-02-29')).not.toBeNull();
    expect(parseDay('1900-02-29')).toBeNull();
  });

  it('parses dates from bytes like from strings', () => {
    const enc = new TextEncoder();
    for (const s of ['2015-02-28', '2015-02-29', '1999-12-31', 'abcd-ef-gh', '2024-02-29']) {
      expect(parseDayBytes(enc.encode(`x,${s},y`), 2)).toBe(parseDay(s));
    }
  });
});

describe('calendar-month arithmetic (C4)', () => {
  it('clamps to the target month length, leap years included', () => {
    expect(formatDay(addMonths(fromYmd(2024, 3, 31), -1))).toBe('2024-02-29');
    expect(formatDay(addMonths(fromYmd(2023, 3, 31), -1))).toBe('2023-02-28');
    expect(formatDay(addMonths(fromYmd(2024, 2, 29), -12))).toBe('2023-02-28');
    expect(formatDay(addMonths(fromYmd(2024, 1, 31), -2))).toBe('2023-11-30');
    expect(formatDay(addMonths(fromYmd(2024, 5, 15), -360))).toBe('1994-05-15');
  });

  it('finds month ends across year boundaries', () => {
    expect(formatDay(endOfMonthAfter(fromYmd(2024, 1, 15), -1))).toBe('2023-12-31');
    expect(formatDay(endOfMonthAfter(fromYmd(2024, 3, 28), -1))).toBe('2024-02-29');
    expect(formatDay(endOfMonthAfter(fromYmd(2024, 3, 28), -12))).toBe('2023-03-31');
  });

  it('knows month lengths', () => {
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2100, 2)).toBe(28);
    expect(daysInMonth(2000, 2)).toBe(29);
    expect(daysInMonth(2023, 11)).toBe(30);
  });
});
