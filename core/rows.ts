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
  at = 0;

  constructor(size = 1 << 16) {
    this.buf = new Uint8Array(size);
  }

  /** Make room for `n` more bytes (the buffer may be replaced). */
  room(n: number): Uint8Array {
    if (this.at + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
      next.set(this.buf.subarray(0, this.at));
      this.buf = next;
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

const utf8 = new TextEncoder();
const TRAILING_OPEN = utf8.encode('{"code":');
const TRAILING_AS_OF = utf8.encode(`,"market":${MARKET_JSON},"as_of_date":"`);
/** `","return_1d":` … `,"return_30y":` in TRAILING_KEYS order; the first closes the date. */
const TRAILING_KEY_BYTES = TRAILING_KEYS.map((k, i) =>
  utf8.encode((i === 0 ? '"' : '') + (i === TOP_LEVEL_TRAILING ? ',"extra_returns":{' : ',') + `"${k}":`),
);
const TRAILING_CLOSE = utf8.encode('}}');
/** Bytes a trailing row needs beyond its code: every fragment, the date and the figures at most. */
const TRAILING_ROOM =
  TRAILING_OPEN.length +
  TRAILING_AS_OF.length +
  10 +
  TRAILING_KEY_BYTES.reduce((n, b) => n + b.length, 0) +
  TRAILING_KEYS.length * PERCENT_JSON_MAX +
  TRAILING_CLOSE.length;

/**
 * A TrailingReturns row (SPEC 2, C1, C8) appended to `sink`; `code` is the fund
 * code as a JSON string in UTF-8 (quotes included).
 */
export function writeTrailingRow(sink: ByteSink, code: Uint8Array, f: TrailingFigures): void {
  const b = sink.room(TRAILING_ROOM + code.length);
  let at = put(b, sink.at, TRAILING_OPEN);
  at = put(b, at, code);
  at = writeDayBytes(b, put(b, at, TRAILING_AS_OF), f.asOf);
  const v = f.values;
  for (let k = 0; k < TRAILING_KEY_BYTES.length; k++)
    at = writePercentJson(b, put(b, at, TRAILING_KEY_BYTES[k]), v[k]);
  sink.at = put(b, at, TRAILING_CLOSE);
}

/** `src` copied to b[at..]; returns the end. */
function put(b: Uint8Array, at: number, src: Uint8Array): number {
  return copyInto(b, src, at);
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
