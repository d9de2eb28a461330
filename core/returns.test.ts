import { describe, expect, it } from 'vitest';
import { isLastTradingDayOfMonth } from './calendar.js';
import { type Day, formatDay, parseDay } from './dates.js';
import { formatPercent } from './format.js';
import {
  allCalendarFigures,
  calendarFigures,
  defaultCalendarRow,
  lastIndexOnOrBefore,
  MAX_BASE_GAP_DAYS,
  monthsStart,
  previousQuarterEnd,
  trailingFigures,
} from './returns.js';
import { calendarRowJson, trailingRowJson } from './rows.js';
import { type CalendarFigures, type Series, TRAILING_KEYS, type TrailingKey } from './types.js';

function d(s: string): Day {
  const v = parseDay(s);
  if (v === null) throw new Error(`bad test date ${s}`);
  return v;
}

/** A one-fund series from [date, value] pairs (ascending). */
function series(points: Array<[string, number]>): Series {
  return {
    date: Int32Array.from(points.map((p) => d(p[0]))),
    value: Float64Array.from(points.map((p) => p[1])),
    start: 0,
    length: points.length,
  };
}

/** The same fund embedded at an offset among other data, as in a snapshot. */
function embedded(points: Array<[string, number]>): Series {
  const pad = 3;
  const dates = new Int32Array(points.length + 2 * pad).fill(-1);
  const values = new Float64Array(points.length + 2 * pad).fill(-1);
  points.forEach((p, i) => {
    dates[pad + i] = d(p[0]);
    values[pad + i] = p[1];
  });
  return { date: dates, value: values, start: pad, length: points.length };
}

function fig(s: Series, key: TrailingKey, asOf?: string): string | null {
  const row = trailingFigures(s, asOf === undefined ? undefined : d(asOf));
  if (!row) throw new Error('no row');
  return formatPercent(row.values[TRAILING_KEYS.indexOf(key)]);
}

describe('period starts (C4)', () => {
  it('1M from 2024-03-31 uses the 2024-02-29 close (C4)', () => {
    const s = series([
      ['2024-02-28', 100],
      ['2024-02-29', 110],
      ['2024-03-31', 121],
    ]);
    expect(fig(s, 'return_1m')).toBe('10.0000');
  });

  it('clamps the day to the target month: 2023-03-30 − 1M = 2023-02-28 (C4)', () => {
    expect(formatDay(monthsStart(d('2023-03-30'), 1, false))).toBe('2023-02-28');
    expect(formatDay(monthsStart(d('2024-03-30'), 1, false))).toBe('2024-02-29');
    expect(formatDay(monthsStart(d('2024-02-29'), 12, false))).toBe('2023-02-28');
  });

  it('an anchor on the last trading day of its month starts at the target month-end (C4)', () => {
    // 2024-03-28: Good Friday 2024-03-29 closes the market, so it is March's last trading day.
    const s = series([
      ['2023-03-28', 50],
      ['2023-03-31', 80],
      ['2024-02-28', 90],
      ['2024-02-29', 96],
      ['2024-03-27', 99],
      ['2024-03-28', 100],
    ]);
    expect(fig(s, 'return_1m')).toBe(formatPercent((100 / 96 - 1) * 100));
    expect(fig(s, 'return_1y')).toBe('25.0000');
  });

  it('a mid-month anchor uses calendar months back, not month-ends (C4)', () => {
    const s = series([
      ['2023-03-15', 80],
      ['2023-03-31', 60],
      ['2024-03-15', 100],
    ]);
    expect(fig(s, 'return_1y')).toBe('25.0000');
  });

  it('1W is anchor − 7 days and the base is the last close on or before it (C4)', () => {
    const s = series([
      ['2024-06-28', 100],
      ['2024-07-03', 104],
      ['2024-07-05', 105],
      ['2024-07-10', 110],
    ]);
    // 2024-07-10 − 7 = 2024-07-03.
    expect(fig(s, 'return_1w')).toBe(formatPercent((110 / 104 - 1) * 100));
  });

  it('1D uses the previous trading day across a holiday (C4, C0)', () => {
    // 2024-07-04 is Independence Day: the day before 07-05 is 07-03.
    const s = series([
      ['2024-07-02', 90],
      ['2024-07-03', 100],
      ['2024-07-05', 101],
    ]);
    expect(fig(s, 'return_1d')).toBe('1.0000');
  });

  it('1D on a Monday goes back to Friday (C4)', () => {
    const s = series([
      ['2024-07-05', 100],
      ['2024-07-08', 99],
    ]);
    expect(fig(s, 'return_1d')).toBe('-1.0000');
  });

  it('a fund missing the previous trading day uses its last close within 7 days (C4, C4b)', () => {
    const s = series([
      ['2024-07-01', 100],
      ['2024-07-08', 103],
    ]);
    // Previous trading day of 07-08 is 07-05; base 07-01 is 4 days before it.
    expect(fig(s, 'return_1d')).toBe('3.0000');
  });

  it('a base more than 7 days before its start is a gap: null (C4b)', () => {
    const s = series([
      ['2024-01-02', 100],
      ['2024-02-20', 120],
    ]);
    // 1W start 2024-02-13; base 2024-01-02 is 42 days earlier.
    expect(fig(s, 'return_1w')).toBeNull();
    // 1M start 2024-01-20; base 18 days earlier.
    expect(fig(s, 'return_1m')).toBeNull();
  });

  it('a history shorter than the period gives null (C4)', () => {
    const s = series([
      ['2024-01-02', 100],
      ['2024-03-15', 120],
    ]);
    expect(fig(s, 'return_6m')).toBeNull();
    expect(fig(s, 'return_1y')).toBeNull();
    expect(fig(s, 'return_3y')).toBeNull();
  });
});

describe('to-date periods (C5)', () => {
  it('YTD base is the last close on or before 31 Dec of the previous year (C5)', () => {
    // 2023-12-31 was a Sunday: the base is Friday 2023-12-29.
    const s = series([
      ['2023-12-28', 90],
      ['2023-12-29', 100],
      ['2024-01-02', 101],
      ['2024-05-15', 112.5],
    ]);
    expect(fig(s, 'return_ytd')).toBe('12.5000');
  });

  it('YTD is null for a fund that started this year (C5)', () => {
    const s = series([
      ['2024-01-02', 100],
      ['2024-05-15', 112.5],
    ]);
    expect(fig(s, 'return_ytd')).toBeNull();
  });

  it('MTD and QTD bases are the previous month-end and quarter-end (C5, C8)', () => {
    const s = series([
      ['2024-03-28', 100],
      ['2024-04-30', 110],
      ['2024-05-15', 121],
    ]);
    expect(fig(s, 'return_mtd')).toBe('10.0000');
    expect(fig(s, 'return_qtd')).toBe('21.0000');
    expect(formatDay(previousQuarterEnd(d('2024-05-15')))).toBe('2024-03-31');
    expect(formatDay(previousQuarterEnd(d('2024-01-02')))).toBe('2023-12-31');
    expect(formatDay(previousQuarterEnd(d('2024-12-31')))).toBe('2024-09-30');
  });
});

describe('cumulative and annualized (C6, C7)', () => {
  it('periods of 2 years and more are CAGR over the nominal length (C6)', () => {
    const s = series([
      ['2021-05-14', 100],
      ['2024-05-14', 133.1],
    ]);
    expect(fig(s, 'return_3y')).toBe('10.0000');
    expect(fig(s, 'return_2y')).toBeNull();
  });

  it('1Y is cumulative (C6)', () => {
    const s = series([
      ['2023-05-15', 100],
      ['2024-05-15', 150],
    ]);
    expect(fig(s, 'return_1y')).toBe('50.0000');
  });

  it('25Y and 30Y are annualized extras (C8)', () => {
    const s = series([
      ['1994-05-13', 100],
      ['1999-05-14', 110],
      ['2024-05-14', 200],
    ]);
    expect(fig(s, 'return_30y')).toBe(formatPercent((2 ** (1 / 30) - 1) * 100));
    expect(fig(s, 'return_25y')).toBe(formatPercent(((200 / 110) ** (1 / 25) - 1) * 100));
  });

  it('since inception is cumulative below a 2-year span (C7)', () => {
    // 730 days / 365.25 = 1.9986 years.
    const s = series([
      ['2020-01-02', 100],
      ['2022-01-01', 121],
    ]);
    expect(fig(s, 'return_earliest_available')).toBe('21.0000');
  });

  it('since inception is annualized over the span from 2 years (C7)', () => {
    const s = series([
      ['2020-01-02', 100],
      ['2022-01-03', 121],
    ]);
    const span = (d('2022-01-03') - d('2020-01-02')) / 365.25;
    expect(span).toBeGreaterThanOrEqual(2);
    expect(fig(s, 'return_earliest_available')).toBe(formatPercent((1.21 ** (1 / span) - 1) * 100));
  });

  it('a change too large for a double is null, its annualized form finite (C1, C2)', () => {
    // Both prices are valid (finite, > 0); their ratio, 1e400, is not a double.
    const s = series([
      ['2000-01-03', 1e-200],
      ['2024-01-02', 1e200],
    ]);
    expect(fig(s, 'return_20y')).toBeNull();
    const span = (d('2024-01-02') - d('2000-01-03')) / 365.25;
    const inception = Number(fig(s, 'return_earliest_available'));
    expect(inception / ((10 ** (400 / span) - 1) * 100)).toBeCloseTo(1, 9);
    const cal = calendarFigures(s, 2024);
    expect(cal?.totalReturn).toBeNaN();
  });

  it('since inception is null when the anchor is the first observation (C7)', () => {
    const s = series([['2024-01-02', 100]]);
    expect(fig(s, 'return_earliest_available')).toBeNull();
    expect(fig(s, 'return_1d')).toBeNull();
  });
});

describe('anchor (C3)', () => {
  const s = embedded([
    ['2024-05-10', 100],
    ['2024-05-13', 101],
    ['2024-05-15', 102],
  ]);

  it('anchors on the last observation on or before the requested date (C3)', () => {
    expect(formatDay(trailingFigures(s, d('2024-05-14'))!.asOf)).toBe('2024-05-13');
    expect(formatDay(trailingFigures(s, d('2024-05-13'))!.asOf)).toBe('2024-05-13');
  });

  it('a date after the last observation anchors on the last (C3)', () => {
    expect(formatDay(trailingFigures(s, d('2030-01-01'))!.asOf)).toBe('2024-05-15');
  });

  it('no date means the last observation (C3)', () => {
    expect(formatDay(trailingFigures(s)!.asOf)).toBe('2024-05-15');
  });

  it('a date before the first observation has no row (C3)', () => {
    expect(trailingFigures(s, d('2024-05-09'))).toBeNull();
  });

  it('binary search stays inside the fund slice', () => {
    expect(lastIndexOnOrBefore(s, d('2024-05-09'))).toBe(-1);
    expect(lastIndexOnOrBefore(s, d('2024-05-12'))).toBe(3);
    expect(lastIndexOnOrBefore(s, d('2099-01-01'))).toBe(5);
  });
});

describe('re-basing changes nothing (C2)', () => {
  it('a constant rescale of the series gives the same served row', () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const points: Array<[string, number]> = [];
    let v = 50;
    for (let day = d('2010-01-04'); day <= d('2024-05-15'); day++) {
      if ((day + 4) % 7 === 0 || (day + 4) % 7 === 6) continue;
      v *= 1 + (rnd() - 0.5) * 0.02;
      points.push([formatDay(day), v]);
    }
    const a = series(points);
    // Scaling by a power of two is exact in binary, so every ratio is bit-identical.
    const b = series(points.map(([t, x]) => [t, x * 1024]));
    for (const asOf of ['2024-05-15', '2019-12-31', '2015-06-30']) {
      expect(trailingRowJson('X', trailingFigures(b, d(asOf))!)).toBe(
        trailingRowJson('X', trailingFigures(a, d(asOf))!),
      );
    }
  });
});

function defaultOf(rows: CalendarFigures[]): number {
  const partial = rows.map((r) => (r.isPartial ? 1 : 0));
  const total = rows.map((r) => r.totalReturn);
  return defaultCalendarRow(partial, total, 0, rows.length);
}

describe('calendar years (C9–C12)', () => {
  const s = series([
    ['2021-06-15', 100], // inception mid-2021
    ['2021-12-31', 110],
    ['2022-06-30', 99],
    ['2022-12-30', 88], // 2022-12-30 is the last trading day of 2022
    ['2023-12-29', 110], // last trading day of 2023
    ['2024-05-15', 121],
  ]);

  it('the inception year is measured from the first observation and is partial (C10, C11)', () => {
    const r = calendarFigures(s, 2021)!;
    expect(formatPercent(r.totalReturn)).toBe('10.0000');
    expect(formatDay(r.startDate)).toBe('2021-06-15');
    expect(formatDay(r.endDate)).toBe('2021-12-31');
    expect(r.isPartial).toBe(true);
  });

  it('a full year uses the previous year-end base and is complete (C10, C11)', () => {
    const r = calendarFigures(s, 2022)!;
    expect(formatPercent(r.totalReturn)).toBe('-20.0000');
    expect(formatDay(r.startDate)).toBe('2021-12-31');
    expect(formatDay(r.endDate)).toBe('2022-12-30');
    expect(r.isPartial).toBe(false);
  });

  it('a year still running is partial (C11)', () => {
    const r = calendarFigures(s, 2024)!;
    expect(formatPercent(r.totalReturn)).toBe('10.0000');
    expect(r.isPartial).toBe(true);
  });

  it('a year with no observation has no row (C10)', () => {
    expect(calendarFigures(s, 2020)).toBeNull();
    expect(calendarFigures(s, 2025)).toBeNull();
  });

  it('a single observation gives a null total_return (C10)', () => {
    const one = series([['2024-05-15', 100]]);
    const r = calendarFigures(one, 2024)!;
    expect(r.totalReturn).toBeNaN();
    expect(calendarRowJson('ONE', r)).toBe(
      '{"code":"ONE","market":"US","year":2024,"total_return":null,"start_date":"2024-05-15","end_date":"2024-05-15","is_partial":true}',
    );
  });

  it('a fund that stopped during a year is partial (C11)', () => {
    const stopped = series([
      ['2022-12-30', 100],
      ['2023-06-30', 105],
    ]);
    expect(calendarFigures(stopped, 2023)!.isPartial).toBe(true);
  });

  it('a base more than 7 days before the previous year-end is a gap (C4b, C10)', () => {
    const gap = series([
      ['2022-11-30', 100],
      ['2023-12-29', 105],
    ]);
    const r = calendarFigures(gap, 2023)!;
    expect(r.totalReturn).toBeNaN();
    expect(formatDay(r.startDate)).toBe('2022-11-30');
  });

  it('allCalendarFigures gives one row per year with data, ascending (C10)', () => {
    const rows = allCalendarFigures(s);
    expect(rows.map((r) => r.year)).toEqual([2021, 2022, 2023, 2024]);
    for (const r of rows) expect(r).toEqual(calendarFigures(s, r.year));
  });

  it('the default year is the latest complete row with a figure (C12)', () => {
    const rows = allCalendarFigures(s);
    expect(rows[defaultOf(rows)].year).toBe(2023);
  });

  it('a fund with no complete row defaults to its latest row (C12)', () => {
    const young = series([
      ['2024-02-01', 100],
      ['2024-05-15', 101],
    ]);
    const rows = allCalendarFigures(young);
    expect(rows[defaultOf(rows)].year).toBe(2024);
  });
});

describe('served row shape (C1, C8)', () => {
  it('every key is present, in SPEC order, with extra_returns holding the four C8 keys', () => {
    const s = series([
      ['2024-05-14', 100],
      ['2024-05-15', 100.5],
    ]);
    const row = JSON.parse(trailingRowJson('ABC', trailingFigures(s)!));
    expect(Object.keys(row)).toEqual([
      'code',
      'market',
      'as_of_date',
      ...TRAILING_KEYS.slice(0, 16),
      'extra_returns',
    ]);
    expect(Object.keys(row.extra_returns)).toEqual(['return_mtd', 'return_qtd', 'return_25y', 'return_30y']);
    expect(row.return_1d).toBe('0.5000');
    expect(row.return_1y).toBeNull();
    expect(row.as_of_date).toBe('2024-05-15');
  });
});

describe('trailing figures against a plain reference (C3–C8)', () => {
  it('agree with a naive linear-scan computation on random series with gaps and random dates', () => {
    // The reference finds observations by scanning, not by the searches under test.
    const naiveLast = (s: Series, day: Day) => {
      let r = -1;
      for (let i = s.start; i < s.start + s.length && s.date[i] <= day; i++) r = i;
      return r;
    };
    const naiveBase = (s: Series, start: Day) => {
      const b = naiveLast(s, start);
      return b < 0 || start - s.date[b] > MAX_BASE_GAP_DAYS ? -1 : b;
    };
    let seed = 99;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const starts: Record<string, (anchor: Day, monthEnd: boolean) => Day> = {};
    const months: Record<string, number> = {
      return_1m: 1,
      return_3m: 3,
      return_6m: 6,
      return_1y: 12,
      return_2y: 24,
      return_3y: 36,
      return_4y: 48,
      return_5y: 60,
      return_7y: 84,
      return_10y: 120,
      return_15y: 180,
      return_20y: 240,
      return_25y: 300,
      return_30y: 360,
    };
    for (const [k, n] of Object.entries(months)) starts[k] = (a, me) => monthsStart(a, n, me);
    starts.return_1w = (a) => a - 7;
    starts.return_ytd = (a) => d(`${Number(formatDay(a).slice(0, 4)) - 1}-12-31`);
    starts.return_mtd = (a) => d(`${formatDay(a).slice(0, 7)}-01`) - 1;
    starts.return_qtd = (a) => previousQuarterEnd(a);
    for (let f = 0; f < 40; f++) {
      const points: Array<[string, number]> = [];
      let v = 10 + rnd() * 100;
      const from = d('1990-01-01') + Math.floor(rnd() * 9000);
      const to = from + 200 + Math.floor(rnd() * 9000);
      for (let day = from; day <= to; day++) {
        const w = (day + 4) % 7;
        if (w === 0 || w === 6) continue;
        // Occasional gaps, sometimes long ones (C4b).
        if (rnd() < 0.02) day += Math.floor(rnd() * 20);
        v *= 1 + (rnd() - 0.5) * 0.03;
        points.push([formatDay(day), v]);
      }
      const s = embedded(points);
      for (let q = 0; q < 30; q++) {
        const asOf = from + Math.floor(rnd() * (to - from + 400));
        const row = trailingFigures(s, asOf);
        if (!row) continue;
        const a = naiveLast(s, asOf);
        const anchor = s.date[a];
        const me = isLastTradingDayOfMonth(anchor);
        for (const [key, start] of Object.entries(starts)) {
          const b = naiveBase(s, start(anchor, me));
          const nYears = (months[key] ?? 0) / 12;
          const expected =
            b < 0
              ? Number.NaN
              : nYears >= 2
                ? ((s.value[a] / s.value[b]) ** (1 / nYears) - 1) * 100
                : (s.value[a] / s.value[b] - 1) * 100;
          const got = row.values[TRAILING_KEYS.indexOf(key as TrailingKey)];
          expect(formatPercent(got), `${key} at ${formatDay(asOf)}`).toBe(formatPercent(expected));
        }
      }
    }
  });
});
