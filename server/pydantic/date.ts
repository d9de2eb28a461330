/**
 * Pydantic v2's lax `date` (C20), as its `date` fields read query values, JSON
 * strings and JSON numbers: a port of the parts of speedate (the Rust crate
 * pydantic-core uses) and of pydantic-core's date validator that this path reaches,
 * with their error strings, so a bad `as_of` gets the answer FastAPI would give.
 * Checked case by case against Pydantic itself (pydantic-cases.json, recorded by
 * record-cases.py beside this file).
 *
 * The flow, as pydantic-core runs it:
 * 1. `Date::parse_bytes`: `YYYY-MM-DD` exactly, else an integer Unix timestamp
 *    (seconds, or milliseconds above 2e10 in magnitude) that must fall on midnight.
 * 2. Failing that, the input is read as a datetime (`DateTime::parse_bytes`: an
 *    RFC 3339 datetime, else an integer or decimal timestamp). Its parse error is the
 *    one reported (`date_from_datetime_parsing`, the reason in `ctx.error`); a
 *    datetime that is not exactly midnight is `date_from_datetime_inexact`.
 * 3. The date becomes a Python `date`, which has no year 0 (`date_parsing`).
 * Speedate reads bytes, so lengths and positions are UTF-8 bytes, not UTF-16 units.
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
  DateTooSmall: 'dates before 0000 are not supported as unix timestamps',
  DateTooLarge: 'dates after 9999 are not supported as unix timestamps',
  TimeTooLarge: 'numeric times may not exceed 86,399 seconds',
} as const;

class SdError {
  constructor(readonly doc: string) {}
}

interface Ymd {
  y: number;
  m: number;
  d: number;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

function digitAt(b: Uint8Array, i: number, err: string): number {
  const c = i < b.length ? b[i] : -1;
  if (!isDigit(c)) throw new SdError(err);
  return c - 48;
}

const isLeap = (y: number) => (y % 100 === 0 ? y % 400 === 0 : y % 4 === 0);

/** speedate `Date::parse_bytes_partial`: the first 10 bytes as YYYY-MM-DD (any year 0000–9999). */
function parseDatePartialBytes(b: Uint8Array): Ymd {
  if (b.length < 10) throw new SdError(SD.TooShort);
  const y =
    digitAt(b, 0, SD.InvalidCharYear) * 1000 +
    digitAt(b, 1, SD.InvalidCharYear) * 100 +
    digitAt(b, 2, SD.InvalidCharYear) * 10 +
    digitAt(b, 3, SD.InvalidCharYear);
  if (b[4] !== 45) throw new SdError(SD.InvalidCharDateSep);
  const m = digitAt(b, 5, SD.InvalidCharMonth) * 10 + digitAt(b, 6, SD.InvalidCharMonth);
  if (b[7] !== 45) throw new SdError(SD.InvalidCharDateSep);
  const d = digitAt(b, 8, SD.InvalidCharDay) * 10 + digitAt(b, 9, SD.InvalidCharDay);
  let maxDays: number;
  if (m === 2) maxDays = isLeap(y) ? 29 : 28;
  else if (m === 4 || m === 6 || m === 9 || m === 11) maxDays = 30;
  else if (m >= 1 && m <= 12) maxDays = 31;
  else throw new SdError(SD.OutOfRangeMonth);
  if (d < 1 || d > maxDays) throw new SdError(SD.OutOfRangeDay);
  return { y, m, d };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const ymdText = (v: Ymd) => `${pad(v.y, 4)}-${pad(v.m, 2)}-${pad(v.d, 2)}`;

// ---------------------------------------------------------------------------
// Timestamps

const I64_MAX = (1n << 63n) - 1n;
const I64_MIN = -(1n << 63n);
/** 2^63 as a double (exact): where i64 ends. */
const TWO_63 = 2 ** 63;
const MS_WATERSHED = 20_000_000_000n;
/** 0000-01-01T00:00:00 and 9999-12-31T23:59:59 as Unix timestamps: speedate's bounds. */
const UNIX_0000 = -62_167_219_200n;
const UNIX_9999 = 253_402_300_799n;

/** speedate `int_parse_bytes`: a sign, ASCII digits, within i64 (the magnitude, so not i64::MIN). */
function intParseBytes(b: Uint8Array): bigint | null {
  let i = 0;
  let neg = false;
  if (b[0] === 45 || b[0] === 43) {
    neg = b[0] === 45;
    i = 1;
    if (b.length < 2) return null;
  }
  if (i >= b.length) return null;
  let v = 0n;
  for (; i < b.length; i++) {
    if (!isDigit(b[i])) return null;
    v = v * 10n + BigInt(b[i] - 48);
    if (v > I64_MAX) return null;
  }
  return neg ? -v : v;
}

/** speedate `timestamp_watershed`: above 2e10 in magnitude the number is milliseconds. */
function watershed(ts: bigint): { seconds: bigint; micros: number } {
  if (ts === I64_MIN) throw new SdError(SD.DateTooSmall); // checked_abs
  const abs = ts < 0n ? -ts : ts;
  if (abs <= MS_WATERSHED) return { seconds: ts, micros: 0 };
  let seconds = ts / 1000n;
  let micros = Number(ts % 1000n) * 1000;
  if (micros < 0) {
    seconds -= 1n;
    micros += 1_000_000;
  }
  return { seconds, micros };
}

/** speedate `Date::from_timestamp_calc`: the date and the seconds into its day. */
function fromTimestampCalc(seconds: bigint): { date: Ymd; secondOfDay: number } {
  if (seconds < UNIX_0000) throw new SdError(SD.DateTooSmall);
  if (seconds > UNIX_9999) throw new SdError(SD.DateTooLarge);
  const s = Number(seconds);
  const day = Math.floor(s / 86_400);
  const d = new Date(day * 86_400_000);
  // Date.UTC years 0–99 are fine here: the Date is built from a day count, not a year.
  return {
    date: { y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate() },
    secondOfDay: s - day * 86_400,
  };
}

/** speedate `Date::from_timestamp(ts, require_exact = true)`. */
function dateFromTimestamp(ts: bigint): Ymd {
  const { seconds, micros } = watershed(ts);
  const { date, secondOfDay } = fromTimestampCalc(seconds);
  if (secondOfDay !== 0 || micros !== 0) throw new SdError(SD.DateNotExact);
  return date;
}

/** A datetime reduced to what a date needs: its date, and whether its time is 00:00:00.000000. */
interface DateAtTime {
  date: Ymd;
  midnight: boolean;
}

/** speedate `DateTime::from_timestamp_with_config(ts, micros)`. */
function dateTimeFromTimestamp(ts: bigint, micros: number): DateAtTime {
  const w = watershed(ts);
  let second = w.seconds;
  let total = micros + w.micros;
  if (total > 0xffff_ffff) throw new SdError(SD.TimeTooLarge); // u32 checked_add
  if (total >= 1_000_000) {
    second += BigInt(Math.floor(total / 1_000_000));
    if (second > I64_MAX) throw new SdError(SD.TimeTooLarge);
    total %= 1_000_000;
  }
  const { date, secondOfDay } = fromTimestampCalc(second);
  return { date, midnight: secondOfDay === 0 && total === 0 };
}

/** Rust's `f64 as i64`: truncation toward zero, saturating, NaN → 0. */
function f64ToI64(x: number): bigint {
  if (Number.isNaN(x)) return 0n;
  if (x >= TWO_63) return I64_MAX;
  if (x <= -TWO_63) return I64_MIN;
  return BigInt(Math.trunc(x));
}

/** Rust's `f64 as u32`: truncation, saturating at 0 and u32::MAX, NaN → 0. */
function f64ToU32(x: number): number {
  if (Number.isNaN(x) || x <= 0) return 0;
  if (x >= 4294967295) return 4294967295;
  return Math.trunc(x);
}

/** A decimal as lexical-parse-float's standard format reads it (only called when there is a `.`). */
const DECIMAL_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** speedate `DateTime::parse_bytes_with_config`'s timestamp branch for a decimal. */
function dateTimeFromFloat(f: number): DateAtTime {
  const inMs = Math.abs(f) > 20_000_000_000;
  const normalized = inMs ? f / 1000 : f;
  const seconds = f64ToI64(Math.floor(normalized));
  const micros = f64ToU32(Math.round((normalized - Number(seconds)) * 1_000_000));
  return dateTimeFromTimestamp(seconds, micros);
}

// ---------------------------------------------------------------------------
// Datetimes

/**
 * speedate `Time::parse_bytes_offset` from byte 11, with pydantic-core's
 * `date_from_datetime` settings (fractions beyond microseconds truncated): whether
 * the time is exactly midnight. Any time zone is allowed: the date is the one written.
 */
function parseTimeIsMidnight(b: Uint8Array): boolean {
  const o = 11;
  if (b.length - o < 5) throw new SdError(SD.TooShort);
  const hour = digitAt(b, o, SD.InvalidCharHour) * 10 + digitAt(b, o + 1, SD.InvalidCharHour);
  if (b[o + 2] !== 58) throw new SdError(SD.InvalidCharTimeSep);
  const minute = digitAt(b, o + 3, SD.InvalidCharMinute) * 10 + digitAt(b, o + 4, SD.InvalidCharMinute);
  if (hour > 23) throw new SdError(SD.OutOfRangeHour);
  if (minute > 59) throw new SdError(SD.OutOfRangeMinute);
  let pos = o + 5;
  let second = 0;
  let fractionZero = true;
  if (b[pos] === 58) {
    second = digitAt(b, o + 6, SD.InvalidCharSecond) * 10 + digitAt(b, o + 7, SD.InvalidCharSecond);
    if (second > 59) throw new SdError(SD.OutOfRangeSecond);
    pos = o + 8;
    const sep = b[pos];
    if (sep === 46 || sep === 44) {
      pos++;
      const start = pos;
      while (pos < b.length && isDigit(b[pos])) {
        if (pos - start < 6 && b[pos] !== 48) fractionZero = false;
        pos++;
      }
      if (pos === start) throw new SdError(SD.SecondFractionMissing);
    }
  }
  if (pos < b.length) {
    const c = b[pos];
    if (c === 90 || c === 122) {
      pos++;
    } else {
      // U+2212 MINUS SIGN (3 bytes in UTF-8) is a negative offset sign too (ISO 8601).
      if (c === 0xe2 && b[pos + 1] === 0x88 && b[pos + 2] === 0x92) pos += 3;
      else if (c === 43 || c === 45) pos++;
      else throw new SdError(SD.InvalidCharTzSign);
      const h = digitAt(b, pos, SD.InvalidCharTzHour) * 10 + digitAt(b, pos + 1, SD.InvalidCharTzHour);
      pos += 2;
      let m: number;
      if (b[pos] === 58) {
        m = digitAt(b, pos + 1, SD.InvalidCharTzMinute) * 10 + digitAt(b, pos + 2, SD.InvalidCharTzMinute);
        pos += 3;
      } else {
        m = digitAt(b, pos, SD.InvalidCharTzMinute) * 10 + digitAt(b, pos + 1, SD.InvalidCharTzMinute);
        pos += 2;
      }
      if (m > 59) throw new SdError(SD.OutOfRangeTzMinute);
      if (h * 3600 + m * 60 >= 86_400) throw new SdError(SD.OutOfRangeTz);
    }
  }
  if (pos < b.length) throw new SdError(SD.ExtraCharacters);
  return hour === 0 && minute === 0 && second === 0 && fractionZero;
}

/** speedate `DateTime::parse_bytes_with_config`: an RFC 3339 datetime, else a timestamp. */
function parseDateTime(b: Uint8Array): DateAtTime {
  try {
    const date = parseDatePartialBytes(b);
    const sep = b[10];
    if (sep !== 84 && sep !== 116 && sep !== 32 && sep !== 95) throw new SdError(SD.InvalidCharDateTimeSep);
    return { date, midnight: parseTimeIsMidnight(b) };
  } catch (e) {
    if (!(e instanceof SdError)) throw e;
    // float_parse_bytes: a decimal when there is a `.`, else an integer within i64.
    if (b.includes(46)) {
      const text = Buffer.from(b).toString('latin1');
      if (!DECIMAL_RE.test(text)) throw e;
      return dateTimeFromFloat(Number(text));
    }
    const int = intParseBytes(b);
    if (int === null) throw e;
    return dateTimeFromTimestamp(int, 0);
  }
}

// ---------------------------------------------------------------------------
// Pydantic's date validator

export type DateResult =
  | { ok: true; value: string }
  | { ok: false; type: string; msg: string; ctx?: { error: string } };

const YEAR_ZERO = 'year 0 is out of range';

/** The date as a Python `date`: year 0 does not exist there. */
function asPythonDate(v: Ymd): DateResult {
  if (v.y === 0) {
    return {
      ok: false,
      type: 'date_parsing',
      msg: `Input should be a valid date in the format YYYY-MM-DD, ${YEAR_ZERO}`,
      ctx: { error: YEAR_ZERO },
    };
  }
  return { ok: true, value: ymdText(v) };
}

/** Step 2: the input read as a datetime, which must be exactly midnight. */
function dateFromDateTime(read: () => DateAtTime): DateResult {
  try {
    const dt = read();
    if (!dt.midnight) return { ok: false, type: 'date_from_datetime_inexact', msg: DATE_INEXACT };
    return asPythonDate(dt.date);
  } catch (e) {
    if (!(e instanceof SdError)) throw e;
    return {
      ok: false,
      type: 'date_from_datetime_parsing',
      msg: `Input should be a valid date or datetime, ${e.doc}`,
      ctx: { error: e.doc },
    };
  }
}

/**
 * Pydantic v2 lax `date` from a string (a query value or a JSON string). Errors carry
 * Pydantic's type, message and `ctx`.
 */
export function parsePydanticDate(s: string): DateResult {
  const b = Buffer.from(s, 'utf8');
  // Step 1: Date::parse_bytes.
  try {
    let v: Ymd;
    try {
      v = parseDatePartialBytes(b);
      if (b.length > 10) throw new SdError(SD.ExtraCharacters);
    } catch (e) {
      const ts = intParseBytes(b);
      if (ts === null) throw e;
      v = dateFromTimestamp(ts);
    }
    return asPythonDate(v);
  } catch (e) {
    if (!(e instanceof SdError)) throw e;
  }
  return dateFromDateTime(() => parseDateTime(b));
}

const DATE_TYPE: DateResult = { ok: false, type: 'date_type', msg: 'Input should be a valid date' };

/**
 * Pydantic v2 lax `date` from a JSON number (a batch body's `as_of`): not a date, so
 * read as a datetime from a timestamp (pydantic-core `int_as_datetime` /
 * `float_as_datetime`), which must be exactly midnight.
 */
export function parsePydanticDateNumber(n: number): DateResult {
  if (!Number.isFinite(n)) return DATE_TYPE;
  if (Number.isInteger(n) && Math.abs(n) < TWO_63) {
    return dateFromDateTime(() => dateTimeFromTimestamp(BigInt(n), 0));
  }
  return dateFromDateTime(() => {
    const fraction = Math.abs(n % 1) * 1_000_000;
    return dateTimeFromTimestamp(f64ToI64(Math.floor(n)), f64ToU32(Math.round(fraction)));
  });
}
