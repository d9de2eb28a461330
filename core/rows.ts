/**
 * The JSON rows exactly as the API serves them (SPEC 2, C1, C8, C9, C17): the server
 * pre-serializes the latest rows once per snapshot and the CLI's `query` prints the
 * same bytes, so both agree by construction. Trailing rows are written as bytes
 * (the server computes as_of rows per request); the string form decodes them.
 */
import { copyInto, viewOf } from './bytes.js';
import { type Day, formatDay, writeDayBytes } from './dates.js';
import { PERCENT_JSON_MAX, percentJson, writePercentJson } from './format.js';
import {
  type CalendarFigures,
  type FundRecord,
  TOP_LEVEL_TRAILING,
  TRAILING_KEYS,
  type TrailingFigures,
} from './types.js';

/** C34: market is accepted everywhere and always echoed as US. */
export const MARKET = 'US';

const MARKET_JSON = JSON.stringify(MARKET);

function str(v: string | null): string {
  return v === null ? 'null' : JSON.stringify(v);
}

function day(v: Day | null): string {
  return v === null ? 'null' : `"${formatDay(v)}"`;
}

/**
 * A reusable, growable byte buffer that rows are written into: the server writes
 * on-demand rows (as_of) here rather than building strings, which the response
 * write would flatten and convert to UTF-8 again.
 */
export class ByteSink {
  buf: Uint8Array;
  /** The same bytes, for the word stores of fixed fragments (putFragment). */
  data: DataView;
  at = 0;

  constructor(size = 1 << 16) {
    this.buf = new Uint8Array(size);
    this.data = new DataView(this.buf.buffer);
  }

  /** Make room for `n` more bytes (the buffer may be replaced). */
  room(n: number): Uint8Array {
    if (this.at + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
      next.set(this.buf.subarray(0, this.at));
      this.buf = next;
      this.data = new DataView(next.buffer);
    }
    return this.buf;
  }

  byte(c: number): void {
    this.room(1)[this.at++] = c;
  }

  /** The bytes written since `from`: a view, valid until the sink is written again. */
  view(from = 0): Uint8Array {
    return viewOf(this.buf, from, this.at);
  }
}

/**
 * A fixed piece of a row (a key and its punctuation) as little-endian 32-bit words,
 * the last padded. Written by putFragment with DataView stores, which TurboFan
 * inlines: a row's 22 fragments cost about 130 instructions each that way, against
 * about 230 through TypedArray#set, a builtin call per copy (callgrind,
 * bench/reports/instructions.md). A byte loop cost more than either.
 */
interface Fragment {
  readonly words: readonly number[];
  readonly length: number;
}

/** Bytes a fragment's last word may write past its end: the caller's room includes them. */
const FRAGMENT_SLACK = 3;

function fragment(text: string): Fragment {
  const b = utf8.encode(text);
  const words: number[] = [];
  for (let k = 0; k < b.length; k += 4)
    words.push(b[k] | ((b[k + 1] ?? 0) << 8) | ((b[k + 2] ?? 0) << 16) | ((b[k + 3] ?? 0) << 24) | 0);
  return { words, length: b.length };
}

/**
 * `f` written at `at`; returns its end. The last word may write up to
 * FRAGMENT_SLACK bytes past it, which whatever comes next overwrites (or which lie
 * past the row's end).
 */
function putFragment(d: DataView, at: number, f: Fragment): number {
  const w = f.words;
  for (let k = 0; k < w.length; k++) d.setInt32(at + 4 * k, w[k], true);
  return at + f.length;
}

const utf8 = new TextEncoder();
const TRAILING_OPEN = fragment('{"code":');
const TRAILING_AS_OF = fragment(`,"market":${MARKET_JSON},"as_of_date":"`);
/** `","return_1d":` … `,"return_30y":` in TRAILING_KEYS order; the first closes the date. */
const TRAILING_KEY_BYTES = TRAILING_KEYS.map((k, i) =>
  fragment((i === 0 ? '"' : '') + (i === TOP_LEVEL_TRAILING ? ',"extra_returns":{' : ',') + `"${k}":`),
);
const TRAILING_CLOSE = fragment('}}');
/** Bytes a trailing row needs beyond its code: every fragment, the date and the figures at most. */
const TRAILING_ROOM =
  TRAILING_OPEN.length +
  TRAILING_AS_OF.length +
  10 +
  TRAILING_KEY_BYTES.reduce((n, b) => n + b.length, 0) +
  TRAILING_KEYS.length * PERCENT_JSON_MAX +
  TRAILING_CLOSE.length +
  FRAGMENT_SLACK;

/**
 * A TrailingReturns row (SPEC 2, C1, C8) appended to `sink`; `code` is the fund
 * code as a JSON string in UTF-8 (quotes included).
 */
export function writeTrailingRow(sink: ByteSink, code: Uint8Array, f: TrailingFigures): void {
  const b = sink.room(TRAILING_ROOM + code.length);
  const d = sink.data;
  let at = copyInto(b, code, putFragment(d, sink.at, TRAILING_OPEN));
  at = writeDayBytes(b, putFragment(d, at, TRAILING_AS_OF), f.asOf);
  const v = f.values;
  for (let k = 0; k < TRAILING_KEY_BYTES.length; k++)
    at = writePercentJson(b, putFragment(d, at, TRAILING_KEY_BYTES[k]), v[k]);
  sink.at = putFragment(d, at, TRAILING_CLOSE);
}

const rowSink = new ByteSink();
const decoder = new TextDecoder();

/** The same row as a string (prepared rows, the CLI's `query`). */
export function trailingRowJson(code: string, f: TrailingFigures): string {
  rowSink.at = 0;
  writeTrailingRow(rowSink, utf8.encode(JSON.stringify(code)), f);
  return decoder.decode(rowSink.view());
}

export function calendarRowJson(code: string, f: CalendarFigures): string {
  return (
    `{"code":${JSON.stringify(code)},"market":${MARKET_JSON},"year":${f.year}` +
    `,"total_return":${percentJson(f.totalReturn)},"start_date":"${formatDay(f.startDate)}"` +
    `,"end_date":"${formatDay(f.endDate)}","is_partial":${f.isPartial}}`
  );
}

/** A Fund (C17): every key present; min/max return dates are the series' ends. */
export function fundJson(f: FundRecord, minReturnDate: Day | null, maxReturnDate: Day | null): string {
  return (
    `{"code":${JSON.stringify(f.code)},"market":${MARKET_JSON},"name":${str(f.name)}` +
    `,"country":${str(f.country)},"exchange":${str(f.exchange)},"currency":${str(f.currency)}` +
    `,"type":"${f.type}","isin":${str(f.isin)},"is_inactive":${f.isInactive}` +
    `,"inactive_date":${day(f.inactiveDate)},"min_return_date":${day(minReturnDate)}` +
    `,"max_return_date":${day(maxReturnDate)}}`
  );
}
