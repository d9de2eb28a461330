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
  const empty: PriceFileResult = {
    dates: new Int32Array(0),
    values: new Float64Array(0),
    lastClose: Number.NaN,
    dataRows: 0,
    problems,
  };

  const r = new RecordReader(bytes);
  if (!r.next()) {
    problems.push({ reason: 'missing_header_column', file, line: 1, code, detail: 'empty file' });
    return empty;
  }
  const cols = columnsOf(r.texts());
  if (typeof cols === 'string') {
    problems.push({ reason: 'missing_header_column', file, line: r.line, code, detail: cols });
    // Its rows are data the build could not read: skipped rows (C36), so that a
    // source whose headers went wrong fails the --max-bad-share bound instead of
    // publishing without those funds.
    let rows = 0;
    while (r.next()) {
      rows++;
      problems.push({ reason: 'row_in_unreadable_file', file, line: r.line, code });
    }
    return { ...empty, dataRows: rows };
  }
  // A data row with more fields than the header is misaligned, not "extra": an
  // unquoted thousands separator (`1,234.5`) or decimal comma (`10,5`) splits one
  // number in two, and reading the first half would give a wrong price (C36).
  const headerFields = r.count;
  const yfinance = r.fieldIs(0, 'price');
  const dateCol = cols.date;
  const adjCol = cols.adj;
  const closeCol = cols.close;
  // Fields a row must have; Close is optional per row (it only feeds lastClose).
  const needed = Math.max(dateCol, adjCol) + 1;

  // Every data row is at least `YYYY-MM-DD,d` plus a line end, so this bound never
  // overflows; the scratch is reused across files and the result copied out at its
  // exact length, so callers never keep an oversized buffer alive.
  ensureScratch(Math.floor(bytes.length / 12) + 1);
  const dates = scratchDates;
  const values = scratchValues;
  let n = 0;
  let prev = -0x3fffffff;
  let dataRows = 0;
  // The last valid row's Close, parsed once at the end rather than on every row.
  let closeSrc: Uint8Array | null = null;
  let closeFrom = 0;
  let closeTo = 0;

  // Split one field past the header so a long row shows as `count > headerFields`
  // without scanning the rest of its line.
  r.limitFields(headerFields + 1);
  let have = r.next();
  if (yfinance) {
    while (have && r.fieldIs(0, 'ticker')) have = r.next();
    if (have && r.fieldIs(0, 'date')) have = r.next();
  }

  for (; have; have = r.next()) {
    dataRows++;
    const src = r.src;
    const starts = r.starts;
    const ends = r.ends;
    let reason: ProblemReason;
    let detail: string;
    if (r.spanned > 0) {
      // Counted one each, so the bad-share bound sees them rather than a single bad row.
      dataRows += r.spanned;
      problems.push(...swallowedRows(r, 'multiline_row', file, code));
      continue;
    }
    if (r.count < needed) {
      reason = 'short_row';
      detail = `${r.count} field${r.count === 1 ? '' : 's'}`;
    } else if (r.count < headerFields) {
      // Every needed field is there, but the row stops early: a file cut off mid-line
      // (an upload that did not finish) leaves its last price cut too, read as another.
      reason = 'short_row';
      detail = `${r.count} of the header's ${headerFields} fields (cut short?)`;
    } else if (r.count > headerFields) {
      reason = 'long_row';
      detail = `more fields than the header's ${headerFields}`;
    } else {
      const day = parseDateField(src, starts[dateCol], ends[dateCol]);
      const v = parseDecimal(src, starts[adjCol], ends[adjCol]);
      if (day === null) {
        reason = 'unparsable_date';
        detail = excerpt(src, starts[dateCol], ends[dateCol]);
      } else if (day > latest) {
        reason = 'future_date';
        detail = `${excerpt(src, starts[dateCol], ends[dateCol])} is after ${formatDay(latest)}, today + ${FUTURE_GRACE_DAYS} days of grace`;
      } else if (!(v <= 0) && !(v < Number.POSITIVE_INFINITY)) {
        // NaN or +Infinity (an overflowing exponent is as unusable as `Infinity`).
        reason = 'unparsable_price';
        detail = excerpt(src, starts[adjCol], ends[adjCol]);
      } else if (v <= 0 && !(anySign && v > Number.NEGATIVE_INFINITY)) {
        reason = 'non_positive_price';
        detail = excerpt(src, starts[adjCol], ends[adjCol]);
      } else if (day <= prev) {
        reason = day === prev ? 'duplicate_date' : 'out_of_order_date';
        detail = excerpt(src, starts[dateCol], ends[dateCol]);
      } else {
        dates[n] = day;
        values[n] = v;
        n++;
        prev = day;
        if (closeCol >= 0 && closeCol < r.count) {
          // A quoted record lives in a scratch buffer the next record overwrites.
          closeSrc = src === bytes ? bytes : src.slice(starts[closeCol], ends[closeCol]);
          closeFrom = src === bytes ? starts[closeCol] : 0;
          closeTo = src === bytes ? ends[closeCol] : ends[closeCol] - starts[closeCol];
        } else {
          closeSrc = null;
        }
        continue;
      }
    }
    problems.push({ reason, file, line: r.line, code, detail });
  }

  let lastClose = Number.NaN;
  if (closeSrc !== null) {
    const c = parseDecimal(closeSrc, closeFrom, closeTo);
    if (c > 0 && c < Number.POSITIVE_INFINITY) lastClose = c;
  }
  return { dates: dates.slice(0, n), values: values.slice(0, n), lastClose, dataRows, problems };
}
