/**
 * Every fund's latest risk figures as the columns of risk.arrow: computed by the
 * builder for each snapshot, and by the reader for a snapshot written before risk
 * figures existed (format 1), with the same maths (core/risk.ts).
 */
import { monthFirstDay } from '../dates.js';
import {
  type RateTable,
  RISK_SLOTS,
  RISK_WINDOWS,
  riskAnchor,
  riskFigures,
  Slot,
  STORED_DATES,
  STORED_FIGURES,
} from '../risk.js';
import type { Series } from '../types.js';
import { NULL_DAY, type RiskColumns } from './columns.js';

/** Every fund's latest risk figures (C38–C44; beta and correlation are per request) into columns. */
export class RiskRows {
  readonly columns: RiskColumns;
  readonly #rates: RateTable;
  readonly #slots = new Float64Array(RISK_WINDOWS.length * RISK_SLOTS);

  constructor(funds: number, rates: RateTable) {
    this.#rates = rates;
    this.columns = {
      endMonth: new Int32Array(funds),
      figures: Array.from(
        { length: RISK_WINDOWS.length * STORED_FIGURES.length },
        () => new Float64Array(funds),
      ),
      dates: Array.from({ length: RISK_WINDOWS.length * STORED_DATES.length }, () => new Int32Array(funds)),
    };
  }

  add(i: number, s: Series): void {
    const anchor = riskAnchor(s)!;
    riskFigures(s, anchor, this.#rates, null, this.#slots);
    const c = this.columns;
    c.endMonth[i] = monthFirstDay(anchor.endMonth);
    for (let w = 0; w < RISK_WINDOWS.length; w++) {
      const o = w * RISK_SLOTS;
      for (let f = 0; f < STORED_FIGURES.length; f++)
        c.figures[w * STORED_FIGURES.length + f][i] = this.#slots[o + f];
      for (let d = 0; d < STORED_DATES.length; d++) {
        const slot = Slot.PeakDate + d;
        const x = this.#slots[o + slot];
        c.dates[w * STORED_DATES.length + d][i] = Number.isNaN(x)
          ? NULL_DAY
          : slot >= Slot.BestMonthDate
            ? monthFirstDay(x)
            : x;
      }
    }
  }
}
