/**
 * The RiskFigures row exactly as the API serves it (C46), written as bytes like the
 * trailing row (core/rows.ts): the server writes each one per request, from the
 * snapshot's stored columns (latest) or from core/risk.ts (as_of).
 */
import { type Day, monthFirstDay, writeDayBytes } from './dates.js';
import { PERCENT_JSON_MAX, writePercentJson } from './format.js';
import { RISK_SLOTS, RISK_WINDOW_KEYS, RISK_WINDOWS, Slot } from './risk.js';
import { type ByteSink, MARKET } from './rows.js';

const utf8 = new TextEncoder();
const OPEN = utf8.encode('{"code":');
const AS_OF = utf8.encode(`,"market":${JSON.stringify(MARKET)},"as_of_date":"`);
const BENCHMARK = utf8.encode('","benchmark":');
const WINDOWS = utf8.encode(',"windows":{');
const WINDOW_OPEN = RISK_WINDOW_KEYS.map((k, w) =>
  utf8.encode(`${w === 0 ? '' : '},'}"${k}":{"start_month":"`),
);
const END_MONTH = utf8.encode('","end_month":"');
const CLOSE = utf8.encode('}}}');
const NULL = utf8.encode('null');

type Kind = 'figure' | 'day' | 'month';

/** Each served key after end_month, in order, with the slot it is written from and how. */
const FIELD_DEFS: readonly (readonly [string, Slot, Kind])[] = [
  ['volatility', Slot.Volatility, 'figure'],
  ['sharpe', Slot.Sharpe, 'figure'],
  ['sortino', Slot.Sortino, 'figure'],
  ['max_drawdown', Slot.MaxDrawdown, 'figure'],
  ['peak_date', Slot.PeakDate, 'day'],
  ['trough_date', Slot.TroughDate, 'day'],
  ['recovery_date', Slot.RecoveryDate, 'day'],
  ['best_month', Slot.BestMonth, 'figure'],
  ['best_month_date', Slot.BestMonthDate, 'month'],
  ['worst_month', Slot.WorstMonth, 'figure'],
  ['worst_month_date', Slot.WorstMonthDate, 'month'],
  ['positive_months', Slot.PositiveMonths, 'figure'],
  ['beta', Slot.Beta, 'figure'],
  ['correlation', Slot.Correlation, 'figure'],
];

const FIELDS = FIELD_DEFS.map(([key, slot, kind], i) => ({
  // The first closes end_month's string.
  key: utf8.encode(`${i === 0 ? '"' : ''},"${key}":`),
  slot,
  kind,
}));

/** Bytes a row needs beyond its code and benchmark. */
const ROOM =
  OPEN.length +
  AS_OF.length +
  10 +
  BENCHMARK.length +
  WINDOWS.length +
  RISK_WINDOWS.length *
    (WINDOW_OPEN[1].length +
      7 +
      END_MONTH.length +
      7 +
      FIELDS.reduce((n, f) => n + f.key.length + PERCENT_JSON_MAX, 0)) +
  CLOSE.length;

/** `YYYY-MM` of month number `month` (y·12 + m − 1) at b[at]; returns the end (the day's 3 bytes after it are scratch). */
function writeMonth(b: Uint8Array, at: number, month: number): number {
  writeDayBytes(b, at, monthFirstDay(month));
  return at + 7;
}

/**
 * A RiskFigures row appended to `sink`: `code` and `benchmark` are JSON values in
 * UTF-8 (a quoted code, or `null`), `figures` the slots of core/risk.ts.
 */
export function writeRiskRow(
  sink: ByteSink,
  code: Uint8Array,
  asOf: Day,
  endMonth: number,
  benchmark: Uint8Array,
  figures: Float64Array,
): void {
  const b = sink.room(ROOM + code.length + benchmark.length);
  let at = put(b, sink.at, OPEN);
  at = put(b, at, code);
  at = writeDayBytes(b, put(b, at, AS_OF), asOf);
  at = put(b, put(b, at, BENCHMARK), benchmark);
  at = put(b, at, WINDOWS);
  for (let w = 0; w < RISK_WINDOWS.length; w++) {
    const o = w * RISK_SLOTS;
    at = writeMonth(b, put(b, at, WINDOW_OPEN[w]), endMonth - 12 * RISK_WINDOWS[w] + 1);
    at = writeMonth(b, put(b, at, END_MONTH), endMonth);
    for (const f of FIELDS) {
      at = put(b, at, f.key);
      const x = figures[o + f.slot];
      if (f.kind === 'figure') at = writePercentJson(b, at, x);
      else if (Number.isNaN(x)) at = put(b, at, NULL);
      else if (f.kind === 'day') {
        b[at] = 0x22;
        at = writeDayBytes(b, at + 1, x);
        b[at++] = 0x22;
      } else {
        b[at] = 0x22;
        at = writeMonth(b, at + 1, x);
        b[at++] = 0x22;
      }
    }
  }
  sink.at = put(b, at, CLOSE);
}

function put(b: Uint8Array, at: number, src: Uint8Array): number {
  b.set(src, at);
  return at + src.length;
}

/** The `benchmark` value of a row: a code as a JSON string, or null. */
export function benchmarkJson(code: string | null): Uint8Array {
  return code === null ? NULL : utf8.encode(JSON.stringify(code));
}
