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
  latestAcceptedDay,
  parseDateField,
  parseDecimal,
  RecordReader,
  swallowedRows,
} from './csv.js';
import { badCodeReason } from './funds.js';
import { type HeaderColumns, readColumns } from './header.js';

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

/** The daily file's columns the reader looks up (C37), by the names it is written with. */
const READ_COLUMNS = {
  code: 'Code',
  date: 'Date',
  close: 'Close',
  dividend: 'Dividend',
  split: 'Split',
} as const;

type DailyHeader = HeaderColumns<keyof typeof READ_COLUMNS>;

/** Who is read, and against what: one per file. */
interface DailyFileContext {
  file: string;
  latest: Day;
  latestIs: string;
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
  const rows = new DailyRowsBuilder();
  let dataRows = 0;
  const r = new RecordReader(bytes);
  const header = readColumns(r, file, problems, READ_COLUMNS, ['code', 'date', 'close']);
  if (header !== null) {
    const f: DailyFileContext = { file, latest, latestIs };
    while (r.next()) {
      dataRows++;
      if (r.spanned > 0) {
        dataRows += r.spanned;
        problems.push(...swallowedRows(r, 'daily_bad_row', file));
        continue;
      }
      const problem = readDailyRow(r, header, f, rows);
      if (problem !== null) problems.push(problem);
    }
  }
  return { rows: rows.done(), dataRows, problems };
}

/** Adds row `r` to `rows` when it is valid, else returns its daily_bad_row problem. */
function readDailyRow(
  r: RecordReader,
  h: DailyHeader,
  f: DailyFileContext,
  rows: DailyRowsBuilder,
): Problem | null {
  const { code: codeCol, date: dateCol, close: closeCol } = h.at;
  if (r.count !== h.fields) return badRow(f, r.line, fieldCountDetail(r.count, h));
  const code = r.text(codeCol);
  const codeReason = badCodeReason(code);
  if (codeReason !== null) return badRow(f, r.line, codeReason);
  const src = r.src;
  const day = parseDateField(src, r.starts[dateCol], r.ends[dateCol]);
  if (day === null) return badRow(f, r.line, `unparsable date ${quotedCell(r, dateCol)}`, code);
  if (day > f.latest) {
    // Accepted, it would freeze the fund: every real row after it is stale (C36, C37).
    return badRow(f, r.line, `dated ${formatDay(day)}, after ${formatDay(f.latest)}, ${f.latestIs}`, code);
  }
  const c = parseDecimal(src, r.starts[closeCol], r.ends[closeCol]);
  if (!(c > 0 && c < Number.POSITIVE_INFINITY)) {
    return badRow(f, r.line, `Close ${quotedCell(r, closeCol)} is not a positive number`, code);
  }
  const div = optionalNumber(r, h.at.dividend, 0);
  if (!(div >= 0 && div < Number.POSITIVE_INFINITY)) {
    return badRow(f, r.line, `Dividend ${quotedCell(r, h.at.dividend)} is not a number ≥ 0`, code);
  }
  const sp = optionalNumber(r, h.at.split, 1);
  if (!(sp > 0 && sp < Number.POSITIVE_INFINITY)) {
    return badRow(f, r.line, `Split ${quotedCell(r, h.at.split)} is not a number > 0`, code);
  }
  rows.push(code, day, c, div + 0, sp, r.line); // div + 0: -0 → 0
  return null;
}

function badRow(f: DailyFileContext, line: number, detail: string, code?: string): Problem {
  return code === undefined
    ? { reason: 'daily_bad_row', file: f.file, line, detail }
    : { reason: 'daily_bad_row', file: f.file, line, code, detail };
}

function fieldCountDetail(count: number, h: DailyHeader): string {
  if (count < h.fields) {
    // Even with Code, Date and Close in, a row that stops early is a file cut off
    // mid-line: its Close may be cut too, and would become the fund's last close (C37).
    const needed = Math.max(h.at.code, h.at.date, h.at.close) + 1;
    return `short row: ${count} of the header's ${h.fields} fields${count >= needed ? ' (cut short?)' : ''}`;
  }
  // An unquoted `1,234.5` or `10,5` splits a number and shifts every later cell (C36).
  return `long row: ${count} fields, more than the header's ${h.fields}`;
}

function quotedCell(r: RecordReader, col: number): string {
  return JSON.stringify(excerpt(r.src, r.starts[col], r.ends[col]));
}

/** Cell `col` as a number; `blank` when it is absent (no column, or a row that stops early) or blank. */
function optionalNumber(r: RecordReader, col: number, blank: number): number {
  if (col < 0 || col >= r.count || r.ends[col] <= r.starts[col]) return blank;
  return parseDecimal(r.src, r.starts[col], r.ends[col]);
}

/** The valid rows as they come, made into DailyRows' typed arrays at the end. */
class DailyRowsBuilder {
  readonly #codes: string[] = [];
  readonly #dates: number[] = [];
  readonly #close: number[] = [];
  readonly #dividend: number[] = [];
  readonly #split: number[] = [];
  readonly #lines: number[] = [];

  push(code: string, day: Day, close: number, dividend: number, split: number, line: number): void {
    this.#codes.push(code);
    this.#dates.push(day);
    this.#close.push(close);
    this.#dividend.push(dividend);
    this.#split.push(split);
    this.#lines.push(line);
  }

  done(): DailyRows {
    return {
      codes: this.#codes,
      dates: Int32Array.from(this.#dates),
      close: Float64Array.from(this.#close),
      dividend: Float64Array.from(this.#dividend),
      split: Float64Array.from(this.#split),
      lines: Int32Array.from(this.#lines),
      length: this.#codes.length,
    };
  }
}
