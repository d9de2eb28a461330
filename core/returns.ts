/**
 * The return maths (C2–C12), the one implementation both the builder (latest rows,
 * every calendar year) and the server (as_of rows, explicit years) call.
 *
 * Figures come out as unrounded percent doubles, NaN meaning null; C1 rounding is
 * done once, at the edge (core/format.ts), so no figure is ever rounded twice.
 */
import { isLastTradingDayOfMonth, lastTradingDayOfYear, previousTradingDay } from './calendar.js';
import { addMonths, type Day, endOfMonthAfter, endOfYear, fromYmd, monthFirstDay, toYmd } from './dates.js';
import { percentChange } from './decimal.js';
import { type CalendarFigures, type Series, TRAILING_KEYS, type TrailingFigures } from './types.js';

/** C4b: a base observation more than this many days before its start date is a gap. */
export const MAX_BASE_GAP_DAYS = 7;

/** Days per year for the since-inception span (C7). */
const DAYS_PER_YEAR = 365.25;

/**
 * Index of the last observation on or before `day` within the fund's slice, or -1.
 * The series is strictly ascending (C2, verified at snapshot load); the search
 * gallops back from the latest observation (indexBefore).
 */
export function lastIndexOnOrBefore(s: Series, day: Day): number {
  const last = s.start + s.length - 1;
  if (last < s.start || s.date[s.start] > day) return -1;
  if (s.date[last] <= day) return last;
  return indexBefore(s, last, day);
}

/** A period measured in calendar months (1M … 30Y) or one of the special starts. */
type PeriodRule =
  | { kind: 'months'; months: number; years: number }
  | { kind: 'day' }
  | { kind: 'week' }
  | { kind: 'ytd' }
  | { kind: 'mtd' }
  | { kind: 'qtd' }
  | { kind: 'inception' };

/** Rules in TRAILING_KEYS order; `years` ≥ 2 means annualized over that many years (C6). */
const RULES: Record<(typeof TRAILING_KEYS)[number], PeriodRule> = {
  return_1d: { kind: 'day' },
  return_1w: { kind: 'week' },
  return_1m: { kind: 'months', months: 1, years: 0 },
  return_3m: { kind: 'months', months: 3, years: 0 },
  return_6m: { kind: 'months', months: 6, years: 0 },
  return_ytd: { kind: 'ytd' },
  return_1y: { kind: 'months', months: 12, years: 1 },
  return_2y: { kind: 'months', months: 24, years: 2 },
  return_3y: { kind: 'months', months: 36, years: 3 },
  return_4y: { kind: 'months', months: 48, years: 4 },
  return_5y: { kind: 'months', months: 60, years: 5 },
  return_7y: { kind: 'months', months: 84, years: 7 },
  return_10y: { kind: 'months', months: 120, years: 10 },
  return_15y: { kind: 'months', months: 180, years: 15 },
  return_20y: { kind: 'months', months: 240, years: 20 },
  return_earliest_available: { kind: 'inception' },
  return_mtd: { kind: 'mtd' },
  return_qtd: { kind: 'qtd' },
  return_25y: { kind: 'months', months: 300, years: 25 },
  return_30y: { kind: 'months', months: 360, years: 30 },
};

const RULE_LIST: readonly PeriodRule[] = TRAILING_KEYS.map((k) => RULES[k]);

/**
 * Start date of an N-month period ending at `anchor` (C4): calendar months back with
 * the day clamped, except that an anchor on the market's last trading day of its
 * month starts at the last day of the target month, so month-end figures line up
 * with fact sheets.
 */
export function monthsStart(anchor: Day, months: number, anchorIsMonthEnd: boolean): Day {
  return anchorIsMonthEnd ? endOfMonthAfter(anchor, -months) : addMonths(anchor, -months);
}

/** Last day of the quarter before the anchor's quarter (QTD base date, C5). */
export function previousQuarterEnd(anchor: Day): Day {
  const { y, m } = toYmd(anchor);
  const firstMonthOfQuarter = Math.floor((m - 1) / 3) * 3 + 1;
  // The day before the quarter's first day is the previous quarter's last day.
  return fromYmd(y, firstMonthOfQuarter, 1) - 1;
}

/** P_end / P_base − 1 as a percent (C6 cumulative), exact near a C1 tie (decimal.ts). */
function cumulative(end: number, base: number): number {
  return percentChange(end, base);
}

/**
 * CAGR over `years` as a percent (C6 annualized). A ratio beyond the doubles (prices
 * 1e-200 then 1e200, each valid by C2) is taken through logarithms; a figure that is
 * itself too large for a double is absent (C1: null), never Infinity.
 */
function annualized(end: number, base: number, years: number): number {
  const ratio = end / base;
  const x =
    ratio < Number.POSITIVE_INFINITY
      ? (ratio ** (1 / years) - 1) * 100
      : Math.expm1((Math.log(end) - Math.log(base)) / years) * 100;
  return x < Number.POSITIVE_INFINITY ? x : Number.NaN;
}

/**
 * Start date for a period rule given the anchor's civil date (computed once per
 * row, not once per period); NaN where the rule has no start (inception).
 */
function periodStart(rule: PeriodRule, anchor: Day, y: number, m: number, d: number, monthEnd: boolean): Day {
  switch (rule.kind) {
    case 'months': {
      // C4: calendar months back, the day clamped; a month-end anchor starts at the target month-end.
      const total = y * 12 + (m - 1) - rule.months;
      const first = monthFirstDay(total);
      const dim = monthFirstDay(total + 1) - first;
      return first + (monthEnd || d > dim ? dim : d) - 1;
    }
    case 'day':
      return previousTradingDay(anchor);
    case 'week':
      return anchor - 7;
    case 'ytd':
      // The day before 1 January: 31 December of the year before.
      return monthFirstDay(y * 12) - 1;
    case 'mtd':
      return monthFirstDay(y * 12 + m - 1) - 1;
    case 'qtd':
      return monthFirstDay(y * 12 + Math.floor((m - 1) / 3) * 3) - 1;
    case 'inception':
      return Number.NaN;
  }
}

/**
 * The trailing row for requested date `requested` (C3; undefined = the latest
 * observation), or null when the fund has no observation on or before it.
 * `out` may be passed to avoid an allocation on the server's hot path.
 */
export function trailingFigures(
  s: Series,
  requested?: Day,
  out: Float64Array = new Float64Array(TRAILING_KEYS.length),
): TrailingFigures | null {
  const a = requested === undefined ? s.start + s.length - 1 : lastIndexOnOrBefore(s, requested);
  if (a < 0) return null;
  const anchor = s.date[a];
  const end = s.value[a];
  const monthEnd = isLastTradingDayOfMonth(anchor);
  const { y, m, d } = toYmd(anchor);
  const starts = periodStarts;
  for (let k = 0; k < RULE_LIST.length; k++) starts[k] = periodStart(RULE_LIST[k], anchor, y, m, d, monthEnd);
  touchBases(s, a, starts);
  for (let k = 0; k < RULE_LIST.length; k++) {
    const rule = RULE_LIST[k];
    if (rule.kind === 'inception') {
      out[k] = sinceInception(s, a);
      continue;
    }
    const b = baseIndexBefore(s, a, starts[k]);
    if (b < 0) {
      out[k] = Number.NaN;
    } else if (rule.kind === 'months' && rule.years >= 2) {
      out[k] = annualized(end, s.value[b], rule.years);
    } else {
      out[k] = cumulative(end, s.value[b]);
    }
  }
  return { asOf: anchor, values: out };
}

/** Each period's start date for the row being computed (NaN: inception), reused. */
const periodStarts = new Float64Array(RULE_LIST.length);

/** Where touchBases leaves its sum, so its loads are not dropped as unused. */
const touched = new Float64Array(1);

/**
 * Load the observation each base lookup will start from, all in one loop with no
 * branch on the loaded values. In a series far larger than the CPU caches each is a
 * cache miss; issued together they overlap instead of being paid one after another.
 */
function touchBases(s: Series, a: number, starts: Float64Array): void {
  const dates = s.date;
  const values = s.value;
  const first = s.start;
  const d0 = dates[first];
  const span = (a - first) / (dates[a] - d0);
  let sum = values[first];
  for (let k = 0; k < starts.length; k++) {
    const g = first + Math.floor((starts[k] - d0) * span);
    if (g >= first && g < a) sum += dates[g] + values[g];
  }
  touched[0] = sum;
}

/**
 * The base price for a start date (C4, C4b, C5), among observations before the
 * anchor `a` (every start precedes it): the last observation on or before `start`,
 * unless there is none or it lies more than 7 days before `start`. The index or -1.
 */
function baseIndexBefore(s: Series, a: number, start: Day): number {
  if (s.date[s.start] > start) return -1;
  const b = indexBefore(s, a, start);
  return start - s.date[b] > MAX_BASE_GAP_DAYS ? -1 : b;
}

/**
 * The last index whose date is on or before `day`, given dates[s.start] <= day <
 * dates[hi]. The series of 32,000 funds is far larger than the CPU caches, so a
 * plain binary search costs a cache miss per step; guessing the index from the
 * date gap and galloping from the guess touches a few neighbouring lines instead.
 */
function indexBefore(s: Series, hi0: number, day: Day): number {
  const dates = s.date;
  const first = s.start;
  // Interpolate over the fund's own density: holidays and thin early years even out.
  const d0 = dates[first];
  let guess = first + Math.floor(((day - d0) * (hi0 - first)) / (dates[hi0] - d0));
  if (guess >= hi0) guess = hi0 - 1;
  let lo: number;
  let hi: number;
  if (dates[guess] <= day) {
    lo = guess;
    let step = 1;
    hi = lo + step;
    while (hi < hi0 && dates[hi] <= day) {
      lo = hi;
      step *= 2;
      hi = lo + step;
    }
    if (hi > hi0) hi = hi0;
  } else {
    hi = guess;
    let step = 1;
    lo = hi - step;
    while (lo > first && dates[lo] > day) {
      hi = lo;
      step *= 2;
      lo = hi - step;
    }
    if (lo < first) lo = first;
  }
  // Invariant: dates[lo] <= day < dates[hi].
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (dates[mid] <= day) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** C7: since the first observation; annualized over the span when it is ≥ 2 years. */
function sinceInception(s: Series, a: number): number {
  const first = s.start;
  if (a === first) return Number.NaN;
  const span = (s.date[a] - s.date[first]) / DAYS_PER_YEAR;
  const end = s.value[a];
  const base = s.value[first];
  return span >= 2 ? annualized(end, base, span) : cumulative(end, base);
}

/**
 * The calendar-year row for year `y` (C10, C11), or null when the fund has no
 * observation in that year.
 */
export function calendarFigures(s: Series, y: number): CalendarFigures | null {
  const e = lastIndexOnOrBefore(s, endOfYear(y));
  if (e < 0 || s.date[e] < fromYmd(y, 1, 1)) return null;
  return calendarFromEnd(s, y, e);
}

/** C10/C11 given the index of the year's last observation. */
function calendarFromEnd(s: Series, y: number, e: number): CalendarFigures {
  const previousYearEnd = endOfYear(y - 1);
  let b = lastIndexOnOrBefore(s, previousYearEnd);
  // No observation before the year: the inception year, measured from the first.
  if (b < 0) b = s.start;
  const baseDate = s.date[b];
  const endDate = s.date[e];
  const baseInPreviousYear = baseDate <= previousYearEnd && baseDate > endOfYear(y - 2);
  let totalReturn: number;
  if (b === e) totalReturn = Number.NaN;
  else if (baseDate <= previousYearEnd && previousYearEnd - baseDate > MAX_BASE_GAP_DAYS)
    totalReturn = Number.NaN;
  else totalReturn = cumulative(s.value[e], s.value[b]);
  const isPartial = !baseInPreviousYear || endDate < lastTradingDayOfYear(y);
  return { year: y, totalReturn, startDate: baseDate, endDate, isPartial };
}

/** Every calendar-year row of a fund, ascending by year (C10). */
export function allCalendarFigures(s: Series): CalendarFigures[] {
  const rows: CalendarFigures[] = [];
  if (s.length === 0) return rows;
  const last = s.start + s.length - 1;
  // Walk the series once: each year's end is the index before the next year's first.
  let i = s.start;
  while (i <= last) {
    const y = toYmd(s.date[i]).y;
    const nextYearStart = fromYmd(y + 1, 1, 1);
    let e = i;
    while (e + 1 <= last && s.date[e + 1] < nextYearStart) e++;
    rows.push(calendarFromEnd(s, y, e));
    i = e + 1;
  }
  return rows;
}

/**
 * C12: the default row among one fund's rows [from, to) (ascending by year): the
 * latest that is complete and has a figure, else the latest. -1 when there are none.
 */
export function defaultCalendarRow(
  isPartial: ArrayLike<number>,
  totalReturn: ArrayLike<number>,
  from: number,
  to: number,
): number {
  for (let r = to - 1; r >= from; r--) {
    if (isPartial[r] === 0 && !Number.isNaN(totalReturn[r])) return r;
  }
  return to > from ? to - 1 : -1;
}
