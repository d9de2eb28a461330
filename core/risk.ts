/**
 * The risk maths (C38–C45), the one implementation both the builder (every fund's
 * latest figures, stored in the snapshot) and the server (as_of rows, beta and
 * correlation against the benchmark asked for) call.
 *
 * A fund's figures for one anchor fill RISK_SLOTS numbers per window of a Float64Array
 * (NaN meaning null): percents unrounded like the return figures, ratios as they are,
 * dates as days and months as month numbers (y·12 + m − 1). C1 rounding happens once,
 * at the edge (core/risk-row.ts).
 */
import { isLastTradingDayOfMonth, lastTradingDayOnOrBefore } from './calendar.js';
import { type Day, monthFirstDay, toYmd } from './dates.js';
import { percentChange } from './decimal.js';
import { lastIndexOnOrBefore, MAX_BASE_GAP_DAYS } from './returns.js';
import type { Series } from './types.js';

/** The windows, in years, in the order they are stored and served (C39). */
export const RISK_WINDOWS = [1, 3, 5, 10] as const;
/** `1y` … `10y`: the keys of a row's `windows` and the suffix of a screening name. */
export const RISK_WINDOW_KEYS = RISK_WINDOWS.map((n) => `${n}y`);
/** Months of the longest window. */
const MAX_MONTHS = 12 * RISK_WINDOWS[RISK_WINDOWS.length - 1];

/** Where each figure of a window sits in its slots. */
export enum Slot {
  Volatility = 0,
  Sharpe = 1,
  Sortino = 2,
  MaxDrawdown = 3,
  BestMonth = 4,
  WorstMonth = 5,
  PositiveMonths = 6,
  Beta = 7,
  Correlation = 8,
  PeakDate = 9,
  TroughDate = 10,
  RecoveryDate = 11,
  BestMonthDate = 12,
  WorstMonthDate = 13,
}
export const RISK_SLOTS = 14;

/**
 * The figures computed at build time, stored per fund and window and screenable as
 * `<figure>_<window>`: all but beta and correlation, which depend on the benchmark
 * a request names. Their slot is their index here.
 */
export const STORED_FIGURES = [
  'volatility',
  'sharpe',
  'sortino',
  'max_drawdown',
  'best_month',
  'worst_month',
  'positive_months',
] as const;

/** The dates stored beside them (slots PeakDate … WorstMonthDate, in this order). */
export const STORED_DATES = [
  'peak_date',
  'trough_date',
  'recovery_date',
  'best_month_date',
  'worst_month_date',
] as const;

/** Every screening name of a stored figure: `volatility_1y`, …, `positive_months_10y`. */
export const RISK_COLUMN_NAMES: readonly string[] = RISK_WINDOW_KEYS.flatMap((w) =>
  STORED_FIGURES.map((f) => `${f}_${w}`),
);

/** Month number y·12 + (m − 1) of a day. */
export function monthOf(day: Day): number {
  const { y, m } = toYmd(day);
  return y * 12 + m - 1;
}

/** C38: the market's last trading day of month number `month`. */
function monthEndDay(month: number): Day {
  return lastTradingDayOnOrBefore(monthFirstDay(month + 1) - 1);
}

/** √12: monthly to yearly. */
const SQRT12 = Math.sqrt(12);

/**
 * C40: a standard deviation this small is rounding noise of the doubles (a flat
 * fund's returns are not all exactly 0 once rescaled), not a spread prices can show:
 * it counts as zero, and a ratio divided by it is null.
 */
const ZERO_SD = 1e-9;

/**
 * The risk-free rate by month (C41): rf of month M is the yield in percent on the last
 * rate date on or before the last calendar day of month M − 1, ÷ 1200, when that date
 * is at most 7 days before it; NaN (no rate for the month) otherwise.
 */
export class RateTable {
  readonly #first: number;
  readonly #rf: Float64Array;

  private constructor(first: number, rf: Float64Array) {
    this.#first = first;
    this.#rf = rf;
  }

  static readonly EMPTY = new RateTable(0, new Float64Array(0));

  /** From the rates series: dates strictly ascending, yields in percent. */
  static of(date: ArrayLike<number>, yieldPercent: ArrayLike<number>): RateTable {
    const n = date.length;
    if (n === 0) return RateTable.EMPTY;
    const first = monthOf(date[0]) + 1;
    // A month's rate is read at the end of the month before, up to the month after the last rate's.
    const last = monthOf(date[n - 1]) + 1;
    const rf = new Float64Array(last - first + 1);
    let i = 0;
    for (let m = first; m <= last; m++) {
      const end = monthFirstDay(m) - 1;
      while (i + 1 < n && date[i + 1] <= end) i++;
      rf[m - first] =
        date[i] <= end && end - date[i] <= MAX_BASE_GAP_DAYS ? yieldPercent[i] / 1200 : Number.NaN;
    }
    return new RateTable(first, rf);
  }

  /** rf of month `month` as a monthly rate, or NaN. */
  at(month: number): number {
    const k = month - this.#first;
    return k >= 0 && k < this.#rf.length ? this.#rf[k] : Number.NaN;
  }
}

/**
 * A benchmark's monthly returns (C38) over its whole history, computed once per
 * benchmark and snapshot: ret(M) is NaN where either month-end value is missing.
 */
export class MonthlyReturns {
  readonly #first: number;
  readonly #ret: Float64Array;

  private constructor(first: number, ret: Float64Array) {
    this.#first = first;
    this.#ret = ret;
  }

  static of(s: Series): MonthlyReturns {
    const last = s.start + s.length - 1;
    const first = monthOf(s.date[s.start]);
    const end = monthOf(s.date[last]);
    const ret = new Float64Array(end - first + 1).fill(Number.NaN);
    let prev = Number.NaN;
    for (let m = first; m <= end; m++) {
      const v = monthEndValue(s, m);
      ret[m - first] = v / prev - 1;
      prev = v;
    }
    return new MonthlyReturns(first, ret);
  }

  at(month: number): number {
    const k = month - this.#first;
    return k >= 0 && k < this.#ret.length ? this.#ret[k] : Number.NaN;
  }
}

/** C38: the month-end value of month `month`, or NaN when missing. */
function monthEndValue(s: Series, month: number): number {
  const t = monthEndDay(month);
  const i = lastIndexOnOrBefore(s, t);
  return i >= 0 && t - s.date[i] <= MAX_BASE_GAP_DAYS ? s.value[i] : Number.NaN;
}

/** The anchor of a risk row: its observation index, date and the window's end month E (C39). */
export interface RiskAnchor {
  /** Index of the anchor observation in the series arrays. */
  readonly index: number;
  readonly asOf: Day;
  /** E: the anchor's month when it is the market's last trading day of it, else the month before. */
  readonly endMonth: number;
}

/** C3 and C39: the anchor for `requested` (undefined: the latest observation), or null. */
export function riskAnchor(s: Series, requested?: Day): RiskAnchor | null {
  const a = requested === undefined ? s.start + s.length - 1 : lastIndexOnOrBefore(s, requested);
  if (a < 0) return null;
  const asOf = s.date[a];
  const m = monthOf(asOf);
  return { index: a, asOf, endMonth: isLastTradingDayOfMonth(asOf) ? m : m - 1 };
}

/**
 * Scratch of one computation (one thread computes one row at a time): the index of
 * the month-end observation of month E − k (-1: missing) and the return of month
 * E − k (NaN: missing), for k = 0 … 120.
 */
const monthIdx = new Int32Array(MAX_MONTHS + 1);
const monthRet = new Float64Array(MAX_MONTHS);
const excess = new Float64Array(MAX_MONTHS);

/**
 * Fills monthIdx and monthRet for the months ending with E, walking back from the
 * anchor; returns how many returns from E back are present before the first missing
 * one (a window of n months is complete when n ≤ this).
 */
function walkMonths(s: Series, anchor: RiskAnchor): number {
  const dates = s.date;
  const first = s.start;
  let i = anchor.index;
  let present = 0;
  let counting = true;
  for (let k = 0; k <= MAX_MONTHS; k++) {
    const t = monthEndDay(anchor.endMonth - k);
    while (i >= first && dates[i] > t) i--;
    const ok = i >= first && t - dates[i] <= MAX_BASE_GAP_DAYS;
    monthIdx[k] = ok ? i : -1;
    if (k > 0) {
      const j = monthIdx[k - 1];
      const r = ok && j >= 0 ? s.value[j] / s.value[i] - 1 : Number.NaN;
      monthRet[k - 1] = r;
      if (counting && !Number.isNaN(r)) present = k;
      else counting = false;
    }
    if (i < first) {
      // Before the first observation every month is missing.
      for (let q = k + 1; q <= MAX_MONTHS; q++) {
        monthIdx[q] = -1;
        monthRet[q - 1] = Number.NaN;
      }
      break;
    }
  }
  return present;
}

/**
 * Every window's figures at `anchor` into `out` (RISK_WINDOWS.length × RISK_SLOTS;
 * NaN = null). `rates` gives rf (C41); `bench`, when given, the benchmark's monthly
 * returns for beta and correlation (C45), which are NaN without it.
 */
export function riskFigures(
  s: Series,
  anchor: RiskAnchor,
  rates: RateTable,
  bench: MonthlyReturns | null,
  out: Float64Array,
): void {
  out.fill(Number.NaN);
  const present = walkMonths(s, anchor);
  for (let w = 0; w < RISK_WINDOWS.length; w++) {
    const n = 12 * RISK_WINDOWS[w];
    if (n > present) continue;
    const o = w * RISK_SLOTS;
    monthFigures(s, anchor.endMonth, n, rates, out, o);
    drawdown(s, monthIdx[n], monthIdx[0], anchor.index, out, o);
    if (bench !== null) betaCorrelation(anchor.endMonth, n, bench, out, o);
  }
}

/** Only beta and correlation (the rest comes from the snapshot's stored columns). */
export function riskBetaCorrelation(
  s: Series,
  anchor: RiskAnchor,
  bench: MonthlyReturns,
  out: Float64Array,
): void {
  const present = walkMonths(s, anchor);
  for (let w = 0; w < RISK_WINDOWS.length; w++) {
    const n = 12 * RISK_WINDOWS[w];
    const o = w * RISK_SLOTS;
    out[o + Slot.Beta] = Number.NaN;
    out[o + Slot.Correlation] = Number.NaN;
    if (n <= present) betaCorrelation(anchor.endMonth, n, bench, out, o);
  }
}

/** Sample mean and standard deviation (n − 1) of a[0..n). */
function meanSd(a: Float64Array, n: number): [number, number] {
  let sum = 0;
  for (let k = 0; k < n; k++) sum += a[k];
  const mean = sum / n;
  let ss = 0;
  for (let k = 0; k < n; k++) {
    const d = a[k] - mean;
    ss += d * d;
  }
  return [mean, Math.sqrt(ss / (n - 1))];
}

/** C40, C42, C44: volatility, Sharpe, Sortino, best and worst month, positive months. */
function monthFigures(
  s: Series,
  endMonth: number,
  n: number,
  rates: RateTable,
  out: Float64Array,
  o: number,
): void {
  const [, sd] = meanSd(monthRet, n);
  out[o + Slot.Volatility] = sd < ZERO_SD ? 0 : sd * SQRT12 * 100;

  let haveRates = true;
  for (let k = 0; k < n; k++) {
    const rf = rates.at(endMonth - k);
    if (Number.isNaN(rf)) {
      haveRates = false;
      break;
    }
    excess[k] = monthRet[k] - rf;
  }
  if (haveRates) {
    const [mean, sdE] = meanSd(excess, n);
    if (sdE >= ZERO_SD) out[o + Slot.Sharpe] = (mean / sdE) * SQRT12;
    let down = 0;
    let below = 0;
    for (let k = 0; k < n; k++) {
      const e = excess[k];
      if (e < 0) {
        down += e * e;
        below++;
      }
    }
    if (below > 0) out[o + Slot.Sortino] = (mean / Math.sqrt(down / n)) * SQRT12;
  }

  // Earliest month first, so that a tie goes to the earliest month.
  let best = n - 1;
  let worst = n - 1;
  let positive = 0;
  for (let k = n - 1; k >= 0; k--) {
    const r = monthRet[k];
    if (r > monthRet[best]) best = k;
    if (r < monthRet[worst]) worst = k;
    if (r > 0) positive++;
  }
  const v = s.value;
  out[o + Slot.BestMonth] = percentChange(v[monthIdx[best]], v[monthIdx[best + 1]]);
  out[o + Slot.BestMonthDate] = endMonth - best;
  out[o + Slot.WorstMonth] = percentChange(v[monthIdx[worst]], v[monthIdx[worst + 1]]);
  out[o + Slot.WorstMonthDate] = endMonth - worst;
  out[o + Slot.PositiveMonths] = (positive / n) * 100;
}

/**
 * p > top · worst · DEEPER_MARGIN (each product rounded) implies p / top, rounded,
 * is not below `worst`: the margin (2^-40) is far above the three roundings (2^-53
 * each), so the skip never hides a deeper fall.
 */
const DEEPER_MARGIN = 1 + 2 ** -40;

/**
 * C43: the deepest fall from a running maximum over observations [from, to], its
 * peak and trough, and the first observation after the trough, up to the anchor,
 * back at the peak's price.
 */
function drawdown(s: Series, from: number, to: number, anchor: number, out: Float64Array, o: number): void {
  const v = s.value;
  let peak = from;
  let top = v[from];
  let worst = 1;
  let trough = -1;
  let troughPeak = -1;
  // A price above `clear` cannot make a deeper fall, so most days skip the division;
  // the days that might still divide exactly as before, so ties resolve as they did.
  let clear = top * DEEPER_MARGIN;
  for (let t = from; t <= to; t++) {
    const p = v[t];
    if (p > top) {
      peak = t;
      top = p;
      clear = p * worst * DEEPER_MARGIN;
    } else if (!(p > clear)) {
      const ratio = p / top;
      if (ratio < worst) {
        worst = ratio;
        trough = t;
        troughPeak = peak;
        clear = top * worst * DEEPER_MARGIN;
      }
    }
  }
  if (trough < 0) {
    out[o + Slot.MaxDrawdown] = 0;
    return;
  }
  out[o + Slot.MaxDrawdown] = percentChange(v[trough], v[troughPeak]);
  out[o + Slot.PeakDate] = s.date[troughPeak];
  out[o + Slot.TroughDate] = s.date[trough];
  const level = v[troughPeak];
  for (let t = trough + 1; t <= anchor; t++) {
    if (v[t] >= level) {
      out[o + Slot.RecoveryDate] = s.date[t];
      break;
    }
  }
}

/** C45: sample beta and Pearson correlation against the benchmark over the same months. */
function betaCorrelation(
  endMonth: number,
  n: number,
  bench: MonthlyReturns,
  out: Float64Array,
  o: number,
): void {
  let sumF = 0;
  let sumB = 0;
  for (let k = 0; k < n; k++) {
    const b = bench.at(endMonth - k);
    if (Number.isNaN(b)) return;
    excess[k] = b;
    sumF += monthRet[k];
    sumB += b;
  }
  const mf = sumF / n;
  const mb = sumB / n;
  let cov = 0;
  let vf = 0;
  let vb = 0;
  for (let k = 0; k < n; k++) {
    const df = monthRet[k] - mf;
    const db = excess[k] - mb;
    cov += df * db;
    vf += df * df;
    vb += db * db;
  }
  // The (n − 1) of the sample figures cancels in both ratios.
  const sdF = Math.sqrt(vf / (n - 1));
  const sdB = Math.sqrt(vb / (n - 1));
  if (sdB >= ZERO_SD) out[o + Slot.Beta] = cov / vb;
  if (sdB >= ZERO_SD && sdF >= ZERO_SD) out[o + Slot.Correlation] = cov / Math.sqrt(vf * vb);
}
