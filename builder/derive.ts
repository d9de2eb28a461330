/**
 * From series to served rows: every fund's latest trailing row and all its calendar
 * years, with core's maths (the one implementation, shared with the server).
 */
import { allCalendarFigures, trailingFigures } from '../core/returns.js';
import type { CalendarColumns, SeriesColumns, TrailingColumns } from '../core/snapshot/columns.js';
import { type CalendarFigures, type Series, TRAILING_KEYS } from '../core/types.js';

export interface DerivedRows {
  trailing: TrailingColumns;
  calendar: CalendarColumns;
}

/** A previous snapshot's rows, reused for funds whose series did not change (daily append). */
export interface ReusableRows {
  trailing: TrailingColumns;
  calendar: CalendarColumns;
  /** For each new fund index: its index in the previous rows, or -1 when it changed. */
  previousIndex: Int32Array;
}

export function deriveRows(
  series: SeriesColumns,
  offset: Int32Array,
  length: Int32Array,
  reuse?: ReusableRows,
): DerivedRows {
  const funds = offset.length;
  const asOf = new Int32Array(funds);
  const values = TRAILING_KEYS.map(() => new Float64Array(funds));
  const scratch = new Float64Array(TRAILING_KEYS.length);
  const calendarParts: CalendarFigures[][] = [];
  const calendarFund: number[] = [];
  const prevCalStart = reuse ? calendarStarts(reuse.calendar, reuse.trailing.asOf.length) : null;
  let calendarRows = 0;

  for (let i = 0; i < funds; i++) {
    const p = reuse ? reuse.previousIndex[i] : -1;
    if (reuse && p >= 0 && prevCalStart) {
      asOf[i] = reuse.trailing.asOf[p];
      for (let k = 0; k < values.length; k++) values[k][i] = reuse.trailing.values[k][p];
      const from = prevCalStart[p];
      const to = prevCalStart[p + 1];
      calendarParts.push(sliceCalendar(reuse.calendar, from, to));
      calendarFund.push(i);
      calendarRows += to - from;
      continue;
    }
    const s: Series = { date: series.date, value: series.value, start: offset[i], length: length[i] };
    const t = trailingFigures(s, undefined, scratch)!;
    asOf[i] = t.asOf;
    for (let k = 0; k < values.length; k++) values[k][i] = scratch[k];
    const rows = allCalendarFigures(s);
    calendarParts.push(rows);
    calendarFund.push(i);
    calendarRows += rows.length;
  }

  const calendar: CalendarColumns = {
    length: calendarRows,
    fund: new Int32Array(calendarRows),
    year: new Int32Array(calendarRows),
    totalReturn: new Float64Array(calendarRows),
    startDate: new Int32Array(calendarRows),
    endDate: new Int32Array(calendarRows),
    isPartial: new Uint8Array(calendarRows),
  };
  let r = 0;
  for (let j = 0; j < calendarParts.length; j++) {
    const f = calendarFund[j];
    for (const row of calendarParts[j]) {
      calendar.fund[r] = f;
      calendar.year[r] = row.year;
      calendar.totalReturn[r] = row.totalReturn;
      calendar.startDate[r] = row.startDate;
      calendar.endDate[r] = row.endDate;
      calendar.isPartial[r] = row.isPartial ? 1 : 0;
      r++;
    }
  }
  return { trailing: { asOf, values }, calendar };
}

/** Row index where each fund's calendar rows start; entry `funds` is the total. */
export function calendarStarts(cal: CalendarColumns, funds: number): Int32Array {
  const starts = new Int32Array(funds + 1);
  let r = 0;
  for (let f = 0; f < funds; f++) {
    starts[f] = r;
    while (r < cal.length && cal.fund[r] === f) r++;
  }
  starts[funds] = cal.length;
  return starts;
}

function sliceCalendar(cal: CalendarColumns, from: number, to: number): CalendarFigures[] {
  const out: CalendarFigures[] = [];
  for (let r = from; r < to; r++) {
    out.push({
      year: cal.year[r],
      totalReturn: cal.totalReturn[r],
      startDate: cal.startDate[r],
      endDate: cal.endDate[r],
      isPartial: cal.isPartial[r] === 1,
    });
  }
  return out;
}
