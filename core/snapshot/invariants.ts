/**
 * The invariants every snapshot's columns satisfy. The writer checks them on its
 * input (a bad build must fail before anything is published) and the reader on what
 * it loaded (a file can be hand-made, truncated or written by a buggy build that
 * still hashed correctly). The series loops run over 100M rows on every load, so
 * they are kept to tight loops over typed arrays.
 */
import { compareCodes } from '../codes.js';
import { formatDay } from '../dates.js';
import { RISK_COLUMN_NAMES, RISK_WINDOWS, STORED_DATES } from '../risk.js';
import { TRAILING_KEYS } from '../types.js';
import { type ColumnsToWrite, rangeOf, seriesParts } from './columns.js';
import { CALENDAR_FILE, FUNDS_FILE, RATES_FILE, RISK_FILE, SERIES_FILE, TRAILING_FILE } from './schema.js';
import { SnapshotError } from './snapshot-error.js';

function violated(file: string, reason: string): SnapshotError {
  return new SnapshotError('INVARIANT_VIOLATED', reason, file);
}

/** Kept under its old name for the snapshot API; the rule lives in core/codes.ts. */
export const compareUtf8 = compareCodes;

const LONE_SURROGATE = /\p{Cs}/u;

function checkLength(file: string, column: string, actual: number, expected: number): void {
  if (actual !== expected) throw violated(file, `column ${column} has ${actual} rows, expected ${expected}`);
}

function isNullableString(v: unknown): boolean {
  return v === null || typeof v === 'string';
}

/** Throws SnapshotError('INVARIANT_VIOLATED') naming the file, column and row at fault. */
export function checkColumns(cols: ColumnsToWrite): void {
  const { funds } = cols;
  const F = funds.length;
  if (!Number.isSafeInteger(F) || F < 1)
    throw violated(FUNDS_FILE, `fund count ${F} is not a positive integer`);
  checkLength(FUNDS_FILE, 'code', funds.code.length, F);
  checkLength(FUNDS_FILE, 'name', funds.name.length, F);
  checkLength(FUNDS_FILE, 'country', funds.country.length, F);
  checkLength(FUNDS_FILE, 'exchange', funds.exchange.length, F);
  checkLength(FUNDS_FILE, 'currency', funds.currency.length, F);
  checkLength(FUNDS_FILE, 'type', funds.type.length, F);
  checkLength(FUNDS_FILE, 'isin', funds.isin.length, F);
  checkLength(FUNDS_FILE, 'is_inactive', funds.isInactive.length, F);
  checkLength(FUNDS_FILE, 'inactive_date', funds.inactiveDate.length, F);
  checkLength(FUNDS_FILE, 'series_offset', funds.seriesOffset.length, F);
  checkLength(FUNDS_FILE, 'series_length', funds.seriesLength.length, F);
  checkLength(FUNDS_FILE, 'last_close', funds.lastClose.length, F);

  for (let i = 0; i < F; i++) {
    const code = funds.code[i];
    if (typeof code !== 'string' || code.length === 0) throw violated(FUNDS_FILE, `row ${i}: code is empty`);
    if (LONE_SURROGATE.test(code)) throw violated(FUNDS_FILE, `row ${i}: code is not valid Unicode`);
    if (i > 0 && compareUtf8(funds.code[i - 1], code) >= 0) {
      throw violated(
        FUNDS_FILE,
        `row ${i}: code ${JSON.stringify(code)} does not sort strictly after ${JSON.stringify(funds.code[i - 1])} (codes must be unique, in byte order)`,
      );
    }
    const t = funds.type[i];
    if (t !== 'ETF' && t !== 'FUND')
      throw violated(FUNDS_FILE, `row ${i} (${code}): type ${JSON.stringify(t)} is not ETF or FUND`);
    if (
      !isNullableString(funds.name[i]) ||
      !isNullableString(funds.country[i]) ||
      !isNullableString(funds.exchange[i]) ||
      !isNullableString(funds.currency[i]) ||
      !isNullableString(funds.isin[i])
    ) {
      throw violated(FUNDS_FILE, `row ${i} (${code}): a text field is neither a string nor null`);
    }
    if (funds.isInactive[i] > 1) throw violated(FUNDS_FILE, `row ${i} (${code}): is_inactive is not 0 or 1`);
    const close = funds.lastClose[i];
    if (!Number.isNaN(close) && !(close > 0 && close < Number.POSITIVE_INFINITY)) {
      throw violated(FUNDS_FILE, `row ${i} (${code}): last_close ${close} is neither null nor finite > 0`);
    }
  }

  checkSeries(cols);
  checkRisk(cols);
  checkTrailing(cols);
  checkCalendar(cols);
}

function checkSeries({ funds, series }: ColumnsToWrite): void {
  const parts = seriesParts(series);
  let n = 0;
  for (const p of parts) {
    if (p.value.length !== p.date.length) {
      throw violated(
        SERIES_FILE,
        parts.length === 1
          ? `date has ${p.date.length} rows but value has ${p.value.length}`
          : `a part of the series has ${p.date.length} dates but ${p.value.length} values`,
      );
    }
    n += p.date.length;
  }
  const offsets = funds.seriesOffset;
  const lengths = funds.seriesLength;
  // A cursor over the parts: funds are contiguous and in order, so it only moves forward.
  let part = 0;
  let at = 0;
  let expected = 0;
  for (let i = 0; i < funds.length; i++) {
    const off = offsets[i];
    const len = lengths[i];
    if (off !== expected) {
      throw violated(
        FUNDS_FILE,
        `fund ${i} (${funds.code[i]}): series_offset ${off}, expected ${expected} (offsets must be contiguous and in fund order)`,
      );
    }
    if (len < 1) throw violated(FUNDS_FILE, `fund ${i} (${funds.code[i]}): series_length ${len} < 1`);
    const end = off + len;
    if (end > n) {
      throw violated(
        FUNDS_FILE,
        `fund ${i} (${funds.code[i]}): series ends at row ${end}, past the ${n} series rows`,
      );
    }
    let prev = Number.NEGATIVE_INFINITY;
    let j = off;
    while (j < end) {
      while (at === parts[part].date.length) {
        part++;
        at = 0;
      }
      const date = parts[part].date;
      const stop = Math.min(date.length, at + end - j);
      for (; at < stop; at++, j++) {
        const d = date[at];
        if (d <= prev) {
          throw violated(
            SERIES_FILE,
            `fund ${i} (${funds.code[i]}) row ${j}: date ${formatDay(d)} is not after ${formatDay(prev)}`,
          );
        }
        prev = d;
      }
    }
    expected = end;
  }
  if (expected !== n) throw violated(SERIES_FILE, `funds cover ${expected} rows but the series has ${n}`);
  let row = 0;
  for (const { value } of parts) {
    for (let j = 0; j < value.length; j++) {
      const v = value[j];
      // Written so that NaN fails too.
      if (!(v > 0 && v < Number.POSITIVE_INFINITY)) {
        throw violated(
          SERIES_FILE,
          `row ${row + j} (${fundOfRow(funds.seriesOffset, row + j, funds.code)}): value ${v} is not finite > 0`,
        );
      }
    }
    row += value.length;
  }
}

function fundOfRow(offsets: Int32Array, row: number, codes: string[]): string {
  const f = rangeOf(offsets, row);
  return `fund ${f} ${codes[f]}`;
}

function checkNullableFigures(file: string, column: string, a: Float64Array): void {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY) {
      throw violated(file, `column ${column} row ${i}: ${v} is neither null (NaN) nor finite`);
    }
  }
}

function checkTrailing({ funds, trailing }: ColumnsToWrite): void {
  const F = funds.length;
  checkLength(TRAILING_FILE, 'as_of_date', trailing.asOf.length, F);
  if (trailing.values.length !== TRAILING_KEYS.length) {
    throw violated(
      TRAILING_FILE,
      `${trailing.values.length} figure columns, expected ${TRAILING_KEYS.length}`,
    );
  }
  for (let k = 0; k < TRAILING_KEYS.length; k++) {
    checkLength(TRAILING_FILE, TRAILING_KEYS[k], trailing.values[k].length, F);
    checkNullableFigures(TRAILING_FILE, TRAILING_KEYS[k], trailing.values[k]);
  }
}

function checkCalendar({ funds, calendar }: ColumnsToWrite): void {
  const n = calendar.length;
  if (!Number.isSafeInteger(n) || n < 0)
    throw violated(CALENDAR_FILE, `row count ${n} is not an integer ≥ 0`);
  checkLength(CALENDAR_FILE, 'fund_index', calendar.fund.length, n);
  checkLength(CALENDAR_FILE, 'year', calendar.year.length, n);
  checkLength(CALENDAR_FILE, 'total_return', calendar.totalReturn.length, n);
  checkLength(CALENDAR_FILE, 'start_date', calendar.startDate.length, n);
  checkLength(CALENDAR_FILE, 'end_date', calendar.endDate.length, n);
  checkLength(CALENDAR_FILE, 'is_partial', calendar.isPartial.length, n);
  const F = funds.length;
  const { fund, year, startDate, endDate, isPartial } = calendar;
  let prevFund = -1;
  let prevYear = 0;
  for (let i = 0; i < n; i++) {
    const f = fund[i];
    const y = year[i];
    if (f < 0 || f >= F) throw violated(CALENDAR_FILE, `row ${i}: fund index ${f} is outside 0..${F - 1}`);
    if (f < prevFund || (f === prevFund && y <= prevYear)) {
      throw violated(
        CALENDAR_FILE,
        `row ${i} (${funds.code[f]} ${y}): rows must be sorted by (fund, year) without repeats`,
      );
    }
    if (startDate[i] > endDate[i]) {
      throw violated(CALENDAR_FILE, `row ${i} (${funds.code[f]} ${y}): start_date is after end_date`);
    }
    if (isPartial[i] > 1)
      throw violated(CALENDAR_FILE, `row ${i} (${funds.code[f]} ${y}): is_partial is not 0 or 1`);
    prevFund = f;
    prevYear = y;
  }
  checkNullableFigures(CALENDAR_FILE, 'total_return', calendar.totalReturn);
}

/** The snapshot's as_of: the latest last-observation date over all funds. */
export function maxLastDate(cols: ColumnsToWrite): number {
  const last = lastDates(cols);
  let max = -2147483648;
  for (let i = 0; i < last.length; i++) if (last[i] > max) max = last[i];
  return max;
}

/** Each fund's first observation date (min_return_date). */
export function firstDates(cols: ColumnsToWrite): Int32Array {
  return datesAt(cols, 0);
}

/** Each fund's last observation date (max_return_date). */
export function lastDates(cols: ColumnsToWrite): Int32Array {
  return datesAt(cols, 1);
}

/** The date of each fund's first row (fromEnd 0) or last row (fromEnd 1), wherever its part. */
function datesAt(cols: ColumnsToWrite, fromEnd: 0 | 1): Int32Array {
  const { seriesOffset, seriesLength } = cols.funds;
  const parts = seriesParts(cols.series);
  const out = new Int32Array(seriesOffset.length);
  if (parts.length === 1) {
    const date = parts[0].date;
    for (let i = 0; i < out.length; i++) out[i] = date[seriesOffset[i] + (seriesLength[i] - 1) * fromEnd];
    return out;
  }
  const starts = new Int32Array(parts.length);
  for (let p = 1; p < parts.length; p++) starts[p] = starts[p - 1] + parts[p - 1].date.length;
  for (let i = 0; i < out.length; i++) {
    const row = seriesOffset[i] + (seriesLength[i] - 1) * fromEnd;
    const p = rangeOf(starts, row);
    out[i] = parts[p].date[row - starts[p]];
  }
  return out;
}

/** risk.arrow has one row per fund in every column; rates.arrow's dates ascend and its yields are finite (C41). */
function checkRisk(cols: ColumnsToWrite): void {
  const F = cols.funds.length;
  const { risk, rates } = cols;
  checkLength(RISK_FILE, 'end_month', risk.endMonth.length, F);
  if (
    risk.figures.length !== RISK_COLUMN_NAMES.length ||
    risk.dates.length !== RISK_WINDOWS.length * STORED_DATES.length
  )
    throw violated(
      RISK_FILE,
      `${risk.figures.length} figure and ${risk.dates.length} date columns, expected ${RISK_COLUMN_NAMES.length} and ${RISK_WINDOWS.length * STORED_DATES.length}`,
    );
  for (let j = 0; j < risk.figures.length; j++)
    checkLength(RISK_FILE, RISK_COLUMN_NAMES[j], risk.figures[j].length, F);
  for (let j = 0; j < risk.dates.length; j++)
    checkLength(RISK_FILE, `date column ${j}`, risk.dates[j].length, F);
  checkLength(RATES_FILE, 'yield', rates.yield.length, rates.date.length);
  for (let i = 0; i < rates.date.length; i++) {
    if (i > 0 && rates.date[i] <= rates.date[i - 1])
      throw violated(
        RATES_FILE,
        `row ${i}: date ${formatDay(rates.date[i])} is not after ${formatDay(rates.date[i - 1])}`,
      );
    if (!Number.isFinite(rates.yield[i]))
      throw violated(RATES_FILE, `row ${i}: yield ${rates.yield[i]} is not finite`);
  }
}
