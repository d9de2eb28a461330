/**
 * Reader for a daily update `daily/<YYYY-MM-DD>.csv` (C37): one row per fund and day
 * with the raw Close, Dividend and Split that make the day's growth factor. The row's
 * own Date counts; Adjusted_close is ignored. Whether a row extends a fund's series
 * (or is stale, or names an unknown fund) is decided by the append step, not here.
 */
import { type Day, formatDay } from '../../core/dates.js';
import type { Problem } from '../report/build-report.js';
import {
  csvCell,
  excerpt,
  FUTURE_GRACE_DAYS,
  findColumn,
  latestAcceptedDay,
  normalizeHeader,
  parseDateField,
  parseDecimal,
  RecordReader,
  swallowedRows,
} from './csv.js';
import { badCodeReason } from './funds.js';

/**
 * The columns a daily file is written with (C37; the reader matches them by name).
 * Adjusted_close, which the reader ignores, is left out by a writer that has none
 * (a refresh's record of what it applied).
 */
const DAILY_COLUMNS = ['Code', 'Date', 'Close', 'Adjusted_close', 'Dividend', 'Split'] as const;

/** The header line of a daily file, with or without Adjusted_close. */
export function dailyHeader(adjusted: boolean): string {
  return `${DAILY_COLUMNS.filter((c) => adjusted || c !== 'Adjusted_close').join(',')}\n`;
}

/** The header of a daily file with all its columns, as providers deliver it. */
export const DAILY_HEADER = dailyHeader(true);

/** A daily row's cells as text; '' is a blank cell (no dividend, no split). */
export interface DailyLine {
  readonly code: string;
  readonly date: string;
  readonly close: string;
  /** Undefined under dailyHeader(false): the cell is left out. */
  readonly adjClose?: string;
  readonly dividend: string;
  readonly split: string;
}

/** One line of a daily file, under the header its adjClose says: parseDailyFile reads back the same cells. */
export function dailyLine(r: DailyLine): string {
  const adj = r.adjClose === undefined ? '' : `${csvCell(r.adjClose)},`;
  return `${csvCell(r.code)},${csvCell(r.date)},${csvCell(r.close)},${adj}${csvCell(r.dividend)},${csvCell(r.split)}\n`;
}

/** A dividend's cell: blank for none, as the reader takes a blank one for 0. */
export function dividendCell(dividend: number): string {
  return dividend === 0 ? '' : String(dividend);
}

/** A split's cell: blank for none, as the reader takes a blank one for 1. */
export function splitCell(split: number): string {
  return split === 1 ? '' : String(split);
}

/** Valid daily rows as parallel arrays, in file order. */
export interface DailyRows {
  codes: string[];
  dates: Int32Array;
  close: Float64Array;
  /** 0 when the cell was blank. */
  dividend: Float64Array;
  /** 1 when the cell was blank. */
  split: Float64Array;
  /** 1-based line of each row, for later reports (stale rows, unknown funds). */
  lines: Int32Array;
  length: number;
}

export interface DailyFileResult {
  rows: DailyRows;
  /** All non-blank data rows seen (valid + bad), for the C36 share. */
  dataRows: number;
  problems: Problem[];
}

/**
 * `latest` is the last date a row may carry (C36: today in UTC plus FUTURE_GRACE_DAYS);
 * by default read from the clock when the file is parsed. A refresh passes the last
 * closed session, and `latestIs` says so in the rows' reports.
 */
export function parseDailyFile(
  bytes: Uint8Array,
  file: string,
  latest: Day = latestAcceptedDay(),
  latestIs = `today + ${FUTURE_GRACE_DAYS} days of grace`,
): DailyFileResult {
  const problems: Problem[] = [];
  const codes: string[] = [];
  const dates: number[] = [];
  const close: number[] = [];
  const dividend: number[] = [];
  const split: number[] = [];
  const lines: number[] = [];
  let dataRows = 0;
  const finish = (): DailyFileResult => ({
    rows: {
      codes,
      dates: Int32Array.from(dates),
      close: Float64Array.from(close),
      dividend: Float64Array.from(dividend),
      split: Float64Array.from(split),
      lines: Int32Array.from(lines),
      length: codes.length,
    },
    dataRows,
    problems,
  });

  const r = new RecordReader(bytes);
  if (!r.next()) {
    problems.push({ reason: 'missing_header_column', file, line: 1, detail: 'empty file' });
    return finish();
  }
  const h = normalizeHeader(r.texts());
  const headerFields = h.length;
  const codeCol = findColumn(h, 'code');
  const dateCol = findColumn(h, 'date');
  const closeCol = findColumn(h, 'close');
  const divCol = findColumn(h, 'dividend');
  const splitCol = findColumn(h, 'split');
  const missing = [codeCol < 0 ? 'Code' : '', dateCol < 0 ? 'Date' : '', closeCol < 0 ? 'Close' : ''].filter(
    (s) => s !== '',
  );
  if (missing.length > 0) {
    problems.push({ reason: 'missing_header_column', file, line: r.line, detail: missing.join(', ') });
    return finish();
  }
  const needed = Math.max(codeCol, dateCol, closeCol) + 1;

  while (r.next()) {
    dataRows++;
    const line = r.line;
    const src = r.src;
    const bad = (detail: string, code?: string): void => {
      problems.push(
        code === undefined
          ? { reason: 'daily_bad_row', file, line, detail }
          : { reason: 'daily_bad_row', file, line, code, detail },
      );
    };
    if (r.spanned > 0) {
      dataRows += r.spanned;
      problems.push(...swallowedRows(r, 'daily_bad_row', file));
      continue;
    }
    if (r.count < headerFields) {
      // Even with Code, Date and Close in, a row that stops early is a file cut off
      // mid-line: its Close may be cut too, and would become the fund's last close (C37).
      bad(
        `short row: ${r.count} of the header's ${headerFields} fields${r.count >= needed ? ' (cut short?)' : ''}`,
      );
      continue;
    }
    if (r.count > headerFields) {
      // An unquoted `1,234.5` or `10,5` splits a number and shifts every later cell (C36).
      bad(`long row: ${r.count} fields, more than the header's ${headerFields}`);
      continue;
    }
    const code = r.text(codeCol);
    const codeReason = badCodeReason(code);
    if (codeReason !== null) {
      bad(codeReason);
      continue;
    }
    const field = (i: number): string => excerpt(src, r.starts[i], r.ends[i]);
    const day = parseDateField(src, r.starts[dateCol], r.ends[dateCol]);
    if (day === null) {
      bad(`unparsable date ${JSON.stringify(field(dateCol))}`, code);
      continue;
    }
    if (day > latest) {
      // Accepted, it would freeze the fund: every real row after it is stale (C36, C37).
      bad(`dated ${formatDay(day)}, after ${formatDay(latest)}, ${latestIs}`, code);
      continue;
    }
    const c = parseDecimal(src, r.starts[closeCol], r.ends[closeCol]);
    if (!(c > 0 && c < Number.POSITIVE_INFINITY)) {
      bad(`Close ${JSON.stringify(field(closeCol))} is not a positive number`, code);
      continue;
    }
    // Absent cells (no column, or a row that stops early) read as blank.
    const has = (i: number): boolean => i >= 0 && i < r.count && r.ends[i] > r.starts[i];
    let div = 0;
    if (has(divCol)) {
      div = parseDecimal(src, r.starts[divCol], r.ends[divCol]);
      if (!(div >= 0 && div < Number.POSITIVE_INFINITY)) {
        bad(`Dividend ${JSON.stringify(field(divCol))} is not a number ≥ 0`, code);
        continue;
      }
      div += 0; // -0 → 0
    }
    let sp = 1;
    if (has(splitCol)) {
      sp = parseDecimal(src, r.starts[splitCol], r.ends[splitCol]);
      if (!(sp > 0 && sp < Number.POSITIVE_INFINITY)) {
        bad(`Split ${JSON.stringify(field(splitCol))} is not a number > 0`, code);
        continue;
      }
    }
    codes.push(code);
    dates.push(day);
    close.push(c);
    dividend.push(div);
    split.push(sp);
    lines.push(line);
  }
  return finish();
}
