/**
 * The on-disk snapshot format (version 1). Column types are chosen so that pandas,
 * DuckDB and Polars users get natural types (dates as date32, figures as float64
 * with real nulls), and so that every numeric column the server reads maps 1:1 onto
 * a typed array: Int32/Date32 → Int32Array, Float64 → Float64Array. Nullable
 * Float64 columns carry a validity bitmap AND NaN in the data slot, nullable Date32
 * columns NULL_DAY, so the raw buffer is usable without looking at the bitmap.
 */
import { Bool, type DataType, DateDay, Field, Float64, Int32, Schema, Utf8 } from 'apache-arrow';
import { RISK_WINDOW_KEYS, STORED_DATES, STORED_FIGURES } from '../risk.js';
import { TRAILING_KEYS } from '../types.js';

/**
 * The version the writer writes. Bump on any change an older reader would misread.
 * 2: risk.arrow and rates.arrow.
 */
export const FORMAT_VERSION = 2;
/**
 * The versions the reader reads; others it refuses. Format 1 is read so that servers
 * can be upgraded before the machine that builds (format-1.ts).
 */
export const READ_VERSIONS: readonly number[] = [1, FORMAT_VERSION];

export const FUNDS_FILE = 'funds.arrow';
export const SERIES_FILE = 'series.arrow';
export const TRAILING_FILE = 'trailing.arrow';
export const CALENDAR_FILE = 'calendar.arrow';
export const RISK_FILE = 'risk.arrow';
export const RATES_FILE = 'rates.arrow';
export const MANIFEST_FILE = 'manifest.json';

/** The Arrow files of a snapshot, in the order they are written and listed in the manifest. */
export const ARROW_FILES = [
  FUNDS_FILE,
  SERIES_FILE,
  TRAILING_FILE,
  CALENDAR_FILE,
  RISK_FILE,
  RATES_FILE,
] as const;
export type ArrowFileName = (typeof ARROW_FILES)[number];

/** The files a snapshot of format `version` lists in its manifest (one of READ_VERSIONS). */
export function arrowFilesOf(version: number): readonly ArrowFileName[] {
  return version === 1 ? ARROW_FILES.slice(0, 4) : ARROW_FILES;
}

function field(name: string, type: DataType, nullable: boolean): Field {
  return new Field(name, type, nullable);
}

export const FUNDS_SCHEMA = new Schema([
  field('code', new Utf8(), false),
  field('name', new Utf8(), true),
  field('country', new Utf8(), true),
  field('exchange', new Utf8(), true),
  field('currency', new Utf8(), true),
  field('type', new Utf8(), false),
  field('isin', new Utf8(), true),
  field('is_inactive', new Bool(), false),
  field('inactive_date', new DateDay(), true),
  // Redundant with the series, but lets a data tool filter funds by coverage without a join.
  field('min_return_date', new DateDay(), false),
  field('max_return_date', new DateDay(), false),
  field('series_offset', new Int32(), false),
  field('series_length', new Int32(), false),
  field('last_close', new Float64(), true),
]);

export const SERIES_SCHEMA = new Schema([
  field('date', new DateDay(), false),
  field('value', new Float64(), false),
]);

export const TRAILING_SCHEMA = new Schema([
  field('code', new Utf8(), false),
  field('as_of_date', new DateDay(), false),
  ...TRAILING_KEYS.map((k) => field(k, new Float64(), true)),
]);

export const CALENDAR_SCHEMA = new Schema([
  field('code', new Utf8(), false),
  // Row index into funds.arrow, redundant with `code`: it lets the server view the
  // column in shared memory instead of re-deriving it from strings in every thread.
  field('fund_index', new Int32(), false),
  field('year', new Int32(), false),
  field('total_return', new Float64(), true),
  field('start_date', new DateDay(), false),
  field('end_date', new DateDay(), false),
  field('is_partial', new Bool(), false),
]);

export const RISK_SCHEMA = new Schema([
  field('code', new Utf8(), false),
  // First day of E, the month the windows end with (C39); the anchor is trailing.arrow's as_of_date.
  field('end_month', new DateDay(), false),
  ...RISK_WINDOW_KEYS.flatMap((w) => [
    ...STORED_FIGURES.map((f) => field(`${f}_${w}`, new Float64(), true)),
    // best/worst_month_date: the first day of that month.
    ...STORED_DATES.map((d) => field(`${d}_${w}`, new DateDay(), true)),
  ]),
]);

/** The 3-month T-bill yield in percent by date (C41); no rows when the source has no rates file. */
export const RATES_SCHEMA = new Schema([
  field('date', new DateDay(), false),
  field('yield', new Float64(), false),
]);

export const SCHEMAS: Record<ArrowFileName, Schema> = {
  [FUNDS_FILE]: FUNDS_SCHEMA,
  [SERIES_FILE]: SERIES_SCHEMA,
  [TRAILING_FILE]: TRAILING_SCHEMA,
  [CALENDAR_FILE]: CALENDAR_SCHEMA,
  [RISK_FILE]: RISK_SCHEMA,
  [RATES_FILE]: RATES_SCHEMA,
};
