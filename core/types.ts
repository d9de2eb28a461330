/**
 * Shapes that builder and server must agree on: a fund's metadata record, the
 * order of trailing-return figures, and one calendar-year row. Return figures are
 * carried as unrounded percent doubles, NaN meaning null; C1 formatting happens
 * only at the edge (core/format.ts).
 */
import type { Day } from './dates.js';

export type FundType = 'ETF' | 'FUND';

/** One row of funds.csv after validation (C35, C36, C17). */
export interface FundRecord {
  readonly code: string;
  readonly name: string | null;
  readonly country: string | null;
  readonly exchange: string | null;
  readonly currency: string | null;
  readonly type: FundType;
  readonly isin: string | null;
  readonly isInactive: boolean;
  readonly inactiveDate: Day | null;
}

/**
 * Every trailing figure a row carries, in the order they are stored and served.
 * The first 16 are top-level TrailingReturns fields (SPEC 2); the last 4 are the
 * keys of `extra_returns` (C8).
 */
export const TRAILING_KEYS = [
  'return_1d',
  'return_1w',
  'return_1m',
  'return_3m',
  'return_6m',
  'return_ytd',
  'return_1y',
  'return_2y',
  'return_3y',
  'return_4y',
  'return_5y',
  'return_7y',
  'return_10y',
  'return_15y',
  'return_20y',
  'return_earliest_available',
  'return_mtd',
  'return_qtd',
  'return_25y',
  'return_30y',
] as const;

export type TrailingKey = (typeof TRAILING_KEYS)[number];

/** How many of TRAILING_KEYS are top-level fields; the rest live in extra_returns. */
export const TOP_LEVEL_TRAILING = 16;

/** A trailing row: anchor date plus one percent figure per TRAILING_KEYS entry (NaN = null). */
export interface TrailingFigures {
  readonly asOf: Day;
  readonly values: Float64Array;
}

/** One calendar-year row (C9–C11); totalReturn is an unrounded percent, NaN = null. */
export interface CalendarFigures {
  readonly year: number;
  readonly totalReturn: number;
  readonly startDate: Day;
  readonly endDate: Day;
  readonly isPartial: boolean;
}

/** A fund's observations: dates ascending (C2), values a total-return index. */
export interface Series {
  readonly date: Int32Array;
  readonly value: Float64Array;
  /** First index of this fund in the arrays. */
  readonly start: number;
  /** Number of observations (≥ 1 in a snapshot). */
  readonly length: number;
}
