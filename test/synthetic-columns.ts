/**
 * Synthetic snapshot columns for tests and benchmarks (not the builder's universe
 * generator): deterministic, valid by construction, with nulls in every nullable
 * column and non-ASCII text, and fast enough to make 100M rows in a few seconds.
 */

import { fromYmd, monthFirstDay, toYmd } from '../core/dates.js';
import { monthOf, RISK_COLUMN_NAMES, RISK_WINDOWS, STORED_DATES } from '../core/risk.js';
import { NULL_DAY, type SnapshotColumns } from '../core/snapshot/columns.js';
import { TRAILING_KEYS } from '../core/types.js';
import { seededRandom } from './seeded-random.js';

export interface SyntheticOptions {
  funds: number;
  /** Total series rows; at least `funds`. */
  observations: number;
  seed?: number;
  /** Last observation of the latest funds; default 2025-06-30. */
  endDay?: number;
}

export function syntheticColumns(opts: SyntheticOptions): SnapshotColumns {
  const F = opts.funds;
  const N = opts.observations;
  if (N < F) throw new Error('need at least one observation per fund');
  const rand = seededRandom(opts.seed ?? 1);
  const endDay = opts.endDay ?? fromYmd(2025, 6, 30);

  // Lengths vary around the mean in ± pairs so they still sum to N.
  const base = Math.floor(N / F);
  const seriesLength = new Int32Array(F).fill(base);
  for (let i = 0; i < N - base * F; i++) seriesLength[i]++;
  for (let i = 0; i + 1 < F; i += 2) {
    const d = Math.floor(rand() * (Math.min(seriesLength[i], seriesLength[i + 1]) - 1) * 0.9);
    seriesLength[i] += d;
    seriesLength[i + 1] -= d;
  }
  const seriesOffset = new Int32Array(F);
  for (let i = 1; i < F; i++) seriesOffset[i] = seriesOffset[i - 1] + seriesLength[i - 1];

  const date = new Int32Array(N);
  const value = new Float64Array(N);
  const lastDay = new Int32Array(F);
  for (let i = 0; i < F; i++) {
    // Every seventh fund stopped reporting earlier; fund 0 always reaches endDay.
    const last = i % 7 === 3 ? endDay - 1 - (i % 400) : endDay;
    lastDay[i] = last;
    const off = seriesOffset[i];
    const len = seriesLength[i];
    let v = 10 + rand() * 90;
    for (let j = 0; j < len; j++) {
      date[off + j] = last - (len - 1) + j;
      v *= 1 + (rand() - 0.499) * 0.02;
      value[off + j] = v;
    }
  }

  const code: string[] = [];
  const name: (string | null)[] = [];
  const country: (string | null)[] = [];
  const exchange: (string | null)[] = [];
  const currency: (string | null)[] = [];
  const type: ('ETF' | 'FUND')[] = [];
  const isin: (string | null)[] = [];
  const isInactive = new Uint8Array(F);
  const inactiveDate = new Int32Array(F).fill(NULL_DAY);
  const lastClose = new Float64Array(F);
  for (let i = 0; i < F; i++) {
    code.push(`F${String(i).padStart(7, '0')}.US`);
    name.push(i % 11 === 5 ? null : i % 13 === 0 ? `Fönd Ünïcode ${i} €` : `Fund ${i} Trust`);
    country.push(i % 17 === 4 ? null : 'USA');
    exchange.push(i % 19 === 4 ? null : 'US');
    currency.push(i % 23 === 4 ? null : 'USD');
    type.push(i % 3 === 0 ? 'ETF' : 'FUND');
    isin.push(i % 5 === 2 ? null : `US${String(i).padStart(9, '0')}0`);
    if (i % 7 === 3) {
      isInactive[i] = 1;
      if (i % 2 === 1) inactiveDate[i] = lastDay[i] + 1;
    }
    lastClose[i] = i % 9 === 4 ? Number.NaN : 5 + rand() * 100;
  }

  const asOf = new Int32Array(lastDay);
  const values = TRAILING_KEYS.map((_, k) => {
    const a = new Float64Array(F);
    for (let i = 0; i < F; i++) a[i] = (i + k) % 6 === 0 ? Number.NaN : (rand() - 0.4) * 50;
    return a;
  });

  let rows = 0;
  for (let i = 0; i < F; i++) {
    rows += toYmd(lastDay[i]).y - toYmd(date[seriesOffset[i]]).y + 1;
  }
  const calendar = {
    length: rows,
    fund: new Int32Array(rows),
    year: new Int32Array(rows),
    totalReturn: new Float64Array(rows),
    startDate: new Int32Array(rows),
    endDate: new Int32Array(rows),
    isPartial: new Uint8Array(rows),
  };
  let r = 0;
  for (let i = 0; i < F; i++) {
    const first = date[seriesOffset[i]];
    const y0 = toYmd(first).y;
    const y1 = toYmd(lastDay[i]).y;
    for (let y = y0; y <= y1; y++) {
      calendar.fund[r] = i;
      calendar.year[r] = y;
      calendar.startDate[r] = Math.max(first, fromYmd(y, 1, 1));
      calendar.endDate[r] = Math.min(lastDay[i], fromYmd(y, 12, 31));
      calendar.isPartial[r] = y === y0 || y === y1 ? 1 : 0;
      calendar.totalReturn[r] = (r + i) % 8 === 0 ? Number.NaN : (rand() - 0.4) * 40;
      r++;
    }
  }

  return {
    funds: {
      length: F,
      code,
      name,
      country,
      exchange,
      currency,
      type,
      isin,
      isInactive,
      inactiveDate,
      seriesOffset,
      seriesLength,
      lastClose,
    },
    series: { date, value },
    trailing: { asOf, values },
    calendar,
    // Fake figures, like the trailing ones: every fund's risk columns null.
    risk: {
      endMonth: Int32Array.from(lastDay, (d) => monthFirstDay(monthOf(d))),
      figures: RISK_COLUMN_NAMES.map(() => new Float64Array(F).fill(Number.NaN)),
      dates: Array.from({ length: RISK_WINDOWS.length * STORED_DATES.length }, () =>
        new Int32Array(F).fill(NULL_DAY),
      ),
    },
    rates: { date: new Int32Array(0), yield: new Float64Array(0) },
  };
}
