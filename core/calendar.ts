/**
 * The US equity market (NYSE) trading calendar (C0): weekdays minus NYSE holidays,
 * with their observance rules, minus NYSE's one-off full-day closures.
 *
 * Exact from 1970. Earlier years are an approximation: they apply the holiday rules
 * below with their start dates (so no MLK Day or Juneteenth, Feb 22 and May 30 for
 * Washington's Birthday and Memorial Day), but none of the retired pre-1970 holidays
 * (Lincoln's Birthday, Election Day every year, Veterans Day, Columbus Day...), no
 * pre-1970 one-off closures (the 1968 paperwork-crisis Wednesdays, JFK's funeral...)
 * and no Saturday sessions. Returns only need 1970 onwards to be right.
 *
 * Queries run in loops over ~10^8 rows, so 1900..2200 is precomputed on first use
 * into flat tables (about 1 MB) and answered by index; outside that range the rules
 * are evaluated directly, which is slow but never throws.
 */
import { type Day, daysInMonth, fromYmd, toYmd, weekday } from './dates.js';

export interface Closure {
  day: Day;
  name: string;
}

/** NYSE's unscheduled full-day closures since 1970 (NYSE closings history). */
const ONE_OFF_CLOSURES: ReadonlyArray<readonly [string, string]> = [
  ['1972-12-28', 'Funeral of President Harry S. Truman'],
  ['1973-01-25', 'Funeral of President Lyndon B. Johnson'],
  ['1977-07-14', 'New York City blackout'],
  ['1985-09-27', 'Hurricane Gloria'],
  ['1994-04-27', 'Funeral of President Richard M. Nixon'],
  ['2001-09-11', 'September 11 attacks'],
  ['2001-09-12', 'September 11 attacks'],
  ['2001-09-13', 'September 11 attacks'],
  ['2001-09-14', 'September 11 attacks'],
  ['2004-06-11', 'Funeral of President Ronald Reagan'],
  ['2007-01-02', 'Funeral of President Gerald R. Ford'],
  ['2012-10-29', 'Hurricane Sandy'],
  ['2012-10-30', 'Hurricane Sandy'],
  ['2018-12-05', 'Funeral of President George H. W. Bush'],
  ['2025-01-09', 'Funeral of President Jimmy Carter'],
];

/** One-off closures by year, built from ONE_OFF_CLOSURES once at load. */
const ONE_OFF_BY_YEAR: Map<number, Closure[]> = (() => {
  const map = new Map<number, Closure[]>();
  for (const [ymd, name] of ONE_OFF_CLOSURES) {
    const y = Number(ymd.slice(0, 4));
    const day = fromYmd(y, Number(ymd.slice(5, 7)), Number(ymd.slice(8, 10)));
    const list = map.get(y) ?? [];
    list.push({ day, name });
    map.set(y, list);
  }
  return map;
})();

/**
 * Until 1968 the NYSE closed on every Election Day; from 1970 only the presidential
 * elections of 1972, 1976 and 1980 closed it.
 */
const ELECTION_DAY_CLOSURE_YEARS: ReadonlySet<number> = new Set([1972, 1976, 1980]);

const SUNDAY = 0;
const MONDAY = 1;
const THURSDAY = 4;
const FRIDAY = 5;
const SATURDAY = 6;

function nthWeekdayOfMonth(y: number, m: number, wd: number, n: number): Day {
  const first = fromYmd(y, m, 1);
  return first + ((wd - weekday(first) + 7) % 7) + 7 * (n - 1);
}

function lastWeekdayOfMonth(y: number, m: number, wd: number): Day {
  const last = fromYmd(y, m, daysInMonth(y, m));
  return last - ((weekday(last) - wd + 7) % 7);
}

/** Easter Sunday, Gregorian computus (Meeus/Jones/Butcher). */
export function easterSunday(y: number): Day {
  const a = y % 19;
  const b = Math.floor(y / 100);
  const c = y % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const mm = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * mm + 114) / 31);
  const day = ((h + l - 7 * mm + 114) % 31) + 1;
  return fromYmd(y, month, day);
}

/**
 * The weekday a fixed-date holiday closes the market, or null. Sunday moves to
 * Monday. Saturday moves to Friday unless that Friday is the last business day of
 * its month (NYSE Rule 7.2: the end of a monthly or yearly accounting period). That
 * exception is why New Year's Day on a Saturday closes nothing, and why Friday
 * 1970-05-29 traded though Memorial Day fell on Saturday May 30.
 */
function observedFixed(y: number, m: number, d: number): Day | null {
  const day = fromYmd(y, m, d);
  const wd = weekday(day);
  if (wd === SUNDAY) return day + 1;
  if (wd !== SATURDAY) return day;
  const friday = toYmd(day - 1);
  if (friday.d + 3 > daysInMonth(friday.y, friday.m)) return null;
  return day - 1;
}

/** Every full-day weekday closure of year `y`, ascending, from the rules. */
function computeClosures(y: number): Closure[] {
  const out: Closure[] = [];
  const fixed = (m: number, d: number, name: string): void => {
    const day = observedFixed(y, m, d);
    if (day !== null) out.push({ day, name });
  };

  fixed(1, 1, "New Year's Day");
  if (y >= 1998) out.push({ day: nthWeekdayOfMonth(y, 1, MONDAY, 3), name: 'Martin Luther King Jr. Day' });
  if (y >= 1971) out.push({ day: nthWeekdayOfMonth(y, 2, MONDAY, 3), name: "Washington's Birthday" });
  else fixed(2, 22, "Washington's Birthday");
  out.push({ day: easterSunday(y) - 2, name: 'Good Friday' });
  if (y >= 1971) out.push({ day: lastWeekdayOfMonth(y, 5, MONDAY), name: 'Memorial Day' });
  else fixed(5, 30, 'Memorial Day');
  if (y >= 2022) fixed(6, 19, 'Juneteenth National Independence Day');
  fixed(7, 4, 'Independence Day');
  out.push({ day: nthWeekdayOfMonth(y, 9, MONDAY, 1), name: 'Labor Day' });
  if (ELECTION_DAY_CLOSURE_YEARS.has(y)) {
    // The Tuesday after the first Monday of November.
    out.push({ day: nthWeekdayOfMonth(y, 11, MONDAY, 1) + 1, name: 'Election Day' });
  }
  out.push({ day: nthWeekdayOfMonth(y, 11, THURSDAY, 4), name: 'Thanksgiving Day' });
  fixed(12, 25, 'Christmas Day');
  const oneOffs = ONE_OFF_BY_YEAR.get(y);
  if (oneOffs) for (const c of oneOffs) out.push({ day: c.day, name: c.name });

  out.sort((p, q) => p.day - q.day);
  // No rule collides today, but a future one-off on a holiday must not count twice.
  return out.filter((c, i) => i === 0 || c.day !== out[i - 1].day);
}

export function marketClosures(year: number): Closure[] {
  return computeClosures(year);
}

// ---- Slow path: outside the table, or while building it. ----

let slowYear = Number.NaN;
let slowClosed: Set<number> = new Set();

function isTradingDaySlow(day: Day): boolean {
  const wd = weekday(day);
  if (wd === SUNDAY || wd === SATURDAY) return false;
  const y = toYmd(day).y;
  if (y !== slowYear) {
    slowClosed = new Set(computeClosures(y).map((c) => c.day));
    slowYear = y;
  }
  return !slowClosed.has(day);
}

function previousTradingDaySlow(day: Day): Day {
  let d = day - 1;
  while (!isTradingDaySlow(d)) d--;
  return d;
}

function nextTradingDaySlow(day: Day): Day {
  let d = day + 1;
  while (!isTradingDaySlow(d)) d++;
  return d;
}

function sameMonth(a: Day, b: Day): boolean {
  const x = toYmd(a);
  const y = toYmd(b);
  return x.y === y.y && x.m === y.m;
}

// ---- Tables ----

const TABLE_FIRST: Day = fromYmd(1900, 1, 1);
const TABLE_LAST: Day = fromYmd(2200, 12, 31);
const TABLE_SIZE = TABLE_LAST - TABLE_FIRST + 1;

const TRADING = 1;
const LAST_OF_MONTH = 2;

interface Tables {
  /** TRADING | LAST_OF_MONTH bits per day. */
  readonly flags: Uint8Array;
  /** The trading day strictly before each day. */
  readonly prev: Int32Array;
  /** The trading day strictly after each day. */
  readonly next: Int32Array;
}

let tables: Tables | null = null;

function buildTables(): Tables {
  const flags = new Uint8Array(TABLE_SIZE);
  for (let i = 0; i < TABLE_SIZE; i++) {
    const wd = weekday(TABLE_FIRST + i);
    if (wd >= MONDAY && wd <= FRIDAY) flags[i] = TRADING;
  }
  const lastYear = toYmd(TABLE_LAST).y;
  for (let y = toYmd(TABLE_FIRST).y; y <= lastYear; y++) {
    for (const c of computeClosures(y)) {
      const i = c.day - TABLE_FIRST;
      if (i >= 0 && i < TABLE_SIZE) flags[i] &= ~TRADING;
    }
  }

  const prev = new Int32Array(TABLE_SIZE);
  let p = previousTradingDaySlow(TABLE_FIRST);
  for (let i = 0; i < TABLE_SIZE; i++) {
    prev[i] = p;
    if (flags[i] & TRADING) p = TABLE_FIRST + i;
  }
  const next = new Int32Array(TABLE_SIZE);
  let n = nextTradingDaySlow(TABLE_LAST);
  for (let i = TABLE_SIZE - 1; i >= 0; i--) {
    next[i] = n;
    if (flags[i] & TRADING) n = TABLE_FIRST + i;
  }

  // A trading day is its month's last when the following trading day is in a later
  // month; walking calendar days tells us where months change without toYmd per row.
  let dayOfMonth = 1;
  let lastTradingInMonth = -1;
  let { y, m } = toYmd(TABLE_FIRST);
  let dim = daysInMonth(y, m);
  for (let i = 0; i < TABLE_SIZE; i++) {
    if (flags[i] & TRADING) lastTradingInMonth = i;
    if (dayOfMonth === dim) {
      if (lastTradingInMonth >= 0) flags[lastTradingInMonth] |= LAST_OF_MONTH;
      lastTradingInMonth = -1;
      dayOfMonth = 1;
      if (++m > 12) {
        m = 1;
        y++;
      }
      dim = daysInMonth(y, m);
    } else {
      dayOfMonth++;
    }
  }
  return { flags, prev, next };
}

function getTables(): Tables {
  if (tables === null) tables = buildTables();
  return tables;
}

// ---- Public API ----

export function isTradingDay(day: Day): boolean {
  const i = day - TABLE_FIRST;
  if (i >= 0 && i < TABLE_SIZE) return (getTables().flags[i] & TRADING) !== 0;
  return isTradingDaySlow(day);
}

/** The last trading day strictly before `day`. */
export function previousTradingDay(day: Day): Day {
  const i = day - TABLE_FIRST;
  if (i >= 0 && i < TABLE_SIZE) return getTables().prev[i];
  return previousTradingDaySlow(day);
}

/** The first trading day strictly after `day`. */
export function nextTradingDay(day: Day): Day {
  const i = day - TABLE_FIRST;
  if (i >= 0 && i < TABLE_SIZE) return getTables().next[i];
  return nextTradingDaySlow(day);
}

export function lastTradingDayOnOrBefore(day: Day): Day {
  const i = day - TABLE_FIRST;
  if (i >= 0 && i < TABLE_SIZE) {
    const t = getTables();
    return t.flags[i] & TRADING ? day : t.prev[i];
  }
  return isTradingDaySlow(day) ? day : previousTradingDaySlow(day);
}

/** True iff `day` is a trading day and the next trading day is in a later month. */
export function isLastTradingDayOfMonth(day: Day): boolean {
  const i = day - TABLE_FIRST;
  if (i >= 0 && i < TABLE_SIZE) return (getTables().flags[i] & LAST_OF_MONTH) !== 0;
  return isTradingDaySlow(day) && !sameMonth(day, nextTradingDaySlow(day));
}

/** `m` is 1..12; other values roll into neighbouring years rather than throwing. */
export function lastTradingDayOfMonth(y: number, m: number): Day {
  const total = y * 12 + (m - 1);
  const ty = Math.floor(total / 12);
  const tm = total - ty * 12 + 1;
  return lastTradingDayOnOrBefore(fromYmd(ty, tm, daysInMonth(ty, tm)));
}

export function lastTradingDayOfYear(y: number): Day {
  return lastTradingDayOnOrBefore(fromYmd(y, 12, 31));
}

/** Trading days in [from, to], ascending; empty when from > to. */
export function tradingDaysInRange(from: Day, to: Day): Day[] {
  const out: Day[] = [];
  for (let d = isTradingDay(from) ? from : nextTradingDay(from); d <= to; d = nextTradingDay(d)) out.push(d);
  return out;
}
