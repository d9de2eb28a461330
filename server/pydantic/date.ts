/**
 * Pydantic v2's lax `date` from a string, as its `date` fields read query values and
 * JSON strings (C20): a port of the parts of speedate (the Rust crate Pydantic uses)
 * that this path reaches, with its error strings, so a bad `as_of` gets the message
 * FastAPI would give.
 */

const DATE_INEXACT = 'Datetimes provided to dates should have zero time - e.g. be exact dates';

/** speedate's ParseError documentation strings, which Pydantic puts into its messages. */
const SD = {
  TooShort: 'input is too short',
  ExtraCharacters: 'unexpected extra characters at the end of the input',
  InvalidCharDateTimeSep: 'invalid datetime separator, expected `T`, `t`, `_` or space',
  InvalidCharDateSep: 'invalid date separator, expected `-`',
  DateNotExact: 'Timestamp is not an exact date',
  InvalidCharYear: 'invalid character in year',
  InvalidCharMonth: 'invalid character in month',
  InvalidCharDay: 'invalid character in day',
  InvalidCharTimeSep: 'invalid time separator, expected `:`',
  InvalidCharHour: 'invalid character in hour',
  InvalidCharMinute: 'invalid character in minute',
  InvalidCharSecond: 'invalid character in second',
  InvalidCharTzSign: 'invalid timezone sign',
  InvalidCharTzHour: 'invalid timezone hour',
  InvalidCharTzMinute: 'invalid timezone minute',
  OutOfRangeTzMinute: 'timezone minute value is outside expected range of 0-59',
  OutOfRangeTz: 'timezone offset must be less than 24 hours',
  OutOfRangeMonth: 'month value is outside expected range of 1-12',
  OutOfRangeDay: 'day value is outside expected range',
  OutOfRangeHour: 'hour value is outside expected range of 0-23',
  OutOfRangeMinute: 'minute value is outside expected range of 0-59',
  OutOfRangeSecond: 'second value is outside expected range of 0-59',
  SecondFractionMissing: 'second fraction digits missing after `.`',
  DateTooSmall: 'dates before 1600 are not supported as unix timestamps',
  DateTooLarge: 'dates after 9999 are not supported as unix timestamps',
  YearTooSmall: 'years before 1600 are not supported',
  // Not speedate's: it reads the first four digits of `10000-01-01` as the year 1000
  // and reports YearTooSmall, which is untrue; a year of five or more digits says so.
  YearOutOfRange: 'year value is outside expected range of 1600-9999',
} as const;

class SdError {
  constructor(readonly doc: string) {}
}

const isDigit = (c: number) => c >= 48 && c <= 57;

function digitAt(s: string, i: number, err: string): number {
  const c = s.charCodeAt(i);
  if (!isDigit(c)) throw new SdError(err);
  return c - 48;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** True when s starts with five or more digits and a `-`: a date whose year is past 9999. */
function yearHasMoreDigits(s: string): boolean {
  let i = 4;
  while (isDigit(s.charCodeAt(i))) i++;
  return s.charCodeAt(i) === 45;
}

/** speedate `Date::parse_bytes_partial`: the first 10 characters as YYYY-MM-DD. */
export function parseDatePartial(s: string): string {
  if (s.length < 10) throw new SdError(SD.TooShort);
  const year =
    digitAt(s, 0, SD.InvalidCharYear) * 1000 +
    digitAt(s, 1, SD.InvalidCharYear) * 100 +
    digitAt(s, 2, SD.InvalidCharYear) * 10 +
    digitAt(s, 3, SD.InvalidCharYear);
  if (isDigit(s.charCodeAt(4)) && yearHasMoreDigits(s)) throw new SdError(SD.YearOutOfRange);
  if (year < 1600) throw new SdError(SD.YearTooSmall);
  if (s.charCodeAt(4) !== 45) throw new SdError(SD.InvalidCharDateSep);
  const month = digitAt(s, 5, SD.InvalidCharMonth) * 10 + digitAt(s, 6, SD.InvalidCharMonth);
  if (s.charCodeAt(7) !== 45) throw new SdError(SD.InvalidCharDateSep);
  const day = digitAt(s, 8, SD.InvalidCharDay) * 10 + digitAt(s, 9, SD.InvalidCharDay);
  let maxDays: number;
  if (month === 2) maxDays = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  else if (month === 4 || month === 6 || month === 9 || month === 11) maxDays = 30;
  else if (month >= 1 && month <= 12) maxDays = 31;
  else throw new SdError(SD.OutOfRangeMonth);
  if (day < 1 || day > maxDays) throw new SdError(SD.OutOfRangeDay);
  return s.slice(0, 10);
}

const UNIX_1600 = -11_676_096_000;
const UNIX_9999 = 253_402_300_799;
const MS_WATERSHED = 20_000_000_000;

function dayFromSeconds(seconds: number): string {
  if (seconds < UNIX_1600) throw new SdError(SD.DateTooSmall);
  if (seconds > UNIX_9999) throw new SdError(SD.DateTooLarge);
  const d = new Date(Math.floor(seconds / 86_400) * 86_400_000);
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** speedate `Date::timestamp_watershed`: above 2e10 in magnitude the number is milliseconds. */
function timestampSeconds(ts: number): number {
  if (Math.abs(ts) <= MS_WATERSHED) return ts;
  const seconds = Math.trunc(ts / 1000);
  return ts % 1000 < 0 ? seconds - 1 : seconds;
}

const INT_TIMESTAMP_RE = /^[+-]?\d+$/;
const FLOAT_TIMESTAMP_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** speedate `Time::parse_bytes_offset` from index 11; returns whether the time is exactly midnight. */
function parseTimeIsMidnight(s: string): boolean {
  const o = 11;
  if (s.length - o < 5) throw new SdError(SD.TooShort);
  const hour = digitAt(s, o, SD.InvalidCharHour) * 10 + digitAt(s, o + 1, SD.InvalidCharHour);
  if (s.charCodeAt(o + 2) !== 58) throw new SdError(SD.InvalidCharTimeSep);
  const minute = digitAt(s, o + 3, SD.InvalidCharMinute) * 10 + digitAt(s, o + 4, SD.InvalidCharMinute);
  if (hour > 23) throw new SdError(SD.OutOfRangeHour);
  if (minute > 59) throw new SdError(SD.OutOfRangeMinute);
  let pos = o + 5;
  let second = 0;
  let fractionZero = true;
  if (s.charCodeAt(pos) === 58) {
    second = digitAt(s, o + 6, SD.InvalidCharSecond) * 10 + digitAt(s, o + 7, SD.InvalidCharSecond);
    if (second > 59) throw new SdError(SD.OutOfRangeSecond);
    pos = o + 8;
    const sep = s.charCodeAt(pos);
    if (sep === 46 || sep === 44) {
      pos++;
      const start = pos;
      // Pydantic's date-from-datetime path truncates digits beyond microseconds.
      while (isDigit(s.charCodeAt(pos))) {
        if (pos - start < 6 && s.charCodeAt(pos) !== 48) fractionZero = false;
        pos++;
      }
      if (pos === start) throw new SdError(SD.SecondFractionMissing);
    }
  }
  if (pos < s.length) {
    const c = s[pos++];
    if (c !== 'Z' && c !== 'z') {
      if (c === '\u2212') {
        // U+2212 MINUS SIGN is a valid negative offset sign (ISO 8601).
      } else if (c !== '+' && c !== '-') throw new SdError(SD.InvalidCharTzSign);
      const h = digitAt(s, pos, SD.InvalidCharTzHour) * 10 + digitAt(s, pos + 1, SD.InvalidCharTzHour);
      let m1: number;
      const next = s.charCodeAt(pos + 2);
      if (next === 58) {
        pos += 3;
        m1 = digitAt(s, pos, SD.InvalidCharTzMinute);
      } else if (isDigit(next)) {
        pos += 2;
        m1 = next - 48;
      } else throw new SdError(SD.InvalidCharTzMinute);
      const m2 = digitAt(s, pos + 1, SD.InvalidCharTzMinute);
      const minuteSeconds = m1 * 600 + m2 * 60;
      if (minuteSeconds >= 3600) throw new SdError(SD.OutOfRangeTzMinute);
      if (h * 3600 + minuteSeconds >= 86_400) throw new SdError(SD.OutOfRangeTz);
      pos += 2;
    }
  }
  if (pos < s.length) throw new SdError(SD.ExtraCharacters);
  return hour === 0 && minute === 0 && second === 0 && fractionZero;
}

export type DateResult = { ok: true; value: string } | { ok: false; type: string; msg: string };

/**
 * Pydantic v2 lax `date` from a string: `YYYY-MM-DD`, or a Unix timestamp (seconds,
 * or milliseconds above 2e10) at exactly midnight, or a datetime at exactly
 * midnight. Errors carry Pydantic's type and message (`date_from_datetime_parsing`
 * with speedate's reason, e.g. "day value is outside expected range").
 */
export function parsePydanticDate(s: string): DateResult {
  // Date::parse_bytes: RFC 3339 date, else an integer timestamp that must be exact.
  try {
    const d = parseDatePartial(s);
    if (s.length === 10) return { ok: true, value: d };
  } catch {
    // fall through: Pydantic retries as a datetime below
  }
  if (INT_TIMESTAMP_RE.test(s)) {
    try {
      const seconds = timestampSeconds(Number(s));
      const d = dayFromSeconds(seconds);
      if (((seconds % 86_400) + 86_400) % 86_400 === 0) return { ok: true, value: d };
    } catch {
      // fall through
    }
  }
  // date_from_datetime: DateTime::parse_bytes, then require zero time.
  try {
    let midnight: boolean;
    try {
      parseDatePartial(s);
      const sep = s[10];
      if (sep !== 'T' && sep !== 't' && sep !== ' ' && sep !== '_')
        throw new SdError(SD.InvalidCharDateTimeSep);
      midnight = parseTimeIsMidnight(s);
      if (midnight) return { ok: true, value: s.slice(0, 10) };
    } catch (e) {
      if (!(e instanceof SdError)) throw e;
      if (INT_TIMESTAMP_RE.test(s) || (s.includes('.') && FLOAT_TIMESTAMP_RE.test(s))) {
        const n = Number(s);
        const ts = Math.abs(n) > MS_WATERSHED ? n / 1000 : n;
        const seconds = Math.floor(ts);
        const micros = Math.round((ts - seconds) * 1e6);
        dayFromSeconds(seconds);
        midnight = ((seconds % 86_400) + 86_400) % 86_400 === 0 && micros === 0;
        if (midnight) return { ok: true, value: dayFromSeconds(seconds) };
      } else throw e;
    }
    return { ok: false, type: 'date_from_datetime_inexact', msg: DATE_INEXACT };
  } catch (e) {
    if (!(e instanceof SdError)) throw e;
    return {
      ok: false,
      type: 'date_from_datetime_parsing',
      msg: `Input should be a valid date or datetime, ${e.doc}`,
    };
  }
}
