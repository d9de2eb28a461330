/**
 * Reader for `funds.csv` (C35): one row per fund, validated per C36, C15 and C17.
 * The file is small (tens of thousands of rows), so this favours plain strings.
 */

import { codeProblem } from '../../core/codes.js';
import type { Day } from '../../core/dates.js';
import { formatDay, parseDay } from '../../core/dates.js';
import type { FundRecord } from '../../core/types.js';
import type { Problem } from '../report/build-report.js';
import { csvCell, RecordReader, swallowedRows } from './csv.js';
import { type HeaderColumns, readColumns } from './header.js';

/** The columns funds.csv is written with (C35), in the order the reader below documents. */
export const FUNDS_HEADER = 'Code,Name,Country,Exchange,Currency,Type,Isin,IsInactive,InactiveDate\n';

/** A row to write: a fund record, whose Type may also be one the reader counts and skips (C35). */
export type FundsRow = Omit<FundRecord, 'type'> & { readonly type: string };

/** funds.csv of `rows`, in their order: what parseFundsFile reads back as the same records. */
export function fundsFileText(rows: Iterable<FundsRow>): string {
  let out = FUNDS_HEADER;
  for (const r of rows) {
    const inactiveDate = r.inactiveDate === null ? '' : formatDay(r.inactiveDate);
    out += `${csvCell(r.code)},${csvCell(r.name)},${csvCell(r.country)},${csvCell(r.exchange)},${csvCell(r.currency)},${csvCell(r.type)},${csvCell(r.isin)},${r.isInactive},${inactiveDate}\n`;
  }
  return out;
}

export interface FundsFileResult {
  /** Accepted funds in file order. */
  funds: FundRecord[];
  /** The line of each accepted fund's row, for reports about the fund (C36). */
  lines: Map<string, number>;
  /** All non-blank data rows seen. */
  dataRows: number;
  /** Rows whose Type is neither `ETF` nor `FUND`: counted, not problems (C35). */
  skippedOtherTypes: number;
  problems: Problem[];
}

/** C15, as core/codes.ts decides it (re-exported for the source readers). */
export const badCodeReason = codeProblem;

/** A date cell: `YYYY-MM-DD`, optionally with a ` 00:00:00` suffix (C36). */
function parseDateText(s: string): Day | null {
  if (s.length === 19 && s.endsWith(' 00:00:00')) return parseDay(s.slice(0, 10));
  return parseDay(s);
}

function parseBool(s: string): boolean | null {
  if (s === '') return false;
  const l = s.toLowerCase();
  if (l === 'true' || l === '1') return true;
  if (l === 'false' || l === '0') return false;
  return null;
}

/** funds.csv's columns (C35), by the names it is written with. */
const READ_COLUMNS = {
  code: 'Code',
  name: 'Name',
  country: 'Country',
  exchange: 'Exchange',
  currency: 'Currency',
  type: 'Type',
  isin: 'Isin',
  isInactive: 'IsInactive',
  inactiveDate: 'InactiveDate',
} as const;

type FundsHeader = HeaderColumns<keyof typeof READ_COLUMNS>;

export function parseFundsFile(bytes: Uint8Array, file: string): FundsFileResult {
  const funds: FundRecord[] = [];
  const lines = new Map<string, number>();
  const problems: Problem[] = [];
  const result: FundsFileResult = { funds, lines, dataRows: 0, skippedOtherTypes: 0, problems };
  const r = new RecordReader(bytes);
  const h = readColumns(r, file, problems, READ_COLUMNS, ['code', 'type']);
  if (h === null) return result;
  // A row shorter than the known columns is truncated or misaligned, not "blank".
  const needed = Math.max(...Object.values<number>(h.at)) + 1;
  while (r.next()) {
    result.dataRows++;
    const line = r.line;
    if (r.spanned > 0) {
      result.dataRows += r.spanned;
      problems.push(...swallowedRows(r, 'bad_fund_row', file));
      continue;
    }
    const countProblem = fieldCountDetail(r.count, needed, h.fields);
    if (countProblem !== null) {
      problems.push({ reason: 'bad_fund_row', file, line, detail: countProblem });
      continue;
    }
    const type = cell(r, h.at.type);
    if (type !== 'ETF' && type !== 'FUND') {
      result.skippedOtherTypes++;
      continue;
    }
    const fund = fundOf(r, h, type, file);
    if ('reason' in fund) {
      problems.push(fund);
    } else if (lines.has(fund.code)) {
      // Only accepted rows claim a code, so a broken first row does not hide a good one.
      problems.push({ reason: 'duplicate_fund', file, line, code: fund.code });
    } else {
      lines.set(fund.code, line);
      funds.push(fund);
    }
  }
  return result;
}

/** Why a row of `count` fields is misaligned, or null when it is not. */
function fieldCountDetail(count: number, needed: number, headerFields: number): string | null {
  if (count < needed) return `short row: ${count} of ${needed} fields`;
  // An unquoted comma (in a Name, say) shifts every later cell: Type, Isin, … (C36).
  if (count > headerFields) return `long row: ${count} fields, more than the header's ${headerFields}`;
  return null;
}

/** Cell `col` as text, '' when the header has no such column. */
function cell(r: RecordReader, col: number): string {
  return col < 0 ? '' : r.text(col);
}

/** Cell `col` as text, null when it is blank or absent. */
function optionalCell(r: RecordReader, col: number): string | null {
  const s = cell(r, col);
  return s === '' ? null : s;
}

/** The fund on row `r` (whose Type is `type`), or the problem that rejects the row. */
function fundOf(
  r: RecordReader,
  h: FundsHeader,
  type: FundRecord['type'],
  file: string,
): FundRecord | Problem {
  const line = r.line;
  const code = cell(r, h.at.code);
  const codeReason = badCodeReason(code);
  if (codeReason !== null) return { reason: 'bad_fund_row', file, line, detail: codeReason };
  const isInactive = parseBool(cell(r, h.at.isInactive));
  if (isInactive === null) {
    return {
      reason: 'bad_fund_row',
      file,
      line,
      code,
      detail: `IsInactive ${JSON.stringify(cell(r, h.at.isInactive))}`,
    };
  }
  const dateText = cell(r, h.at.inactiveDate);
  const inactiveDate = dateText === '' ? null : parseDateText(dateText);
  if (dateText !== '' && inactiveDate === null) {
    return { reason: 'bad_fund_row', file, line, code, detail: `InactiveDate ${JSON.stringify(dateText)}` };
  }
  return {
    code,
    name: optionalCell(r, h.at.name),
    country: optionalCell(r, h.at.country),
    exchange: optionalCell(r, h.at.exchange),
    currency: optionalCell(r, h.at.currency),
    type,
    isin: optionalCell(r, h.at.isin),
    isInactive,
    inactiveDate,
  };
}
