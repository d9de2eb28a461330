/**
 * The build report (C36): every skipped row or left-out fund is counted by reason,
 * with the first offending file:line of each kind kept for the summary.
 */
import { escapeControls } from '../../core/escape.js';

export type ProblemReason =
  // price rows (C36)
  | 'unparsable_date'
  | 'unparsable_price'
  | 'non_positive_price'
  | 'duplicate_date'
  | 'out_of_order_date'
  | 'short_row'
  | 'long_row'
  | 'multiline_row'
  | 'future_date'
  | 'row_in_unreadable_file'
  // files
  | 'missing_header_column'
  | 'unreadable_file'
  | 'ignored_file'
  // funds.csv
  | 'bad_fund_type'
  | 'bad_fund_row'
  | 'duplicate_fund'
  | 'fund_without_prices'
  | 'prices_without_fund'
  | 'fund_without_valid_rows'
  // daily files (C37)
  | 'daily_bad_row'
  | 'daily_stale_row'
  | 'daily_unknown_fund'
  | 'daily_no_previous_close'
  // refresh quality gates: reported, not applied, not counted as bad rows
  | 'non_trading_day'
  | 'suspicious_move';

/** Reasons that are skipped *data rows* and so count towards the failure bound (C36). */
export const ROW_REASONS: ReadonlySet<ProblemReason> = new Set<ProblemReason>([
  'unparsable_date',
  'unparsable_price',
  'non_positive_price',
  'duplicate_date',
  'out_of_order_date',
  'short_row',
  'long_row',
  'multiline_row',
  'future_date',
  'row_in_unreadable_file',
  'daily_bad_row',
]);

export interface Problem {
  readonly reason: ProblemReason;
  readonly file: string;
  /** 1-based line number in the file; 0 when the problem is the whole file. */
  readonly line: number;
  readonly code?: string;
  readonly detail?: string;
}

export interface ReasonSummary {
  count: number;
  first: Problem;
}

export interface ReportJson {
  dataRows: number;
  skippedRows: number;
  skippedShare: number;
  fundsIn: number;
  fundsOut: number;
  skippedFundTypes: number;
  reasons: Record<string, ReasonSummary>;
  /** Skipped-row counts per fund code (only funds with any). */
  perFund: Record<string, number>;
  examples: Problem[];
  /** A refresh's universe changes (codes), when there were any. */
  universe?: UniverseChanges;
}

/** Funds a refresh added, marked inactive, or whose metadata changed. */
export interface UniverseChanges {
  newFunds: string[];
  inactive: string[];
  changed: string[];
}

export class BuildReport {
  dataRows = 0;
  skippedRows = 0;
  fundsIn = 0;
  fundsOut = 0;
  skippedFundTypes = 0;
  readonly reasons = new Map<ProblemReason, ReasonSummary>();
  readonly perFund = new Map<string, number>();
  /** The first problems in full (file, line, reason), for the manifest. */
  readonly examples: Problem[] = [];
  universe: UniverseChanges | null = null;

  add(p: Problem): void {
    if (this.examples.length < 200) this.examples.push(p);
    const s = this.reasons.get(p.reason);
    if (s) s.count++;
    else this.reasons.set(p.reason, { count: 1, first: p });
    if (ROW_REASONS.has(p.reason)) {
      this.skippedRows++;
      if (p.code !== undefined) this.perFund.set(p.code, (this.perFund.get(p.code) ?? 0) + 1);
    }
  }

  /** Merge a count of problems of one reason whose first instance is `first` (from a worker). */
  addMany(first: Problem, count: number): void {
    if (count <= 0) return;
    const s = this.reasons.get(first.reason);
    if (s) s.count += count;
    else this.reasons.set(first.reason, { count, first });
    if (ROW_REASONS.has(first.reason)) this.skippedRows += count;
  }

  get skippedShare(): number {
    const all = this.dataRows;
    return all === 0 ? 0 : this.skippedRows / all;
  }

  toJSON(): ReportJson {
    return {
      dataRows: this.dataRows,
      skippedRows: this.skippedRows,
      skippedShare: this.skippedShare,
      fundsIn: this.fundsIn,
      fundsOut: this.fundsOut,
      skippedFundTypes: this.skippedFundTypes,
      reasons: Object.fromEntries(this.reasons),
      perFund: Object.fromEntries(this.perFund),
      examples: this.examples,
      ...(this.universe === null ? {} : { universe: this.universe }),
    };
  }

  /**
   * A few human lines for stderr: totals, then each reason with its first file:line.
   * File names, codes and details quote the source, so they are escaped: a price row
   * that starts with ESC[2J must not clear the operator's screen.
   */
  summary(): string {
    const lines = [
      `build report: ${this.dataRows} data rows, ${this.skippedRows} skipped (${(this.skippedShare * 100).toFixed(3)} %), ` +
        `${this.fundsIn} funds in, ${this.fundsOut} left out, ${this.skippedFundTypes} rows of other security types skipped`,
    ];
    const u = this.universe;
    if (u !== null)
      lines.push(
        `  universe: ${u.newFunds.length} new funds${codeList(u.newFunds)}, ${u.inactive.length} turned inactive${codeList(u.inactive)}, ` +
          `${u.changed.length} with changed metadata${codeList(u.changed)}`,
      );
    const sorted = [...this.reasons.entries()].sort((a, b) => b[1].count - a[1].count);
    for (const [reason, s] of sorted) {
      const file = escapeControls(s.first.file);
      const at = s.first.line > 0 ? `${file}:${s.first.line}` : file;
      const detail = s.first.detail ? ` (${escapeControls(s.first.detail)})` : '';
      lines.push(`  ${reason}: ${s.count}, first at ${at}${detail}`);
    }
    return lines.join('\n');
  }
}

/** Up to 10 codes in parentheses, for a summary line. */
function codeList(codes: readonly string[]): string {
  if (codes.length === 0) return '';
  const shown = codes.slice(0, 10).join(', ');
  return ` (${shown}${codes.length > 10 ? ', …' : ''})`;
}
