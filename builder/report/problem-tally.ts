/**
 * A compact, transferable count of problems: per reason the count and the first
 * instance, per fund the skipped-row count, plus the first few problems in full.
 * Workers send this instead of every problem, so a garbage source cannot flood
 * the main thread.
 */
import { type BuildReport, type Problem, type ProblemReason, ROW_REASONS } from './build-report.js';

/** Full problems kept for the manifest's report, beyond the per-reason first. */
const KEEP_FIRST = 200;

export class ProblemTally {
  readonly #reasons = new Map<ProblemReason, { count: number; first: Problem }>();
  readonly #perFund = new Map<string, number>();
  readonly #first: Problem[] = [];

  add(p: Problem): void {
    const s = this.#reasons.get(p.reason);
    if (s) s.count++;
    else this.#reasons.set(p.reason, { count: 1, first: p });
    if (p.code !== undefined && ROW_REASONS.has(p.reason))
      this.#perFund.set(p.code, (this.#perFund.get(p.code) ?? 0) + 1);
    if (this.#first.length < KEEP_FIRST) this.#first.push(p);
  }

  toJSON(): {
    reasons: Array<[ProblemReason, number, Problem]>;
    perFund: Array<[string, number]>;
    first: Problem[];
  } {
    return {
      reasons: [...this.#reasons].map(([r, s]) => [r, s.count, s.first]),
      perFund: [...this.#perFund],
      first: this.#first,
    };
  }
}

/** Fold a worker's tally into the build report. */
export function mergeTally(report: BuildReport, t: ReturnType<ProblemTally['toJSON']>): void {
  for (const [, count, first] of t.reasons) report.addMany(first, count);
  for (const [code, n] of t.perFund) report.perFund.set(code, (report.perFund.get(code) ?? 0) + n);
  for (const p of t.first) if (report.examples.length < KEEP_FIRST) report.examples.push(p);
}
