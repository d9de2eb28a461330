/**
 * Reader for `funds.csv` (C35): one row per fund, validated per C36, C15 and C17.
 * The file is small (tens of thousands of rows), so this favours plain strings.
 */

import { codeProblem } from '../../core/codes.js';
import type { Day } from '../../core/dates.js';
import { formatDay, parseDay } from '../../core/dates.js';
import type { FundRecord } from '../../core/types.js';
import type { Problem } from '../report/build-report.js';
import { csvCell, findColumn, normalizeHeader, RecordReader, swallowedRows } from './csv.js';

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

export function parseFundsFile(bytes: Uint8Array, file: string): FundsFileResult {
  const funds: FundRecord[] = [];
  const lines = new Map<string, number>();
  const problems: Problem[] = [];
  const result: FundsFileResult = { funds, lines, dataRows: 0, skippedOtherTypes: 0, problems };
  const r = new RecordReader(bytes);
  if (!r.next()) {
    problems.push({ reason: 'missing_header_column', file, line: 1, detail: 'empty file' });
    return result;
  }
  const h = normalizeHeader(r.texts());
  const headerFields = h.length;
  const col = {
    code: findColumn(h, 'code'),
    name: findColumn(h, 'name'),
    country: findColumn(h, 'country'),
    exchange: findColumn(h, 'exchange'),
    currency: findColumn(h, 'currency'),
    type: findColumn(h, 'type'),
    isin: findColumn(h, 'isin'),
    isInactive: findColumn(h, 'isinactive'),
    inactiveDate: findColumn(h, 'inactivedate'),
  };
  const missing = [col.code < 0 ? 'Code' : '', col.type < 0 ? 'Type' : ''].filter((s) => s !== '');
  if (missing.length > 0) {
    problems.push({ reason: 'missing_header_column', file, line: r.line, detail: missing.join(', ') });
    return result;
  }
  // A row shorter than the known columns is truncated or misaligned, not "blank".
  const needed = Math.max(...Object.values(col)) + 1;
  const seen = new Set<string>();

  while (r.next()) {
    result.dataRows++;
    const line = r.line;
    if (r.spanned > 0) {
      result.dataRows += r.spanned;
      problems.push(...swallowedRows(r, 'bad_fund_row', file));
      continue;
    }
    if (r.count < needed) {
      problems.push({
        reason: 'bad_fund_row',
        file,
        line,
        detail: `short row: ${r.count} of ${needed} fields`,
      });
      continue;
    }
    if (r.count > headerFields) {
      // An unquoted comma (in a Name, say) shifts every later cell: Type, Isin, … (C36).
      problems.push({
        reason: 'bad_fund_row',
        file,
        line,
        detail: `long row: ${r.count} fields, more than the header's ${headerFields}`,
      });
      continue;
    }
    const cell = (i: number): string => (i < 0 ? '' : r.text(i));
    const opt = (i: number): string | null => {
      const s = cell(i);
      return s === '' ? null : s;
    };
    const type = cell(col.type);
    if (type !== 'ETF' && type !== 'FUND') {
      result.skippedOtherTypes++;
      continue;
    }
    const code = cell(col.code);
    const bad = (detail: string): void => {
      problems.push({ reason: 'bad_fund_row', file, line, code, detail });
    };
    const codeReason = badCodeReason(code);
    if (codeReason !== null) {
      problems.push({ reason: 'bad_fund_row', file, line, detail: codeReason });
      continue;
    }
    const isInactive = parseBool(cell(col.isInactive));
    if (isInactive === null) {
      bad(`IsInactive ${JSON.stringify(cell(col.isInactive))}`);
      continue;
    }
    const dateText = cell(col.inactiveDate);
    const inactiveDate = dateText === '' ? null : parseDateText(dateText);
    if (dateText !== '' && inactiveDate === null) {
      bad(`InactiveDate ${JSON.stringify(dateText)}`);
      continue;
    }
    // Only accepted rows claim a code, so a broken first row does not hide a good one.
    if (seen.has(code)) {
      problems.push({ reason: 'duplicate_fund', file, line, code });
      continue;
    }
    seen.add(code);
    lines.set(code, line);
    funds.push({
      code,
      name: opt(col.name),
      country: opt(col.country),
      exchange: opt(col.exchange),
      currency: opt(col.currency),
      type,
      isin: opt(col.isin),
      isInactive,
      inactiveDate,
    });
  }
  return result;
}
