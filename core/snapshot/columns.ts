/**
 * The in-memory shape of a snapshot: what the builder hands the writer and what the
 * reader returns. Numeric columns are plain typed arrays so the server can use them
 * directly; after loading they are views onto the files' SharedArrayBuffers.
 */
import type { FundRecord, FundType } from '../types.js';

/** Marks a null day in an Int32Array of days (the Arrow data slot under a null bit holds it too). */
export const NULL_DAY = -2147483648;

export interface FundColumns {
  /** F funds, sorted by code in UTF-8 byte order, codes unique. */
  length: number;
  code: string[];
  name: (string | null)[];
  country: (string | null)[];
  exchange: (string | null)[];
  currency: (string | null)[];
  type: FundType[];
  isin: (string | null)[];
  /** 0 or 1. */
  isInactive: Uint8Array;
  /** NULL_DAY = null. */
  inactiveDate: Int32Array;
  /** Fund i's observations are series[offset .. offset + length); contiguous, in fund order, length ≥ 1. */
  seriesOffset: Int32Array;
  seriesLength: Int32Array;
  /** Raw close of the fund's last observation (C37); NaN = unknown. */
  lastClose: Float64Array;
}

/** Every fund's observations, fund by fund, dates strictly ascending per fund, values finite > 0. */
export interface SeriesColumns {
  date: Int32Array;
  value: Float64Array;
}

/** One row per fund (row i = fund i); values[k] is the column of TRAILING_KEYS[k], unrounded percent, NaN = null. */
export interface TrailingColumns {
  asOf: Int32Array;
  values: Float64Array[];
}

/** Calendar-year rows sorted by (fund, year), unique; totalReturn NaN = null. */
export interface CalendarColumns {
  length: number;
  fund: Int32Array;
  year: Int32Array;
  totalReturn: Float64Array;
  startDate: Int32Array;
  endDate: Int32Array;
  /** 0 or 1. */
  isPartial: Uint8Array;
}

/**
 * One row per fund: its latest risk figures (C38–C44), unrounded, NaN = null.
 * `figures[w·7 + f]` is STORED_FIGURES[f] of window RISK_WINDOWS[w] (the order of
 * RISK_COLUMN_NAMES); `dates[w·5 + d]` is STORED_DATES[d], NULL_DAY = null, a month
 * as its first day.
 */
export interface RiskColumns {
  /** First day of E, the month the windows end with (C39). */
  endMonth: Int32Array;
  figures: Float64Array[];
  dates: Int32Array[];
}

/** The risk-free rate's source (C41): yields in percent, dates strictly ascending; may be empty. */
export interface RateColumns {
  date: Int32Array;
  yield: Float64Array;
}

export interface SnapshotColumns {
  funds: FundColumns;
  series: SeriesColumns;
  trailing: TrailingColumns;
  calendar: CalendarColumns;
  risk: RiskColumns;
  rates: RateColumns;
}

/**
 * A series as the writer takes it: whole, or in parts whose concatenation is the
 * series. Parts let a build hand over what it already holds (each reader thread's
 * region; an append's old slices between the new rows) instead of a second full copy.
 */
export type SeriesInput = SeriesColumns | readonly SeriesColumns[];

/** What the writer takes: a snapshot's columns, the series possibly in parts. */
export interface ColumnsToWrite extends Omit<SnapshotColumns, 'series'> {
  series: SeriesInput;
}

export function seriesParts(series: SeriesInput): readonly SeriesColumns[] {
  return Array.isArray(series) ? series : [series as SeriesColumns];
}

/** Rows of a series, whole or in parts. */
export function seriesRows(series: SeriesInput): number {
  let n = 0;
  for (const p of seriesParts(series)) n += p.date.length;
  return n;
}

/**
 * Which of consecutive ranges holds `row`, given their starts in ascending order: the
 * last whose start is ≤ row (so an empty range, sharing its start with the next, is skipped).
 */
export function rangeOf(starts: Int32Array | readonly number[], row: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Fund i's metadata as a record (the snapshot's columns, one row). */
export function fundRecordAt(f: FundColumns, i: number): FundRecord {
  return {
    code: f.code[i],
    name: f.name[i],
    country: f.country[i],
    exchange: f.exchange[i],
    currency: f.currency[i],
    type: f.type[i],
    isin: f.isin[i],
    isInactive: f.isInactive[i] === 1,
    inactiveDate: f.inactiveDate[i] === NULL_DAY ? null : f.inactiveDate[i],
  };
}
