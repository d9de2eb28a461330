/**
 * From series to served rows: every fund's latest trailing row, all its calendar
 * years and its latest risk figures, with core's maths (the one implementation,
 * shared with the server).
 */
import { toYmd } from '../core/dates.js';
import { allCalendarFigures, calendarFigures, trailingFigures } from '../core/returns.js';
import { RateTable } from '../core/risk.js';
import {
  type CalendarColumns,
  type RateColumns,
  type RiskColumns,
  rangeOf,
  type SeriesInput,
  seriesParts,
  type TrailingColumns,
} from '../core/snapshot/columns.js';
import { RiskRows } from '../core/snapshot/risk-columns.js';
import { type CalendarFigures, type Series, TRAILING_KEYS } from '../core/types.js';

export interface DerivedRows {
  trailing: TrailingColumns;
  calendar: CalendarColumns;
  risk: RiskColumns;
}

/**
 * A previous snapshot's rows for a daily append (C37): a fund's series only grows
 * at its end, so its calendar years before the first appended date are unchanged
 * and only its later years and its trailing row are computed again.
 */
export interface ReusableRows {
  trailing: TrailingColumns;
  calendar: CalendarColumns;
  /** For each fund: the first appended date, or UNCHANGED when nothing was appended. */
  firstNewDay: Int32Array;
}

export const UNCHANGED = 2147483647;

export function deriveRows(
  series: SeriesInput,
  offset: Int32Array,
  length: Int32Array,
  rates: RateColumns,
  reuse?: ReusableRows,
): DerivedRows {
  const risk = new RiskRows(offset.length, RateTable.of(rates.date, rates.yield));
  const funds = offset.length;
  const asOf = new Int32Array(funds);
  const values = TRAILING_KEYS.map(() => new Float64Array(funds));
  const scratch = new Float64Array(TRAILING_KEYS.length);
  const prevCalStart = reuse ? calendarStarts(reuse.calendar, reuse.trailing.asOf.length) : null;
  const calendar = new CalendarRows(reuse ? reuse.calendar.length + funds : funds * 16);
  const fundSeries = new FundSeries(series);

  for (let i = 0; i < funds; i++) {
    const firstNew = reuse ? reuse.firstNewDay[i] : -1;
    // Risk figures are computed again for every fund: new rates change an unchanged fund's Sharpe.
    const s = fundSeries.at(offset[i], length[i]);
    risk.add(i, s);
    if (reuse && prevCalStart && firstNew === UNCHANGED) {
      asOf[i] = reuse.trailing.asOf[i];
      for (let k = 0; k < values.length; k++) values[k][i] = reuse.trailing.values[k][i];
      calendar.copy(i, reuse.calendar, prevCalStart[i], prevCalStart[i + 1], Number.POSITIVE_INFINITY);
      continue;
    }
    const t = trailingFigures(s, undefined, scratch)!;
    asOf[i] = t.asOf;
    for (let k = 0; k < values.length; k++) values[k][i] = scratch[k];
    if (reuse && prevCalStart) {
      const fromYear = toYmd(firstNew).y;
      calendar.copy(i, reuse.calendar, prevCalStart[i], prevCalStart[i + 1], fromYear);
      const lastYear = toYmd(s.date[s.start + s.length - 1]).y;
      for (let y = fromYear; y <= lastYear; y++) {
        const row = calendarFigures(s, y);
        if (row) calendar.add(i, row);
      }
    } else {
      for (const row of allCalendarFigures(s)) calendar.add(i, row);
    }
  }
  return { trailing: { asOf, values }, calendar: calendar.columns(), risk: risk.columns };
}

/**
 * Calendar rows gathered fund by fund straight into typed arrays that grow by
 * doubling, so that no object per row outlives its fund (400,000 of them at 32,000
 * funds, kept to the end, made the old heap grow by tens of MB).
 */
class CalendarRows {
  #n = 0;
  #fund: Int32Array;
  #year: Int32Array;
  #totalReturn: Float64Array;
  #startDate: Int32Array;
  #endDate: Int32Array;
  #isPartial: Uint8Array;

  constructor(capacity: number) {
    const c = Math.max(16, capacity);
    this.#fund = new Int32Array(c);
    this.#year = new Int32Array(c);
    this.#totalReturn = new Float64Array(c);
    this.#startDate = new Int32Array(c);
    this.#endDate = new Int32Array(c);
    this.#isPartial = new Uint8Array(c);
  }

  add(f: number, row: CalendarFigures): void {
    if (this.#n === this.#fund.length) this.#grow();
    const r = this.#n++;
    this.#fund[r] = f;
    this.#year[r] = row.year;
    this.#totalReturn[r] = row.totalReturn;
    this.#startDate[r] = row.startDate;
    this.#endDate[r] = row.endDate;
    this.#isPartial[r] = row.isPartial ? 1 : 0;
  }

  /** Stored rows [from, to) with a year before `beforeYear`, as fund f's. */
  copy(f: number, cal: CalendarColumns, from: number, to: number, beforeYear: number): void {
    for (let r = from; r < to && cal.year[r] < beforeYear; r++) {
      if (this.#n === this.#fund.length) this.#grow();
      const w = this.#n++;
      this.#fund[w] = f;
      this.#year[w] = cal.year[r];
      this.#totalReturn[w] = cal.totalReturn[r];
      this.#startDate[w] = cal.startDate[r];
      this.#endDate[w] = cal.endDate[r];
      this.#isPartial[w] = cal.isPartial[r];
    }
  }

  /** Views, not copies: the spare capacity costs less than a second copy of every column. */
  columns(): CalendarColumns {
    const n = this.#n;
    return {
      length: n,
      fund: this.#fund.subarray(0, n),
      year: this.#year.subarray(0, n),
      totalReturn: this.#totalReturn.subarray(0, n),
      startDate: this.#startDate.subarray(0, n),
      endDate: this.#endDate.subarray(0, n),
      isPartial: this.#isPartial.subarray(0, n),
    };
  }

  #grow(): void {
    const bigger = <T extends Int32Array | Float64Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(a.length * 2);
      b.set(a);
      return b;
    };
    this.#fund = bigger(this.#fund);
    this.#year = bigger(this.#year);
    this.#totalReturn = bigger(this.#totalReturn);
    this.#startDate = bigger(this.#startDate);
    this.#endDate = bigger(this.#endDate);
    this.#isPartial = bigger(this.#isPartial);
  }
}

/**
 * One fund's rows of a series in parts, as the return maths wants them (one array):
 * a view where the fund lies within one part (a full build's), else a copy into a
 * scratch buffer reused fund after fund (an append's old slice and new rows).
 */
class FundSeries {
  readonly #parts;
  readonly #starts: Int32Array;
  #date = new Int32Array(0);
  #value = new Float64Array(0);

  constructor(series: SeriesInput) {
    this.#parts = seriesParts(series);
    this.#starts = new Int32Array(this.#parts.length);
    for (let p = 1; p < this.#parts.length; p++)
      this.#starts[p] = this.#starts[p - 1] + this.#parts[p - 1].date.length;
  }

  /** Valid until the next call. */
  at(offset: number, length: number): Series {
    let p = rangeOf(this.#starts, offset);
    let from = offset - this.#starts[p];
    const part = this.#parts[p];
    if (from + length <= part.date.length) return { date: part.date, value: part.value, start: from, length };
    if (this.#date.length < length) {
      const size = Math.max(length, 2 * this.#date.length);
      this.#date = new Int32Array(size);
      this.#value = new Float64Array(size);
    }
    for (let got = 0; got < length; p++, from = 0) {
      const { date, value } = this.#parts[p];
      const take = Math.min(date.length - from, length - got);
      this.#date.set(date.subarray(from, from + take), got);
      this.#value.set(value.subarray(from, from + take), got);
      got += take;
    }
    return { date: this.#date, value: this.#value, start: 0, length };
  }
}

/** Row index where each fund's calendar rows start; entry `funds` is the total. */
function calendarStarts(cal: CalendarColumns, funds: number): Int32Array {
  const starts = new Int32Array(funds + 1);
  let r = 0;
  for (let f = 0; f < funds; f++) {
    starts[f] = r;
    while (r < cal.length && cal.fund[r] === f) r++;
  }
  starts[funds] = cal.length;
  return starts;
}
