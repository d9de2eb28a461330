/**
 * Calendar dates as int32 days since 1970-01-01 (the Arrow Date32 unit), with
 * proleptic-Gregorian conversions that never touch `Date` (slow, and it accepts
 * impossible dates such as 2015-02-29 by rolling them over: C36).
 *
 * Conversions follow Howard Hinnant's `days_from_civil` / `civil_from_days`.
 */
import { now } from './clock.js';

/** A day number: whole days since 1970-01-01 (negative before). */
export type Day = number;

export interface Ymd {
  readonly y: number;
  /** 1..12 */
  readonly m: number;
  /** 1..31 */
  readonly d: number;
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : MONTH_DAYS[m - 1];
}

/** Day number of a civil date. The caller guarantees the date is valid. */
export function fromYmd(y: number, m: number, d: number): Day {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Months whose first day is tabled: 1800-01 .. 2199-12, plus the month after. */
const MONTH_TABLE_FIRST = 1800 * 12;
const monthFirstDays = new Int32Array(400 * 12 + 1);
for (let k = 0; k < monthFirstDays.length; k++) {
  const total = MONTH_TABLE_FIRST + k;
  const y = Math.floor(total / 12);
  monthFirstDays[k] = fromYmd(y, total - y * 12 + 1, 1);
}

/**
 * The first day of month `total` = y·12 + (m − 1): fromYmd(y, m, 1) from a table,
 * with no divisions (an as_of row needs about twenty of these).
 */
export function monthFirstDay(total: number): Day {
  const k = total - MONTH_TABLE_FIRST;
  if (k >= 0 && k < monthFirstDays.length) return monthFirstDays[k];
  const y = Math.floor(total / 12);
  return fromYmd(y, total - y * 12 + 1, 1);
}

export function toYmd(day: Day): Ymd {
  const z = day + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

/** 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
export function weekday(day: Day): number {
  const w = (day + 4) % 7;
  return w < 0 ? w + 7 : w;
}

/**
 * `n` calendar months after `day` (negative: before), the day of month clamped to
 * the target month's length: 2024-03-31 − 1 month = 2024-02-29 (C4).
 */
export function addMonths(day: Day, n: number): Day {
  const { y, m, d } = toYmd(day);
  const total = y * 12 + (m - 1) + n;
  const ty = Math.floor(total / 12);
  const tm = total - ty * 12 + 1;
  return fromYmd(ty, tm, Math.min(d, daysInMonth(ty, tm)));
}

/** The last calendar day of the month `n` months after `day`'s month. */
export function endOfMonthAfter(day: Day, n: number): Day {
  const { y, m } = toYmd(day);
  const total = y * 12 + (m - 1) + n;
  const ty = Math.floor(total / 12);
  const tm = total - ty * 12 + 1;
  return fromYmd(ty, tm, daysInMonth(ty, tm));
}

export function endOfYear(y: number): Day {
  return fromYmd(y, 12, 31);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** YYYY-MM-DD for years 0..9999 (the only ones a valid day here can have). */
export function formatDay(day: Day): string {
  const { y, m, d } = toYmd(day);
  const ys = y < 1000 ? String(y).padStart(4, '0') : String(y);
  return `${ys}-${pad2(m)}-${pad2(d)}`;
}

/** `formatDay(day)` written as 10 ASCII bytes at `b[at]` (years 0..9999); returns the end. */
export function writeDayBytes(b: Uint8Array, at: number, day: Day): number {
  const { y, m, d } = toYmd(day);
  b[at] = 0x30 + ((y / 1000) | 0);
  b[at + 1] = 0x30 + (((y / 100) | 0) % 10);
  b[at + 2] = 0x30 + (((y / 10) | 0) % 10);
  b[at + 3] = 0x30 + (y % 10);
  b[at + 4] = 0x2d;
  b[at + 5] = 0x30 + ((m / 10) | 0);
  b[at + 6] = 0x30 + (m % 10);
  b[at + 7] = 0x2d;
  b[at + 8] = 0x30 + ((d / 10) | 0);
  b[at + 9] = 0x30 + (d % 10);
  return at + 10;
}

/**
 * Strict YYYY-MM-DD parse, or null. Rejects impossible dates (2015-02-29), signs,
 * missing zero padding and anything after the day. Years 0001..9999.
 */
export function parseDay(s: string): Day | null {
  return s.length === 10 ? parseDayAt(s, 0) : null;
}

/** `parseDay` of the 10 characters s[from..from+10) (the caller checks they exist). */
export function parseDayAt(s: string, from: number): Day | null {
  if (s.charCodeAt(from + 4) !== 45 || s.charCodeAt(from + 7) !== 45) return null;
  const y = digits(s, from, from + 4);
  const m = digits(s, from + 5, from + 7);
  const d = digits(s, from + 8, from + 10);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return null;
  return fromYmd(y, m, d);
}

/** Non-negative integer from ASCII digits s[from..to), or -1 on any non-digit. */
function digits(s: string, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Same as `parseDay` over bytes buf[from..from+10), for the CSV readers' hot loop. */
export function parseDayBytes(buf: Uint8Array, from: number): Day | null {
  if (buf[from + 4] !== 45 || buf[from + 7] !== 45) return null;
  let y = 0;
  for (let i = from; i < from + 4; i++) {
    const c = buf[i] - 48;
    if (c < 0 || c > 9) return null;
    y = y * 10 + c;
  }
  const m1 = buf[from + 5] - 48;
  const m2 = buf[from + 6] - 48;
  const d1 = buf[from + 8] - 48;
  const d2 = buf[from + 9] - 48;
  if (m1 < 0 || m1 > 9 || m2 < 0 || m2 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return null;
  const m = m1 * 10 + m2;
  const d = d1 * 10 + d2;
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return null;
  return fromYmd(y, m, d);
}

/** Today's date in UTC as a day number (clock injectable for tests). */
export function todayUtc(nowMs: number = now()): Day {
  return Math.floor(nowMs / 86_400_000);
}
