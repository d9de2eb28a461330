import { describe, expect, it } from 'vitest';
import {
  easterSunday,
  isLastTradingDayOfMonth,
  isTradingDay,
  lastTradingDayOfMonth,
  lastTradingDayOfYear,
  lastTradingDayOnOrBefore,
  marketClosures,
  nextTradingDay,
  previousTradingDay,
  tradingDaysInRange,
} from './calendar.js';
import { type Day, formatDay, fromYmd, parseDay, weekday } from './dates.js';

function d(s: string): Day {
  const day = parseDay(s);
  if (day === null) throw new Error(`bad date ${s}`);
  return day;
}

/**
 * NYSE full-day closures typed in by hand from NYSE's published holiday schedules and
 * closings history, independent of the rules in calendar.ts (C0).
 */
const KNOWN_CLOSURES: Record<number, string[]> = {
  1970: ['1970-01-01', '1970-02-23', '1970-03-27', '1970-07-03', '1970-09-07', '1970-11-26', '1970-12-25'],
  1972: [
    '1972-02-21',
    '1972-03-31',
    '1972-05-29',
    '1972-07-04',
    '1972-09-04',
    '1972-11-07',
    '1972-11-23',
    '1972-12-25',
    '1972-12-28',
  ],
  1973: [
    '1973-01-01',
    '1973-01-25',
    '1973-02-19',
    '1973-04-20',
    '1973-05-28',
    '1973-07-04',
    '1973-09-03',
    '1973-11-22',
    '1973-12-25',
  ],
  1976: [
    '1976-01-01',
    '1976-02-16',
    '1976-04-16',
    '1976-05-31',
    '1976-07-05',
    '1976-09-06',
    '1976-11-02',
    '1976-11-25',
    '1976-12-24',
  ],
  1977: [
    '1977-02-21',
    '1977-04-08',
    '1977-05-30',
    '1977-07-04',
    '1977-07-14',
    '1977-09-05',
    '1977-11-24',
    '1977-12-26',
  ],
  1980: [
    '1980-01-01',
    '1980-02-18',
    '1980-04-04',
    '1980-05-26',
    '1980-07-04',
    '1980-09-01',
    '1980-11-04',
    '1980-11-27',
    '1980-12-25',
  ],
  1985: [
    '1985-01-01',
    '1985-02-18',
    '1985-04-05',
    '1985-05-27',
    '1985-07-04',
    '1985-09-02',
    '1985-09-27',
    '1985-11-28',
    '1985-12-25',
  ],
  1994: [
    '1994-02-21',
    '1994-04-01',
    '1994-04-27',
    '1994-05-30',
    '1994-07-04',
    '1994-09-05',
    '1994-11-24',
    '1994-12-26',
  ],
  1998: [
    '1998-01-01',
    '1998-01-19',
    '1998-02-16',
    '1998-04-10',
    '1998-05-25',
    '1998-07-03',
    '1998-09-07',
    '1998-11-26',
    '1998-12-25',
  ],
  2000: [
    '2000-01-17',
    '2000-02-21',
    '2000-04-21',
    '2000-05-29',
    '2000-07-04',
    '2000-09-04',
    '2000-11-23',
    '2000-12-25',
  ],
  2001: [
    '2001-01-01',
    '2001-01-15',
    '2001-02-19',
    '2001-04-13',
    '2001-05-28',
    '2001-07-04',
    '2001-09-03',
    '2001-09-11',
    '2001-09-12',
    '2001-09-13',
    '2001-09-14',
    '2001-11-22',
    '2001-12-25',
  ],
  2002: [
    '2002-01-01',
    '2002-01-21',
    '2002-02-18',
    '2002-03-29',
    '2002-05-27',
    '2002-07-04',
    '2002-09-02',
    '2002-11-28',
    '2002-12-25',
  ],
  2003: [
    '2003-01-01',
    '2003-01-20',
    '2003-02-17',
    '2003-04-18',
    '2003-05-26',
    '2003-07-04',
    '2003-09-01',
    '2003-11-27',
    '2003-12-25',
  ],
  2004: [
    '2004-01-01',
    '2004-01-19',
    '2004-02-16',
    '2004-04-09',
    '2004-05-31',
    '2004-06-11',
    '2004-07-05',
    '2004-09-06',
    '2004-11-25',
    '2004-12-24',
  ],
  2005: [
    '2005-01-17',
    '2005-02-21',
    '2005-03-25',
    '2005-05-30',
    '2005-07-04',
    '2005-09-05',
    '2005-11-24',
    '2005-12-26',
  ],
  2006: [
    '2006-01-02',
    '2006-01-16',
    '2006-02-20',
    '2006-04-14',
    '2006-05-29',
    '2006-07-04',
    '2006-09-04',
    '2006-11-23',
    '2006-12-25',
  ],
  2007: [
    '2007-01-01',
    '2007-01-02',
    '2007-01-15',
    '2007-02-19',
    '2007-04-06',
    '2007-05-28',
    '2007-07-04',
    '2007-09-03',
    '2007-11-22',
    '2007-12-25',
  ],
  2008: [
    '2008-01-01',
    '2008-01-21',
    '2008-02-18',
    '2008-03-21',
    '2008-05-26',
    '2008-07-04',
    '2008-09-01',
    '2008-11-27',
    '2008-12-25',
  ],
  2009: [
    '2009-01-01',
    '2009-01-19',
    '2009-02-16',
    '2009-04-10',
    '2009-05-25',
    '2009-07-03',
    '2009-09-07',
    '2009-11-26',
    '2009-12-25',
  ],
  2010: [
    '2010-01-01',
    '2010-01-18',
    '2010-02-15',
    '2010-04-02',
    '2010-05-31',
    '2010-07-05',
    '2010-09-06',
    '2010-11-25',
    '2010-12-24',
  ],
  2011: [
    '2011-01-17',
    '2011-02-21',
    '2011-04-22',
    '2011-05-30',
    '2011-07-04',
    '2011-09-05',
    '2011-11-24',
    '2011-12-26',
  ],
  2012: [
    '2012-01-02',
    '2012-01-16',
    '2012-02-20',
    '2012-04-06',
    '2012-05-28',
    '2012-07-04',
    '2012-09-03',
    '2012-10-29',
    '2012-10-30',
    '2012-11-22',
    '2012-12-25',
  ],
  2013: [
    '2013-01-01',
    '2013-01-21',
    '2013-02-18',
    '2013-03-29',
    '2013-05-27',
    '2013-07-04',
    '2013-09-02',
    '2013-11-28',
    '2013-12-25',
  ],
  2014: [
    '2014-01-01',
    '2014-01-20',
    '2014-02-17',
    '2014-04-18',
    '2014-05-26',
    '2014-07-04',
    '2014-09-01',
    '2014-11-27',
    '2014-12-25',
  ],
  2015: [
    '2015-01-01',
    '2015-01-19',
    '2015-02-16',
    '2015-04-03',
    '2015-05-25',
    '2015-07-03',
    '2015-09-07',
    '2015-11-26',
    '2015-12-25',
  ],
  2016: [
    '2016-01-01',
    '2016-01-18',
    '2016-02-15',
    '2016-03-25',
    '2016-05-30',
    '2016-07-04',
    '2016-09-05',
    '2016-11-24',
    '2016-12-26',
  ],
  2017: [
    '2017-01-02',
    '2017-01-16',
    '2017-02-20',
    '2017-04-14',
    '2017-05-29',
    '2017-07-04',
    '2017-09-04',
    '2017-11-23',
    '2017-12-25',
  ],
  2018: [
    '2018-01-01',
    '2018-01-15',
    '2018-02-19',
    '2018-03-30',
    '2018-05-28',
    '2018-07-04',
    '2018-09-03',
    '2018-11-22',
    '2018-12-05',
    '2018-12-25',
  ],
  2019: [
    '2019-01-01',
    '2019-01-21',
    '2019-02-18',
    '2019-04-19',
    '2019-05-27',
    '2019-07-04',
    '2019-09-02',
    '2019-11-28',
    '2019-12-25',
  ],
  2020: [
    '2020-01-01',
    '2020-01-20',
    '2020-02-17',
    '2020-04-10',
    '2020-05-25',
    '2020-07-03',
    '2020-09-07',
    '2020-11-26',
    '2020-12-25',
  ],
  2021: [
    '2021-01-01',
    '2021-01-18',
    '2021-02-15',
    '2021-04-02',
    '2021-05-31',
    '2021-07-05',
    '2021-09-06',
    '2021-11-25',
    '2021-12-24',
  ],
  2022: [
    '2022-01-17',
    '2022-02-21',
    '2022-04-15',
    '2022-05-30',
    '2022-06-20',
    '2022-07-04',
    '2022-09-05',
    '2022-11-24',
    '2022-12-26',
  ],
  2023: [
    '2023-01-02',
    '2023-01-16',
    '2023-02-20',
    '2023-04-07',
    '2023-05-29',
    '2023-06-19',
    '2023-07-04',
    '2023-09-04',
    '2023-11-23',
    '2023-12-25',
  ],
  2024: [
    '2024-01-01',
    '2024-01-15',
    '2024-02-19',
    '2024-03-29',
    '2024-05-27',
    '2024-06-19',
    '2024-07-04',
    '2024-09-02',
    '2024-11-28',
    '2024-12-25',
  ],
  2025: [
    '2025-01-01',
    '2025-01-09',
    '2025-01-20',
    '2025-02-17',
    '2025-04-18',
    '2025-05-26',
    '2025-06-19',
    '2025-07-04',
    '2025-09-01',
    '2025-11-27',
    '2025-12-25',
  ],
  2026: [
    '2026-01-01',
    '2026-01-19',
    '2026-02-16',
    '2026-04-03',
    '2026-05-25',
    '2026-06-19',
    '2026-07-03',
    '2026-09-07',
    '2026-11-26',
    '2026-12-25',
  ],
  2027: [
    '2027-01-01',
    '2027-01-18',
    '2027-02-15',
    '2027-03-26',
    '2027-05-31',
    '2027-06-18',
    '2027-07-05',
    '2027-09-06',
    '2027-11-25',
    '2027-12-24',
  ],
};

describe('marketClosures against an independent list (C0)', () => {
  for (const [year, expected] of Object.entries(KNOWN_CLOSURES)) {
    it(`${year} closures match NYSE's published schedule exactly (C0)`, () => {
      expect(marketClosures(Number(year)).map((c) => formatDay(c.day))).toEqual(expected);
    });
  }

  it('every closure is a weekday, ascending, named, and not a trading day (C0)', () => {
    for (let y = 1900; y <= 2200; y++) {
      const closures = marketClosures(y);
      for (let i = 0; i < closures.length; i++) {
        const c = closures[i];
        expect(weekday(c.day)).toBeGreaterThanOrEqual(1);
        expect(weekday(c.day)).toBeLessThanOrEqual(5);
        expect(c.name.length).toBeGreaterThan(0);
        expect(isTradingDay(c.day)).toBe(false);
        if (i > 0) expect(c.day).toBeGreaterThan(closures[i - 1].day);
      }
    }
  });

  it('names the one-off closures (C0)', () => {
    expect(marketClosures(2025).find((c) => c.day === d('2025-01-09'))?.name).toMatch(/Carter/);
    expect(marketClosures(2012).find((c) => c.day === d('2012-10-29'))?.name).toMatch(/Sandy/);
  });
});

describe('trading days per year (C0, C11)', () => {
  const counts: Record<number, number> = { 2019: 252, 2020: 253, 2021: 252, 2022: 251, 2023: 250, 2024: 252 };
  for (const [year, n] of Object.entries(counts)) {
    it(`${year} has ${n} trading days (C0)`, () => {
      const y = Number(year);
      expect(tradingDaysInRange(fromYmd(y, 1, 1), fromYmd(y, 12, 31))).toHaveLength(n);
    });
  }
});

describe('specific closures and open days (C0)', () => {
  it('Juneteenth 2021 (Sat 06-19) was not a holiday yet: Friday 2021-06-18 traded (C0)', () => {
    expect(isTradingDay(d('2021-06-18'))).toBe(true);
  });

  it('Juneteenth 2022 fell on Sunday: closed Monday 2022-06-20 (C0)', () => {
    expect(isTradingDay(d('2022-06-20'))).toBe(false);
  });

  it('New Year 2022 on Saturday: no observed closure on Friday 2021-12-31 (C0)', () => {
    expect(isTradingDay(d('2021-12-31'))).toBe(true);
    expect(isTradingDay(d('2022-01-03'))).toBe(true);
  });

  it('Hurricane Sandy closed 2012-10-29 and 2012-10-30; 2012-10-31 traded (C0)', () => {
    expect(isTradingDay(d('2012-10-29'))).toBe(false);
    expect(isTradingDay(d('2012-10-30'))).toBe(false);
    expect(isTradingDay(d('2012-10-31'))).toBe(true);
  });

  it('the market was closed 2001-09-11 through 2001-09-14 and reopened 2001-09-17 (C0)', () => {
    for (const s of ['2001-09-11', '2001-09-12', '2001-09-13', '2001-09-14'])
      expect(isTradingDay(d(s))).toBe(false);
    expect(isTradingDay(d('2001-09-10'))).toBe(true);
    expect(nextTradingDay(d('2001-09-10'))).toBe(d('2001-09-17'));
  });

  it('Memorial Day on Saturday 1970-05-30 did not close month-end Friday 1970-05-29 (C0)', () => {
    expect(isTradingDay(d('1970-05-29'))).toBe(true);
  });

  it('Election Day closed the market only in 1972, 1976 and 1980 after 1970 (C0)', () => {
    expect(isTradingDay(d('1972-11-07'))).toBe(false);
    expect(isTradingDay(d('1980-11-04'))).toBe(false);
    expect(isTradingDay(d('1984-11-06'))).toBe(true);
    expect(isTradingDay(d('1974-11-05'))).toBe(true);
  });

  it('MLK Day is a holiday from 1998 only (C0)', () => {
    expect(isTradingDay(d('1997-01-20'))).toBe(true);
    expect(isTradingDay(d('1998-01-19'))).toBe(false);
  });

  it('weekends are never trading days (C0)', () => {
    expect(isTradingDay(d('2024-03-30'))).toBe(false);
    expect(isTradingDay(d('2024-03-31'))).toBe(false);
  });
});

describe('Good Friday (C0, C4)', () => {
  const goodFridays = [
    '1970-03-27',
    '1981-04-17',
    '1999-04-02',
    '2000-04-21',
    '2008-03-21',
    '2011-04-22',
    '2019-04-19',
    '2024-03-29',
    '2025-04-18',
    '2038-04-23',
  ];
  for (const s of goodFridays) {
    it(`${s} is Good Friday and closed (C0)`, () => {
      expect(easterSunday(Number(s.slice(0, 4))) - 2).toBe(d(s));
      expect(isTradingDay(d(s))).toBe(false);
    });
  }
});

describe('previous and next trading day (C0, C4 1D)', () => {
  it('previous of a Monday is the Friday before (C4)', () => {
    expect(previousTradingDay(d('2024-04-08'))).toBe(d('2024-04-05'));
  });

  it('previous of Monday after Good Friday skips to Thursday 2024-03-28 (C4)', () => {
    expect(previousTradingDay(d('2024-04-01'))).toBe(d('2024-03-28'));
  });

  it('next of Thursday 2024-03-28 skips Good Friday and the weekend (C0)', () => {
    expect(nextTradingDay(d('2024-03-28'))).toBe(d('2024-04-01'));
  });

  it('next and previous are strict even on trading days (C0)', () => {
    expect(nextTradingDay(d('2024-03-27'))).toBe(d('2024-03-28'));
    expect(previousTradingDay(d('2024-03-28'))).toBe(d('2024-03-27'));
  });

  it('previous of 2025-01-02 skips New Year (C4)', () => {
    expect(previousTradingDay(d('2025-01-02'))).toBe(d('2024-12-31'));
  });

  it('around Carter funeral 2025-01-09 (C0)', () => {
    expect(nextTradingDay(d('2025-01-08'))).toBe(d('2025-01-10'));
    expect(previousTradingDay(d('2025-01-10'))).toBe(d('2025-01-08'));
  });

  it('lastTradingDayOnOrBefore snaps weekends and holidays back (C0, C3)', () => {
    expect(lastTradingDayOnOrBefore(d('2024-03-31'))).toBe(d('2024-03-28'));
    expect(lastTradingDayOnOrBefore(d('2024-03-28'))).toBe(d('2024-03-28'));
    expect(lastTradingDayOnOrBefore(d('2022-06-20'))).toBe(d('2022-06-17'));
  });

  it('agree with a day-by-day scan everywhere in 1960..2040 (C0)', () => {
    const from = d('1960-01-01');
    const to = d('2040-12-31');
    let lastTrading = previousTradingDay(from);
    for (let day = from; day <= to; day++) {
      expect(previousTradingDay(day)).toBe(lastTrading);
      if (isTradingDay(day)) lastTrading = day;
      expect(lastTradingDayOnOrBefore(day)).toBe(lastTrading);
    }
  });
});

describe('month and year ends (C4, C11)', () => {
  it('2024-03-28 is the last trading day of March 2024 (Good Friday 2024-03-29) (C4)', () => {
    expect(lastTradingDayOfMonth(2024, 3)).toBe(d('2024-03-28'));
    expect(isLastTradingDayOfMonth(d('2024-03-28'))).toBe(true);
  });

  it('a calendar month-end that trades is its month last trading day (C4)', () => {
    expect(lastTradingDayOfMonth(2024, 2)).toBe(d('2024-02-29'));
    expect(isLastTradingDayOfMonth(d('2024-02-29'))).toBe(true);
    expect(isLastTradingDayOfMonth(d('2024-02-28'))).toBe(false);
  });

  it('a non-trading month-end is never the last trading day (C4)', () => {
    expect(isLastTradingDayOfMonth(d('2024-03-29'))).toBe(false);
    expect(isLastTradingDayOfMonth(d('2024-03-31'))).toBe(false);
    expect(isLastTradingDayOfMonth(d('2023-12-31'))).toBe(false);
  });

  it('month ending on a weekend: Friday 2024-08-30 is the last trading day of August (C4)', () => {
    expect(lastTradingDayOfMonth(2024, 8)).toBe(d('2024-08-30'));
    expect(isLastTradingDayOfMonth(d('2024-08-30'))).toBe(true);
  });

  it('isLastTradingDayOfMonth matches its definition over 1960..2040 (C4)', () => {
    for (let day = d('1960-01-01'); day <= d('2040-12-31'); day++) {
      const expected =
        isTradingDay(day) && formatDay(nextTradingDay(day)).slice(0, 7) !== formatDay(day).slice(0, 7);
      if (isLastTradingDayOfMonth(day) !== expected) expect(formatDay(day)).toBe('consistent');
    }
  });

  it('last trading day of the year (C11)', () => {
    expect(lastTradingDayOfYear(2021)).toBe(d('2021-12-31'));
    expect(lastTradingDayOfYear(2022)).toBe(d('2022-12-30'));
    expect(lastTradingDayOfYear(2016)).toBe(d('2016-12-30'));
    expect(lastTradingDayOfYear(2023)).toBe(d('2023-12-29'));
    expect(lastTradingDayOfYear(2024)).toBe(d('2024-12-31'));
    expect(lastTradingDayOfYear(2010)).toBe(d('2010-12-31'));
  });
});

describe('tradingDaysInRange (C0)', () => {
  it('is inclusive on both ends and skips closures', () => {
    expect(tradingDaysInRange(d('2024-03-27'), d('2024-04-02')).map(formatDay)).toEqual([
      '2024-03-27',
      '2024-03-28',
      '2024-04-01',
      '2024-04-02',
    ]);
  });

  it('starts at the next trading day when `from` is closed, empty when reversed', () => {
    expect(tradingDaysInRange(d('2024-03-29'), d('2024-04-01')).map(formatDay)).toEqual(['2024-04-01']);
    expect(tradingDaysInRange(d('2024-04-02'), d('2024-04-01'))).toEqual([]);
    expect(tradingDaysInRange(d('2024-03-30'), d('2024-03-31'))).toEqual([]);
  });
});

describe('outside the precomputed table (C0)', () => {
  it('answers by the same rules before 1900 and after 2200 without throwing', () => {
    expect(isTradingDay(d('1850-12-25'))).toBe(false);
    expect(isTradingDay(d('2300-12-25'))).toBe(false);
    expect(previousTradingDay(d('1900-01-01'))).toBe(d('1899-12-29'));
    expect(nextTradingDay(d('2200-12-31'))).toBe(d('2201-01-02'));
    expect(lastTradingDayOfYear(2500)).toBe(d('2500-12-31'));
    expect(isLastTradingDayOfMonth(d('2500-12-31'))).toBe(true);
    expect(isLastTradingDayOfMonth(d('1800-01-15'))).toBe(false);
  });

  it('handles extreme finite days', () => {
    for (const day of [-2_147_483_648, 2_147_483_647, -1e9, 1e9]) {
      expect(typeof isTradingDay(day)).toBe('boolean');
      expect(nextTradingDay(day)).toBeGreaterThan(day);
      expect(previousTradingDay(day)).toBeLessThan(day);
    }
  });
});
