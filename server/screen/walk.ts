/**
 * One screen page (C50, C52): walk a column's precomputed order from the cursor,
 * keep the funds passing every filter, stop one past the page (that one only says
 * whether a next page exists). The cost is the funds walked, not the funds kept:
 * a filter on the sort column itself narrows the walk by binary search, and every
 * other test is a typed-array read.
 *
 * Orders are ascending by (value, code). Descending is the same order read from
 * the top in runs of equal values, each run read upwards, so equal values stay in
 * code order either way; funds without the figure follow, in code order.
 */
import { compareCodes } from '../../core/codes.js';
import type { ScreenColumn } from './columns.js';

export interface RangeFilter {
  readonly keys: Float64Array;
  /** Inclusive; -Infinity / Infinity when open. NaN (null) never passes. */
  readonly min: number;
  readonly max: number;
}

/** Where a page continues: strictly after this (value, code); value NaN = among the nulls. */
interface ScreenAfter {
  readonly key: number;
  readonly code: string;
}

export interface ScreenPlan {
  /** null: ascending code order. */
  readonly sort: ScreenColumn | null;
  readonly desc: boolean;
  readonly filters: readonly RangeFilter[];
  /** When set, only funds with marks[i] === stamp (the metadata filters' matches). */
  readonly marks: Int32Array | null;
  readonly stamp: number;
  /** When set, only funds with isInactive[i] === wantInactive. */
  readonly isInactive: Uint8Array | null;
  readonly wantInactive: number;
  readonly after: ScreenAfter | null;
  readonly limit: number;
}

/**
 * Fund indices of the page into `out` (room: limit + 1), in order; returns how many
 * (limit + 1 when more follow).
 */
export function screenPage(plan: ScreenPlan, codes: readonly string[], out: Int32Array): number {
  const want = plan.limit + 1;
  const F = codes.length;
  let n = 0;
  const take = (i: number): boolean => {
    if (passes(plan, i)) out[n++] = i;
    return n === want;
  };
  const col = plan.sort;
  const after = plan.after;
  if (col === null) {
    for (let i = after === null ? 0 : upperBoundCode(codes, after.code); i < F; i++) if (take(i)) break;
    return n;
  }
  const { keys, order, nonNull } = col;
  // A filter on the sort column bounds the non-null positions walked; nulls fail it.
  let lo = 0;
  let hi = nonNull;
  let nulls = true;
  for (const f of plan.filters) {
    if (f.keys !== keys) continue;
    lo = Math.max(lo, firstAtLeast(col, f.min));
    hi = Math.min(hi, firstAbove(col, f.max));
    nulls = false;
  }
  let nullStart = nonNull;
  if (after !== null && Number.isNaN(after.key)) {
    // Resuming among the nulls: every non-null fund came before.
    hi = lo;
    nullStart = nonNull + upperBoundCodeIn(order, nonNull, F, codes, after.code);
  }
  if (!plan.desc) {
    let p = lo;
    if (after !== null && !Number.isNaN(after.key)) {
      const at = firstAtLeast(col, after.key);
      const end = firstAbove(col, after.key);
      p = Math.max(p, at + upperBoundCodeIn(order, at, end, codes, after.code));
    }
    for (; p < hi; p++) if (take(order[p])) return n;
  } else {
    let top = hi - 1;
    if (after !== null && !Number.isNaN(after.key)) {
      // The cursor's run: its codes after the cursor's, then the runs below it.
      const at = firstAtLeast(col, after.key);
      const end = Math.min(firstAbove(col, after.key), hi);
      for (let p = Math.max(at + upperBoundCodeIn(order, at, end, codes, after.code), lo); p < end; p++)
        if (take(order[p])) return n;
      top = Math.min(top, at - 1);
    }
    while (top >= lo) {
      const k = keys[order[top]];
      let r = top;
      while (r > lo && keys[order[r - 1]] === k) r--;
      for (let p = r; p <= top; p++) if (take(order[p])) return n;
      top = r - 1;
    }
  }
  if (nulls) for (let p = nullStart; p < F; p++) if (take(order[p])) return n;
  return n;
}

function passes(plan: ScreenPlan, i: number): boolean {
  if (plan.marks !== null && plan.marks[i] !== plan.stamp) return false;
  if (plan.isInactive !== null && plan.isInactive[i] !== plan.wantInactive) return false;
  const fs = plan.filters;
  for (let k = 0; k < fs.length; k++) {
    const v = fs[k].keys[i];
    // NaN fails both comparisons' negation: a fund without the figure never passes.
    if (!(v >= fs[k].min && v <= fs[k].max)) return false;
  }
  return true;
}

/** First position of the non-null order whose value is ≥ x. */
function firstAtLeast(col: ScreenColumn, x: number): number {
  let lo = 0;
  let hi = col.nonNull;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (col.keys[col.order[mid]] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First position of the non-null order whose value is > x. */
function firstAbove(col: ScreenColumn, x: number): number {
  let lo = 0;
  let hi = col.nonNull;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (col.keys[col.order[mid]] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Offset from `from` of the first position in order[from, to) (ascending codes) whose code is after `code`. */
function upperBoundCodeIn(
  order: Int32Array,
  from: number,
  to: number,
  codes: readonly string[],
  code: string,
): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodes(codes[order[mid]], code) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo - from;
}

/** First fund index whose code is after `code` (funds are in code order). */
function upperBoundCode(codes: readonly string[], code: string): number {
  let lo = 0;
  let hi = codes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCodes(codes[mid], code) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
