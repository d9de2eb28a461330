/**
 * The screen's column registry (C50): figure name → one value per fund, and each
 * column's sorted order, built once per snapshot and thread.
 *
 * Values are the figures as served, rounded by C1 (the number the 4-decimal string
 * says): a filter and a sort then agree with what a row shows, and two funds
 * showing the same figure are tied, broken by code (C50). Funds are indexed in code
 * order, so a stable order by (value, index) is (value, code).
 */
import { c1Units } from '../../core/format.js';
import type { SnapshotLookup } from '../../core/snapshot/lookup.js';
import { TRAILING_KEYS } from '../../core/types.js';
import { HISTORY_YEARS } from '../../schemas/screen.js';

/** Days per year of `history_years`, as since-inception spans count them (C7). */
const DAYS_PER_YEAR = 365.25;

/** Risk figures by screen name (`volatility_3y`), aligned with the fund index, NaN for null. */
export type RiskColumns = ReadonlyMap<string, Float64Array>;

export interface ScreenColumn {
  readonly name: string;
  /** The figure rounded as served; NaN = null. */
  readonly keys: Float64Array;
  /** Fund indices by (key, index) ascending, funds without the figure last in index order. */
  readonly order: Int32Array;
  /** How many funds have the figure: order[0 .. nonNull). */
  readonly nonNull: number;
}

function columnOf(name: string, raw: ArrayLike<number>): ScreenColumn {
  const F = raw.length;
  const keys = new Float64Array(F);
  const units = new Float64Array(F);
  let nonNull = 0;
  let largest = 0;
  for (let i = 0; i < F; i++) {
    const u = c1Units(raw[i]);
    units[i] = u;
    // The double nearest the 4-decimal string: Number("12.3456") is 123456 / 10000.
    keys[i] = u / 10000;
    if (!Number.isNaN(u)) {
      nonNull++;
      largest = Math.max(largest, Math.abs(u));
    }
  }
  const order = new Int32Array(F);
  let b = nonNull;
  for (let i = 0; i < F; i++) if (Number.isNaN(units[i])) order[b++] = i;
  // (units, index) packed in one double sorts natively, several times faster than a
  // comparator; figures too large to pack (none a fund has) take the comparator.
  let span = 1;
  while (span < F) span *= 2;
  if ((largest + 1) * span < 2 ** 53) {
    const packed = new Float64Array(nonNull);
    let a = 0;
    for (let i = 0; i < F; i++) if (!Number.isNaN(units[i])) packed[a++] = units[i] * span + i;
    packed.sort();
    for (let p = 0; p < nonNull; p++) {
      const v = packed[p];
      order[p] = v - Math.floor(v / span) * span;
    }
  } else {
    let a = 0;
    for (let i = 0; i < F; i++) if (!Number.isNaN(units[i])) order[a++] = i;
    order.subarray(0, nonNull).sort((x, y) => keys[x] - keys[y] || x - y);
  }
  return { name, keys, order, nonNull };
}

/** Years from each fund's first to its last observation. */
function historyYears(lookup: SnapshotLookup): Float64Array {
  const f = lookup.cols.funds;
  const date = lookup.cols.series.date;
  const out = new Float64Array(f.length);
  for (let i = 0; i < f.length; i++) {
    const first = f.seriesOffset[i];
    out[i] = (date[first + f.seriesLength[i] - 1] - date[first]) / DAYS_PER_YEAR;
  }
  return out;
}

export class ScreenColumns {
  /** Names in registry order: the trailing periods, history_years, then the risk figures. */
  readonly names: readonly string[];
  readonly #raw = new Map<string, ArrayLike<number>>();
  readonly #built = new Map<string, ScreenColumn>();

  constructor(lookup: SnapshotLookup, risk: RiskColumns | null) {
    const t = lookup.cols.trailing;
    TRAILING_KEYS.forEach((k, j) => {
      this.#raw.set(k, t.values[j]);
    });
    this.#raw.set(HISTORY_YEARS, historyYears(lookup));
    if (risk !== null) {
      for (const [name, values] of risk) {
        if (values.length !== lookup.fundCount)
          throw new RangeError(
            `risk column ${name} has ${values.length} values for ${lookup.fundCount} funds`,
          );
        this.#raw.set(name, values);
      }
    }
    this.names = [...this.#raw.keys()];
  }

  has(name: string): boolean {
    return this.#raw.has(name);
  }

  /** The figure per fund as computed (unrounded), for writing rows. */
  values(name: string): ArrayLike<number> {
    const raw = this.#raw.get(name);
    if (raw === undefined) throw new RangeError(`no screen column ${name}`);
    return raw;
  }

  /** The column, its order built on first use (prepareAll builds every one at load). */
  column(name: string): ScreenColumn {
    let c = this.#built.get(name);
    if (c === undefined) {
      const raw = this.#raw.get(name);
      if (raw === undefined) throw new RangeError(`no screen column ${name}`);
      c = columnOf(name, raw);
      this.#built.set(name, c);
    }
    return c;
  }

  /** Every column and order, off the request path. */
  prepareAll(): this {
    for (const n of this.names) this.column(n);
    return this;
  }
}
