/**
 * Reader for one `prices/<Code>.csv` (C35) in any of the dialects that load as they
 * are: EODHD (`Adjusted_close`), Yahoo (`Adj Close`, maybe extra columns such as
 * `stock`) and yfinance's multi-row header. Bad rows are skipped and reported (C36);
 * the rest become the fund's series (C2).
 */
import { type Day, formatDay } from '../../core/dates.js';
import type { Problem, ProblemReason } from '../report/build-report.js';
import {
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
import { readHeaderRecord } from './header.js';

export interface PriceFileResult {
  /** Valid observations, ascending (length = count; may be a subarray of a larger buffer). */
  dates: Int32Array;
  /** Adjusted close per valid observation. */
  values: Float64Array;
  /**
   * Raw Close of the last valid observation (C37 needs it for daily appends); NaN when
   * the file has no Close column or that row's Close is unparsable, infinite or ≤ 0,
   * since such a value cannot be divided by.
   */
  lastClose: number;
  /** All non-blank data rows seen (valid + bad), for the C36 share. */
  dataRows: number;
  /** One per bad row: reason, file, 1-based line, code. */
  problems: Problem[];
}

const ADJ_NAMES = ['adjusted_close', 'adj close', 'adj_close', 'adjusted close', 'adjclose'];

interface Columns {
  date: number;
  adj: number;
  close: number;
}

/**
 * Column indices from the first header record, or the name of the missing required
 * column. yfinance writes `Price` over the date column and, in the dialect with no
 * `Adj Close` label, the adjusted close sits under a second, mislabelled `Price`
 * (data/real/SOURCES.md).
 */
function columnsOf(header: string[]): Columns | string {
  const h = normalizeHeader(header);
  const close = findColumn(h, 'close');
  if (h[0] === 'price') {
    let adj = findColumn(h, ...ADJ_NAMES);
    if (adj < 0) adj = h.indexOf('price', 1);
    return adj < 0 ? 'Adj Close' : { date: 0, adj, close };
  }
  const date = findColumn(h, 'date');
  if (date < 0) return 'Date';
  const adj = findColumn(h, ...ADJ_NAMES);
  if (adj < 0) return 'Adjusted_close';
  // Matched by name (C35): two columns of one name leave the price to chance.
  for (const [what, names] of [
    ['Date', ['date']],
    ['adjusted close', ADJ_NAMES],
    ['Close', ['close']],
  ] as const) {
    const found = header.filter((_, i) => (names as readonly string[]).includes(h[i]));
    if (found.length > 1) return `one ${what} column, not ${found.length} (${found.join(', ')})`;
  }
  return { date, adj, close };
}

let scratchDates = new Int32Array(1 << 14);
let scratchValues = new Float64Array(1 << 14);

function ensureScratch(rows: number): void {
  if (rows <= scratchDates.length) return;
  let cap = scratchDates.length;
  while (cap < rows) cap *= 2;
  scratchDates = new Int32Array(cap);
  scratchValues = new Float64Array(cap);
}

/** Who is read, and against what: one per file. */
interface PriceFileContext {
  bytes: Uint8Array;
  file: string;
  code: string;
  latest: Day;
  anySign: boolean;
  problems: Problem[];
}

/**
 * `latest` is the last date a row may carry (C36: today in UTC plus FUTURE_GRACE_DAYS);
 * by default read from the clock when the file is parsed. `anySign` reads a yield
 * file (C41): its values may be zero or negative, only not NaN or infinite.
 */
export function parsePriceFile(
  bytes: Uint8Array,
  file: string,
  code: string,
  latest: Day = latestAcceptedDay(),
  anySign = false,
): PriceFileResult {
  const problems: Problem[] = [];
  const r = new RecordReader(bytes);
  const header = readHeaderRecord(r, file, problems, code);
  if (header === null) return noSeries(problems, 0);
  const cols = columnsOf(header);
  if (typeof cols === 'string') {
    problems.push({ reason: 'missing_header_column', file, line: r.line, code, detail: cols });
    return noSeries(problems, rowsOfUnreadableFile(r, file, code, problems));
  }
  return readSeries(r, cols, { bytes, file, code, latest, anySign, problems });
}

function noSeries(problems: Problem[], dataRows: number): PriceFileResult {
  return { dates: new Int32Array(0), values: new Float64Array(0), lastClose: Number.NaN, dataRows, problems };
}

/**
 * The rows of a file whose header could not be read are data the build could not
 * read: skipped rows (C36), so that a source whose headers went wrong fails the
 * --max-bad-share bound instead of publishing without those funds.
 */
function rowsOfUnreadableFile(r: RecordReader, file: string, code: string, problems: Problem[]): number {
  let rows = 0;
  while (r.next()) {
    rows++;
    problems.push({ reason: 'row_in_unreadable_file', file, line: r.line, code });
  }
  return rows;
}

/**
 * Past the header record (and yfinance's further header rows) to the first data row.
 * Splits one field past the header so a long row shows as `count > headerFields`
 * without scanning the rest of its line.
 */
function firstDataRow(r: RecordReader, headerFields: number): boolean {
  const yfinance = r.fieldIs(0, 'price');
  r.limitFields(headerFields + 1);
  let have = r.next();
  if (yfinance) {
    while (have && r.fieldIs(0, 'ticker')) have = r.next();
    if (have && r.fieldIs(0, 'date')) have = r.next();
  }
  return have;
}

/** The series from the data rows (through the scratch), each bad row a problem (C36). */
function readSeries(r: RecordReader, cols: Columns, f: PriceFileContext): PriceFileResult {
  const { file, code, latest, anySign, problems } = f;
  // A data row with more fields than the header is misaligned, not "extra": an
  // unquoted thousands separator (`1,234.5`) or decimal comma (`10,5`) splits one
  // number in two, and reading the first half would give a wrong price (C36).
  const headerFields = r.count;
  const dateCol = cols.date;
  const adjCol = cols.adj;
  const closeCol = cols.close;
  // Every data row is at least `YYYY-MM-DD,d` plus a line end, so this bound never
  // overflows; the scratch is reused across files and the result copied out at its
  // exact length, so callers never keep an oversized buffer alive.
  ensureScratch(Math.floor(f.bytes.length / 12) + 1);
  const dates = scratchDates;
  const values = scratchValues;
  let n = 0;
  let prev = -0x3fffffff;
  let dataRows = 0;
  // The last valid row's Close, parsed once at the end rather than on every row.
  const close = new LastCell();
  for (let have = firstDataRow(r, headerFields); have; have = r.next()) {
    dataRows++;
    if (r.spanned > 0) {
      // Counted one each, so the bad-share bound sees them rather than a single bad row.
      dataRows += r.spanned;
      problems.push(...swallowedRows(r, 'multiline_row', file, code));
      continue;
    }
    if (r.count !== headerFields) {
      problems.push(fieldCountProblem(r, cols, headerFields, f));
      continue;
    }
    const src = r.src;
    const day = parseDateField(src, r.starts[dateCol], r.ends[dateCol]);
    const v = parseDecimal(src, r.starts[adjCol], r.ends[adjCol]);
    const reason = rowFault(day, v, prev, latest, anySign);
    if (reason !== null || day === null) {
      problems.push(faultProblem(reason ?? 'unparsable_date', r, cols, f));
      continue;
    }
    dates[n] = day;
    values[n] = v;
    n++;
    prev = day;
    close.keep(r, closeCol, f.bytes);
  }
  const lastClose = close.value();
  return { dates: dates.slice(0, n), values: values.slice(0, n), lastClose, dataRows, problems };
}

/**
 * Why a row with every field cannot join the series, or null when it can (C36): its
 * date, then its value, then its place after the row before.
 */
function rowFault(
  day: Day | null,
  v: number,
  prev: Day,
  latest: Day,
  anySign: boolean,
): ProblemReason | null {
  if (day === null) return 'unparsable_date';
  if (day > latest) return 'future_date';
  // NaN or +Infinity (an overflowing exponent is as unusable as `Infinity`).
  if (!(v <= 0) && !(v < Number.POSITIVE_INFINITY)) return 'unparsable_price';
  if (v <= 0 && !(anySign && v > Number.NEGATIVE_INFINITY)) return 'non_positive_price';
  if (day <= prev) return day === prev ? 'duplicate_date' : 'out_of_order_date';
  return null;
}

/** The problem of a row whose rowFault is `reason`, quoting the cell at fault. */
function faultProblem(reason: ProblemReason, r: RecordReader, cols: Columns, f: PriceFileContext): Problem {
  const { file, code, latest } = f;
  const dateCell = excerpt(r.src, r.starts[cols.date], r.ends[cols.date]);
  const detail =
    reason === 'future_date'
      ? `${dateCell} is after ${formatDay(latest)}, today + ${FUTURE_GRACE_DAYS} days of grace`
      : reason === 'unparsable_price' || reason === 'non_positive_price'
        ? excerpt(r.src, r.starts[cols.adj], r.ends[cols.adj])
        : dateCell;
  return { reason, file, line: r.line, code, detail };
}

/** The problem of a row with more or fewer fields than the header. */
function fieldCountProblem(
  r: RecordReader,
  cols: Columns,
  headerFields: number,
  f: PriceFileContext,
): Problem {
  // Fields a row must have; Close is optional per row (it only feeds lastClose).
  const needed = Math.max(cols.date, cols.adj) + 1;
  const { file, code } = f;
  const line = r.line;
  if (r.count < needed) {
    return { reason: 'short_row', file, line, code, detail: `${r.count} field${r.count === 1 ? '' : 's'}` };
  }
  if (r.count < headerFields) {
    // Every needed field is there, but the row stops early: a file cut off mid-line
    // (an upload that did not finish) leaves its last price cut too, read as another.
    return {
      reason: 'short_row',
      file,
      line,
      code,
      detail: `${r.count} of the header's ${headerFields} fields (cut short?)`,
    };
  }
  return { reason: 'long_row', file, line, code, detail: `more fields than the header's ${headerFields}` };
}

/** Where the last accepted row's Close cell is, parsed once when the file is done. */
class LastCell {
  #src: Uint8Array | null = null;
  #from = 0;
  #to = 0;

  /** Remember row `r`'s cell `col` (forgotten when the row has none). */
  keep(r: RecordReader, col: number, bytes: Uint8Array): void {
    if (col < 0 || col >= r.count) {
      this.#src = null;
      return;
    }
    const src = r.src;
    // A quoted record lives in a scratch buffer the next record overwrites.
    this.#src = src === bytes ? bytes : src.slice(r.starts[col], r.ends[col]);
    this.#from = src === bytes ? r.starts[col] : 0;
    this.#to = src === bytes ? r.ends[col] : r.ends[col] - r.starts[col];
  }

  /** The cell's positive, finite number, else NaN (C37: a last close is divided by). */
  value(): number {
    if (this.#src === null) return Number.NaN;
    const c = parseDecimal(this.#src, this.#from, this.#to);
    return c > 0 && c < Number.POSITIVE_INFINITY ? c : Number.NaN;
  }
}
