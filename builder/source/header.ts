/**
 * The header record of a source CSV (C35): a file with none is a problem, and the
 * columns are matched by name, trimmed and lower-cased, wherever they stand. One home
 * for what funds.csv, the price files and the daily files all start with.
 */
import type { Problem } from '../report/build-report.js';
import { findColumn, normalizeHeader, type RecordReader } from './csv.js';

/**
 * The first record of `r` as text, or null when the file has none (the problem is
 * added to `problems`, with the fund's `code` when the file is one fund's).
 */
export function readHeaderRecord(
  r: RecordReader,
  file: string,
  problems: Problem[],
  code?: string,
): string[] | null {
  if (r.next()) return r.texts();
  const reason = 'missing_header_column';
  problems.push(
    code === undefined
      ? { reason, file, line: 1, detail: 'empty file' }
      : { reason, file, line: 1, code, detail: 'empty file' },
  );
  return null;
}

export interface HeaderColumns<K extends string> {
  /** Each named column's index, -1 when the header lacks it (an optional one). */
  at: Record<K, number>;
  /** Fields in the header: a data row with more or fewer is misaligned (C36). */
  fields: number;
}

/**
 * The header of `r` with the index of each column of `names` (key → the column's
 * name as the format documents it), or null when the file is empty or lacks one of
 * `required` (a missing_header_column problem naming them all, in that order).
 */
export function readColumns<K extends string>(
  r: RecordReader,
  file: string,
  problems: Problem[],
  names: Readonly<Record<K, string>>,
  required: readonly NoInfer<K>[],
): HeaderColumns<K> | null {
  const texts = readHeaderRecord(r, file, problems);
  if (texts === null) return null;
  const h = normalizeHeader(texts);
  const at = {} as Record<K, number>;
  for (const key of Object.keys(names) as K[]) at[key] = findColumn(h, names[key].toLowerCase());
  const missing = required.filter((key) => at[key] < 0).map((key) => names[key]);
  if (missing.length > 0) {
    problems.push({ reason: 'missing_header_column', file, line: r.line, detail: missing.join(', ') });
    return null;
  }
  return { at, fields: h.length };
}
