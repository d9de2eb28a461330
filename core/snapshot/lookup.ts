/**
 * Point lookups over a loaded snapshot, answering with the JSON rows the API
 * serves. The CLI's `query` and the server both go through here, so a row printed
 * by one is the row served by the other.
 */

import { calendarFigures, defaultCalendarRow, trailingFigures } from '../returns.js';
import { calendarRowJson, fundJson, trailingRowJson } from '../rows.js';
import { StringIndex } from '../string-index.js';
import {
  type CalendarFigures,
  type FundRecord,
  type Series,
  TRAILING_KEYS,
  type TrailingFigures,
} from '../types.js';
import { fundRecordAt, type SnapshotColumns } from './columns.js';

export class SnapshotLookup {
  /** Code → fund index; a StringIndex since Map.get on request strings is slow (string-index.ts). */
  readonly #index: StringIndex;
  /** Row where each fund's calendar rows start; entry [funds] is the total. */
  readonly calendarStart: Int32Array;
  /** Each fund's C12 default calendar row (absolute row index), -1 when none. */
  readonly calendarDefault: Int32Array;

  constructor(readonly cols: SnapshotColumns) {
    const f = cols.funds;
    this.#index = StringIndex.of(f.code);
    const cal = cols.calendar;
    this.calendarStart = new Int32Array(f.length + 1);
    this.calendarDefault = new Int32Array(f.length).fill(-1);
    let r = 0;
    for (let i = 0; i < f.length; i++) {
      this.calendarStart[i] = r;
      while (r < cal.length && cal.fund[r] === i) r++;
      this.calendarDefault[i] = defaultCalendarRow(cal.isPartial, cal.totalReturn, this.calendarStart[i], r);
    }
    this.calendarStart[f.length] = cal.length;
  }

  get fundCount(): number {
    return this.cols.funds.length;
  }

  /** Fund index for an exact, case-sensitive code (C15), or -1. */
  find(code: string): number {
    return this.#index.get(code);
  }

  /** Fund index for the code spelled by the ASCII bytes `b[start..end)`, or -1. */
  findBytes(b: Uint8Array, start: number, end: number): number {
    return this.#index.getBytes(b, start, end);
  }

  series(i: number): Series {
    const f = this.cols.funds;
    return {
      date: this.cols.series.date,
      value: this.cols.series.value,
      start: f.seriesOffset[i],
      length: f.seriesLength[i],
    };
  }

  record(i: number): FundRecord {
    return fundRecordAt(this.cols.funds, i);
  }

  fundJson(i: number): string {
    const f = this.cols.funds;
    const first = this.cols.series.date[f.seriesOffset[i]];
    const last = this.cols.series.date[f.seriesOffset[i] + f.seriesLength[i] - 1];
    return fundJson(this.record(i), first, last);
  }

  /** The precomputed latest trailing row (C3 with no date). */
  latestTrailing(i: number): TrailingFigures {
    const t = this.cols.trailing;
    const values = new Float64Array(TRAILING_KEYS.length);
    for (let k = 0; k < values.length; k++) values[k] = t.values[k][i];
    return { asOf: t.asOf[i], values };
  }

  latestTrailingJson(i: number): string {
    return trailingRowJson(this.cols.funds.code[i], this.latestTrailing(i));
  }

  /** The row anchored at `day` (C3), computed from the series; null when none. */
  trailingAtJson(i: number, day: number): string | null {
    const f = trailingFigures(this.series(i), day);
    return f === null ? null : trailingRowJson(this.cols.funds.code[i], f);
  }

  calendarRow(r: number): CalendarFigures {
    const c = this.cols.calendar;
    return {
      year: c.year[r],
      totalReturn: c.totalReturn[r],
      startDate: c.startDate[r],
      endDate: c.endDate[r],
      isPartial: c.isPartial[r] === 1,
    };
  }

  /** C12 default row, or null for a fund without rows. */
  defaultCalendarJson(i: number): string | null {
    const r = this.calendarDefault[i];
    return r < 0 ? null : calendarRowJson(this.cols.funds.code[i], this.calendarRow(r));
  }

  /** The row for an explicit year (C10), from the precomputed rows; null when none. */
  calendarYearJson(i: number, year: number): string | null {
    const c = this.cols.calendar;
    let lo = this.calendarStart[i];
    let hi = this.calendarStart[i + 1] - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const y = c.year[mid];
      if (y === year) return calendarRowJson(this.cols.funds.code[i], this.calendarRow(mid));
      if (y < year) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }

  /** Same row computed from the series, for cross-checking the precomputed one. */
  calendarYearFromSeriesJson(i: number, year: number): string | null {
    const f = calendarFigures(this.series(i), year);
    return f === null ? null : calendarRowJson(this.cols.funds.code[i], f);
  }
}
