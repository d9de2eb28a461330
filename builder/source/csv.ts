/**
 * Low-level CSV pieces over raw bytes, shared by the source readers (C35, C36).
 *
 * The price files hold ~100 million rows, so the common path never creates a string
 * per line or per field: records are split into field offsets over the file's own
 * bytes, and numbers and dates are parsed straight from those bytes. Only a record
 * that contains a double quote takes a slower RFC 4180 path, which copies the
 * unquoted field bytes into a scratch buffer so callers still read offsets.
 */

import { now } from '../../core/clock.js';
import { type Day, parseDayBytes, todayUtc } from '../../core/dates.js';
import type { Problem, ProblemReason } from '../report/build-report.js';

const LF = 10;
const CR = 13;
const QUOTE = 34;
const COMMA = 44;

const SPACE = 32;
/** "All fields"; kept a small integer so V8 compares it without boxing. */
const NO_LIMIT = 0x3fffffff;
const TAB = 9;

/**
 * One CSV cell as the writers of source files write it: quoted (RFC 4180, a quote
 * doubled) only when it holds a quote or a comma, so RecordReader reads back exactly
 * `s`; null is the blank cell. A line break (a provider's name may hold one) is
 * written as a space: the source readers take a record that runs over lines for a
 * stray quote and refuse its rows (C36), so a quoted break would lose the fund.
 */
export function csvCell(s: string | null): string {
  if (s === null) return '';
  const line = /[\r\n]/.test(s) ? s.replace(/\r\n|[\r\n]/g, ' ') : s;
  return /[",]/.test(line) ? `"${line.replace(/"/g, '""')}"` : line;
}

/** Where the text starts: 3 after a UTF-8 byte-order mark, else 0. */
export function bomLength(buf: Uint8Array): number {
  return buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** UTF-8 text of buf[from..to) (invalid sequences become U+FFFD rather than failing the file). */
function decodeUtf8(buf: Uint8Array, from: number, to: number): string {
  return utf8.decode(buf.subarray(from, to));
}

/**
 * Splits a byte buffer into records, one `next()` at a time. After `next()` returns
 * true, field i is `src[starts[i]..ends[i])` and `line` is the record's 1-based line.
 * LF, CRLF and (in a file with no LF) CR endings are accepted; blank lines (empty or only spaces/tabs, C36) are
 * skipped and never reach the caller.
 */
export class RecordReader {
  /** Bytes to read the current record's fields from: the input, or a scratch copy for quoted records. */
  src: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  /** Fields in the current record (at most `fieldLimit` on the fast path). */
  count = 0;
  /** 1-based line where the current record starts. */
  line = 0;
  /**
   * Lines the current record runs over past its first: a quoted field with line ends
   * inside. In a file of numbers that is a stray quote swallowing the rows after it.
   */
  spanned = 0;

  readonly #buf: Uint8Array;
  readonly #len: number;
  #pos: number;
  #nextLineNo = 1;
  /** Index of the next `"` at or after `pos`, or `len` when there is none. */
  #nextQuote: number;
  #scratch: Uint8Array = new Uint8Array(256);
  #fieldLimit: number;

  /**
   * `fieldLimit` lets a caller that only needs the first N columns stop splitting a
   * line there (the rest of the line is not scanned); quoted records are always
   * split fully.
   */
  constructor(buf: Uint8Array, fieldLimit = NO_LIMIT) {
    // Classic Mac line ends (CR alone, no LF anywhere): read as LF, in place.
    if (buf.indexOf(LF) < 0 && buf.indexOf(CR) >= 0)
      for (let i = 0; i < buf.length; i++) if (buf[i] === CR) buf[i] = LF;
    this.#buf = buf;
    this.src = buf;
    this.#len = buf.length;
    this.#pos = bomLength(buf);
    this.#fieldLimit = Math.max(1, Math.min(fieldLimit, NO_LIMIT));
    const cap = Math.min(Math.max(this.#fieldLimit, 8), 64);
    this.starts = new Int32Array(cap);
    this.ends = new Int32Array(cap);
    const q = buf.indexOf(QUOTE, this.#pos);
    this.#nextQuote = q < 0 ? this.#len : q;
  }

  next(): boolean {
    const buf = this.#buf;
    const len = this.#len;
    while (this.#pos < len) {
      const start = this.#pos;
      let lf = buf.indexOf(LF, start);
      if (lf < 0) lf = len;
      this.line = this.#nextLineNo;
      if (this.#nextQuote < start) {
        const q = buf.indexOf(QUOTE, start);
        this.#nextQuote = q < 0 ? len : q;
      }
      if (this.#nextQuote < lf) {
        this.#splitQuoted(start, lf);
        return true;
      }
      this.#pos = lf + 1;
      this.#nextLineNo++;
      this.spanned = 0;
      const end = lf > start && buf[lf - 1] === CR ? lf - 1 : lf;
      if (end === start) continue;
      const c0 = buf[start];
      if ((c0 === SPACE || c0 === TAB) && isBlank(buf, start, end)) continue;
      this.src = buf;
      this.#splitPlain(start, end);
      return true;
    }
    return false;
  }

  /** From the next record on, split at most `n` fields on the fast path (see the constructor). */
  limitFields(n: number): void {
    this.#fieldLimit = Math.max(1, Math.min(n, NO_LIMIT));
  }

  /** Whether field i exists and its bytes equal `lower` ignoring ASCII case. */
  fieldIs(i: number, lower: string): boolean {
    if (i >= this.count) return false;
    const s = this.starts[i];
    const n = this.ends[i] - s;
    if (n !== lower.length) return false;
    const src = this.src;
    for (let k = 0; k < n; k++) {
      let c = src[s + k];
      if (c >= 65 && c <= 90) c += 32;
      if (c !== lower.charCodeAt(k)) return false;
    }
    return true;
  }

  /** Field i as text ('' when the record has no field i). */
  text(i: number): string {
    if (i >= this.count) return '';
    return decodeUtf8(this.src, this.starts[i], this.ends[i]);
  }

  /** All fields of the current record as text. */
  texts(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.text(i));
    return out;
  }

  #grow(): void {
    const n = this.starts.length * 2;
    const s = new Int32Array(n);
    s.set(this.starts);
    const e = new Int32Array(n);
    e.set(this.ends);
    this.starts = s;
    this.ends = e;
  }

  #splitPlain(start: number, end: number): void {
    const buf = this.#buf;
    const limit = this.#fieldLimit;
    let starts = this.starts;
    let ends = this.ends;
    let n = 0;
    starts[0] = start;
    for (let i = start; i < end; i++) {
      if (buf[i] === COMMA) {
        ends[n] = i;
        n++;
        if (n === limit) {
          this.count = n;
          return;
        }
        if (n === starts.length) {
          this.#grow();
          starts = this.starts;
          ends = this.ends;
        }
        starts[n] = i + 1;
      }
    }
    ends[n] = end;
    this.count = n + 1;
  }

  #put(at: number, c: number): void {
    if (at === this.#scratch.length) {
      const s = new Uint8Array(this.#scratch.length * 2);
      s.set(this.#scratch);
      this.#scratch = s;
    }
    this.#scratch[at] = c;
  }

  /**
   * RFC 4180 record starting at `start`: a field that begins with `"` runs to the
   * matching quote, `""` inside it is one quote, and it may span lines. A quote inside
   * an unquoted field, or bytes after a closing quote, are kept literally (as Python's
   * csv module does). A quote never closed would swallow the rest of the file, so then
   * the record is just its own line with the quote taken literally.
   */
  #splitQuoted(start: number, lf: number): void {
    const buf = this.#buf;
    const len = this.#len;
    let i = start;
    let out = 0;
    let n = 0;
    let lines = 0;
    for (;;) {
      if (n === this.starts.length) this.#grow();
      this.starts[n] = out;
      if (i < len && buf[i] === QUOTE) {
        let j = i + 1;
        let closed = false;
        while (j < len) {
          const c = buf[j];
          if (c === QUOTE) {
            if (j + 1 < len && buf[j + 1] === QUOTE) {
              this.#put(out++, QUOTE);
              j += 2;
              continue;
            }
            closed = true;
            j++;
            break;
          }
          if (c === LF) lines++;
          this.#put(out++, c);
          j++;
        }
        if (!closed) {
          this.#pos = lf + 1;
          this.#nextLineNo++;
          this.spanned = 0;
          this.src = buf;
          this.#splitPlain(start, lf > start && buf[lf - 1] === CR ? lf - 1 : lf);
          return;
        }
        i = j;
      }
      while (i < len) {
        const c = buf[i];
        if (c === COMMA || c === LF || (c === CR && (i + 1 === len || buf[i + 1] === LF))) break;
        this.#put(out++, c);
        i++;
      }
      this.ends[n] = out;
      n++;
      if (i < len && buf[i] === COMMA) {
        i++;
        continue;
      }
      if (i < len && buf[i] === CR) i++;
      break;
    }
    this.#pos = i + 1;
    this.#nextLineNo += lines + 1;
    this.spanned = lines;
    this.count = n;
    this.src = this.#scratch;
  }
}

/**
 * One problem per line of the current record when it runs over lines (`spanned` > 0):
 * in a file of numbers that is a stray quote, and every row it swallowed is a row the
 * build did not read, so each is counted (C36), not the record once. Empty otherwise.
 */
export function swallowedRows(
  r: RecordReader,
  reason: ProblemReason,
  file: string,
  code?: string,
): Problem[] {
  const out: Problem[] = [];
  if (r.spanned === 0) return out;
  const detail = `a quoted field runs from line ${r.line} over ${r.spanned + 1} lines (a stray quote?)`;
  for (let k = 0; k <= r.spanned; k++)
    out.push(
      code === undefined
        ? { reason, file, line: r.line + k, detail }
        : { reason, file, line: r.line + k, code, detail },
    );
  return out;
}

function isBlank(buf: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (c !== SPACE && c !== TAB) return false;
  }
  return true;
}

/** Header names as matched by C35: trimmed and lower-cased. */
export function normalizeHeader(names: readonly string[]): string[] {
  return names.map((s) => s.trim().toLowerCase());
}

/** Index of the first header named any of `aliases` (already lower-case), or -1. */
export function findColumn(header: readonly string[], ...aliases: string[]): number {
  for (let i = 0; i < header.length; i++) if (aliases.includes(header[i])) return i;
  return -1;
}

const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
  1e20, 1e21, 1e22,
];
const TWO53 = 9007199254740992;
const MAX_NUMBER_CHARS = 100;

/**
 * A plain decimal from buf[from..to): optional sign, digits with at most one dot (at
 * least one digit), optional exponent `e`/`E` with optional sign and digits. Anything
 * else, including `NaN`, `Infinity`, hex, whitespace and the empty field, is NaN
 * (C36: `parseFloat` and `Number` accept too much). The result is the same double as
 * `Number(text)`: an integer mantissa below 2^53 scaled by at most 10^22 is one
 * correctly rounded IEEE operation (Clinger's fast path); longer mantissas or larger
 * exponents go to `Number` itself. Out-of-range exponents give ±Infinity or ±0 just
 * as `Number` does; callers decide whether those are acceptable.
 */
export function parseDecimal(buf: Uint8Array, from: number, to: number): number {
  let i = from;
  // No price is written in 100 characters; a longer field (200 MB of digits, once) would
  // only be copied into a string for `Number` to refuse, exhausting the heap on the way.
  if (i >= to || to - from > MAX_NUMBER_CHARS) return Number.NaN;
  let neg = false;
  let c = buf[i];
  if (c === 45) {
    neg = true;
    i++;
  } else if (c === 43) {
    i++;
  }
  let mant = 0;
  const intStart = i;
  while (i < to) {
    c = buf[i] - 48;
    if (c < 0 || c > 9) break;
    mant = mant * 10 + c;
    i++;
  }
  let digits = i - intStart;
  let frac = 0;
  if (i < to && buf[i] === 46) {
    i++;
    const fracStart = i;
    while (i < to) {
      c = buf[i] - 48;
      if (c < 0 || c > 9) break;
      mant = mant * 10 + c;
      i++;
    }
    frac = i - fracStart;
    digits += frac;
  }
  if (digits === 0) return Number.NaN;
  let exp = 0;
  if (i < to && (buf[i] | 32) === 101) {
    i++;
    let expNeg = false;
    if (i < to && (buf[i] === 45 || buf[i] === 43)) {
      expNeg = buf[i] === 45;
      i++;
    }
    const expStart = i;
    while (i < to) {
      c = buf[i] - 48;
      if (c < 0 || c > 9) break;
      // Past this the value is 0 or Infinity anyway; keeps `exp` an exact integer.
      if (exp < 1e9) exp = exp * 10 + c;
      i++;
    }
    if (i === expStart) return Number.NaN;
    if (expNeg) exp = -exp;
  }
  if (i !== to) return Number.NaN;
  // `mant` accumulated in doubles is exact while below 2^53, and rounding is monotone,
  // so a true mantissa ≥ 2^53 can never show up here as < 2^53.
  if (mant < TWO53) {
    const e10 = exp - frac;
    if (e10 >= 0 && e10 <= 22) {
      const r = mant * POW10[e10];
      return neg ? -r : r;
    }
    if (e10 < 0 && e10 >= -22) {
      const r = mant / POW10[-e10];
      return neg ? -r : r;
    }
  }
  return Number(asciiText(buf, from, to));
}

/** buf[from..to) as a string, one char per byte (the caller has checked it is ASCII). */
function asciiText(buf: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(buf[i]);
  return s;
}

/**
 * A date field: exactly `YYYY-MM-DD`, or that followed by ` 00:00:00` (yfinance,
 * C36); any other suffix or an impossible date (2015-02-29) is null.
 */
export function parseDateField(buf: Uint8Array, from: number, to: number): Day | null {
  const n = to - from;
  if (n === 10) return parseDayBytes(buf, from);
  if (
    n === 19 &&
    buf[from + 10] === SPACE &&
    buf[from + 11] === 48 &&
    buf[from + 12] === 48 &&
    buf[from + 13] === 58 &&
    buf[from + 14] === 48 &&
    buf[from + 15] === 48 &&
    buf[from + 16] === 58 &&
    buf[from + 17] === 48 &&
    buf[from + 18] === 48
  ) {
    return parseDayBytes(buf, from);
  }
  return null;
}

/** Up to 40 characters of a field, for a problem's detail. */
export function excerpt(buf: Uint8Array, from: number, to: number): string {
  const s = decodeUtf8(buf, from, Math.min(to, from + 40));
  return to - from > 40 ? `${s}…` : s;
}

/**
 * Days of grace past today (UTC) before a row's date counts as in the future (C36).
 * Wide enough for a provider already on tomorrow, a test feed's next trading day after
 * a long weekend, or data prepared to a month's end; narrow enough to catch a wrong
 * year (2099 for 2026), which is what freezes a fund and /healthz.
 */
export const FUTURE_GRACE_DAYS = 31;

/**
 * The latest date a data row may carry (C36): today in UTC plus FUTURE_GRACE_DAYS. A
 * later date is a bad row, not an observation: accepted, it would become the
 * snapshot's as_of (so /healthz could never report stale data again) and every real
 * row after it would be "not after the last observation". Reads the clock when no
 * time is given (core/clock.ts), so tests can pin it.
 */
export function latestAcceptedDay(nowMs: number = now()): Day {
  return todayUtc(nowMs) + FUTURE_GRACE_DAYS;
}
