/**
 * From series to served rows: every fund's latest trailing row and all its calendar
 * years, with core's maths (the one implementation, shared with the server).
 */
import { toYmd } from '../core/dates.js';
import { allCalendarFigures, calendarFigures, trailingFigures } from '../core/returns.js';
import type { CalendarColumns, SeriesColumns, TrailingColumns } from '../core/snapshot/columns.js';
import { type CalendarFigures, type Series, TRAILING_KEYS } from '../core/types.js';

export interface DerivedRows {
  trailing: TrailingColumns;
  calendar: CalendarColumns;
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
    const firstNew = reuse ? reuse.firstNewDay[i] : -1;
    if (reuse && prevCalStart && firstNew === UNCHANGED) {
      asOf[i] = reuse.trailing.asOf[i];
      for (let k = 0; k < values.length; k++) values[k][i] = reuse.trailing.values[k][i];
      const rows = sliceCalendar(
        reuse.calendar,
        prevCalStart[i],
        prevCalStart[i + 1],
        Number.POSITIVE_INFINITY,
      );
      calendarParts.push(rows);
      calendarFund.push(i);
      calendarRows += rows.length;
      continue;
    }
    const s: Series = { date: series.date, value: series.value, start: offset[i], length: length[i] };
    const t = trailingFigures(s, undefined, scratch)!;
    asOf[i] = t.asOf;
    for (let k = 0; k < values.length; k++) values[k][i] = scratch[k];
    let rows: CalendarFigures[];
    if (reuse && prevCalStart) {
      const fromYear = toYmd(firstNew).y;
      rows = sliceCalendar(reuse.calendar, prevCalStart[i], prevCalStart[i + 1], fromYear);
      const lastYear = toYmd(s.date[s.start + s.length - 1]).y;
      for (let y = fromYear; y <= lastYear; y++) {
        const row = calendarFigures(s, y);
        if (row) rows.push(row);
      }
    } else {
      rows = allCalendarFigures(s);
    }
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

/** A fund's stored rows [from, to) with a year before `beforeYear`. */
function sliceCalendar(
  cal: CalendarColumns,
  from: number,
  to: number,
  beforeYear: number,
): CalendarFigures[] {
  const out: CalendarFigures[] = [];
  for (let r = from; r < to && cal.year[r] < beforeYear; r++) {
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
