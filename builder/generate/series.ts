/**
 * One fund's price history: simulation into reusable typed arrays, then formatting
 * as EODHD-style price rows and C37 daily rows.
 *
 * The simulation never looks at the daily window, so a universe generated with and
 * without daily files describes the same series; only the writer decides where a row
 * goes.
 */
import { nextIndexValue } from '../../core/growth.js';
import { dailyLine, dividendCell, splitCell } from '../source/daily-file.js';
import { Rng, Stream } from './prng.js';
import { type FundPlan, MARKET_VOL, type Universe } from './universe.js';

/** Share of a fund's ordinary trading days with no row (a provider's gaps). */
const MISSING_DAY_RATE = 0.001;
const SQRT_252 = Math.sqrt(252);

/** A simulated series; only the first `length` entries of each array are meaningful. */
export interface FundSeries {
  length: number;
  /** Index of the row's date in the universe's trading days. */
  dayIdx: Int32Array;
  /** Prices in cents (Close is closeCents / 100). */
  openCents: Int32Array;
  highCents: Int32Array;
  lowCents: Int32Array;
  closeCents: Int32Array;
  volume: Float64Array;
  /** Distribution paid on the row's date (ex-date), 0 when none: the exact double used in the index. */
  dividend: Float64Array;
  /** Shares after / shares before on the row's date, 1 when none. */
  split: Float64Array;
  /** Total-return index (Adjusted_close): adj_0 = close_0, then C37 factors. */
  adj: Float64Array;
}

export function allocSeries(capacity: number): FundSeries {
  return {
    length: 0,
    dayIdx: new Int32Array(capacity),
    openCents: new Int32Array(capacity),
    highCents: new Int32Array(capacity),
    lowCents: new Int32Array(capacity),
    closeCents: new Int32Array(capacity),
    volume: new Float64Array(capacity),
    dividend: new Float64Array(capacity),
    split: new Float64Array(capacity),
    adj: new Float64Array(capacity),
  };
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}

function toCents(p: number): number {
  return Math.max(1, Math.round(p * 100));
}

/**
 * Simulates `plan`'s series into `out` (allocated with the universe's trading-day
 * count, or fresh when omitted), up to trading day `stopIdx` (default: the fund's
 * last). Deterministic in (universe seed, plan.index): stopping early gives a prefix
 * of the same series, which is what lets a refresh extend a generated universe.
 */
export function simulateFund(
  universe: Universe,
  plan: FundPlan,
  out?: FundSeries,
  stopIdx: number = plan.lastIdx,
): FundSeries {
  if (!plan.priced) throw new Error(`${plan.code} has no price series`);
  const s = out ?? allocSeries(universe.days.length);
  const rng = new Rng(universe.seed, Stream.series, plan.index);
  const { market, month, monthKey, dayOfMonth } = universe;
  const { isEtf, driftDaily, idioDaily, totalDaily, perDistribution, leveraged } = dailyModel(plan);

  let p = plan.startPrice;
  let closeC = writeFirstRow(s, plan, rng, totalDaily);
  let close = closeC / 100;
  let adj = close;
  // The first row is never an ex-date: start the distribution clocks at its month.
  let lastDistributionMonth = monthKey[plan.firstIdx];
  let lastGainMonth = monthKey[plan.firstIdx];
  let len = 1;
  const stop = Math.min(plan.lastIdx, stopIdx);
  for (let k = plan.firstIdx + 1; k <= stop; k++) {
    const pStart = p;
    p *= Math.exp(driftDaily + plan.beta * market[k] + idioDaily * rng.normal());

    let split = 1;
    if (plan.canSplit) {
      if (p > 300 && rng.chance(0.0008)) split = rng.pick([2, 2, 2, 3, 4]);
      else if (leveraged && p < 6 && rng.chance(0.01)) split = rng.pick([0.25, 0.2, 0.1]);
      else if (p > 40 && rng.chance(0.00002)) split = 2;
    }

    let dividend = 0;
    if (split === 1) {
      const mk = monthKey[k];
      let amount = 0;
      if (
        perDistribution > 0 &&
        mk !== lastDistributionMonth &&
        (plan.distributionMonths >> month[k]) & 1 &&
        dayOfMonth[k] >= plan.distributionDay
      ) {
        lastDistributionMonth = mk;
        amount += p * perDistribution * rng.range(0.8, 1.2);
      }
      if (
        plan.capitalGains &&
        month[k] === 11 &&
        mk !== lastGainMonth &&
        dayOfMonth[k] >= plan.capitalGainDay
      ) {
        lastGainMonth = mk;
        if (rng.chance(0.25)) amount += p * rng.range(0.005, 0.08);
      }
      dividend = round4(amount);
      if (dividend >= p * 0.5) dividend = 0;
    }
    p = p / split - dividend;
    // The open gaps from yesterday's price, restated for today's split and distribution.
    const openRef = Math.max(0.01, pStart / split - dividend);
    if (p < 0.01) p = 0.01;

    // Gaps only on ordinary days, never the last row, so events and lifetimes stay intact.
    if (split === 1 && dividend === 0 && k !== plan.lastIdx && rng.chance(MISSING_DAY_RATE)) continue;

    const prevClose = close;
    closeC = toCents(p);
    close = closeC / 100;
    adj = nextIndexValue(adj, close, dividend, split, prevClose);
    s.dayIdx[len] = k;
    writeOhlc(s, len, isEtf, rng, closeC, toCents(openRef), totalDaily, plan.baseVolume);
    s.dividend[len] = dividend;
    s.split[len] = split;
    s.adj[len] = adj;
    len++;
  }
  s.length = len;
  return s;
}

/** A fund's price model in daily units, worked out once before its rows. */
function dailyModel(plan: FundPlan): {
  isEtf: boolean;
  driftDaily: number;
  idioDaily: number;
  /** The fund's total daily volatility (market and its own), for the ETF intraday range. */
  totalDaily: number;
  /** Each regular distribution as a share of the price. */
  perDistribution: number;
  leveraged: boolean;
} {
  const idioDaily = plan.idioVol / SQRT_252;
  return {
    isEtf: plan.type === 'ETF',
    // The drift is the total return: distributions come out of the price on ex-dates, so
    // the continuous part must not subtract the yield a second time.
    driftDaily: plan.drift / 252 - 0.5 * idioDaily * idioDaily,
    idioDaily,
    totalDaily:
      Math.sqrt(plan.beta * plan.beta * MARKET_VOL * MARKET_VOL + plan.idioVol * plan.idioVol) / SQRT_252,
    perDistribution: plan.frequency > 0 ? plan.yield / plan.frequency : 0,
    leveraged: plan.assetClass === 'leveraged',
  };
}

/** Row 0 at the start price, with no distribution or split; returns its close in cents. */
function writeFirstRow(s: FundSeries, plan: FundPlan, rng: Rng, totalDaily: number): number {
  const closeC = toCents(plan.startPrice);
  s.dayIdx[0] = plan.firstIdx;
  writeOhlc(s, 0, plan.type === 'ETF', rng, closeC, closeC, totalDaily, plan.baseVolume);
  s.dividend[0] = 0;
  s.split[0] = 1;
  s.adj[0] = closeC / 100;
  return closeC;
}

/** Mutual funds report one NAV a day (Open = High = Low = Close, no volume), as EODHD shows them. */
function writeOhlc(
  s: FundSeries,
  i: number,
  isEtf: boolean,
  rng: Rng,
  closeC: number,
  refC: number,
  dailyVol: number,
  baseVolume: number,
): void {
  s.closeCents[i] = closeC;
  if (!isEtf) {
    s.openCents[i] = closeC;
    s.highCents[i] = closeC;
    s.lowCents[i] = closeC;
    s.volume[i] = 0;
    return;
  }
  const openC = toCents((refC / 100) * Math.exp(0.3 * dailyVol * rng.normal()));
  const top = Math.max(openC, closeC);
  const bottom = Math.min(openC, closeC);
  s.openCents[i] = openC;
  s.highCents[i] = Math.max(top, Math.round(top * (1 + 0.5 * dailyVol * Math.abs(rng.normal()))));
  s.lowCents[i] = Math.max(
    1,
    Math.min(bottom, Math.round(bottom * (1 - 0.5 * dailyVol * Math.abs(rng.normal())))),
  );
  s.volume[i] = Math.round(baseVolume * Math.exp(0.6 * rng.normal()));
}

/** ".00" … ".99", so a cents value formats with one division and no toFixed. */
const FRACTION: readonly string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? `.0${i}` : `.${i}`));

/** A non-negative integer number of cents as a 2-decimal string ("10.50"). */
function formatCents(c: number): string {
  const whole = Math.floor(c / 100);
  return whole + FRACTION[c - whole * 100];
}

export const PRICES_HEADER = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';

/**
 * The price file text for rows whose day index is below `dailyStart` (the rest go
 * to daily files). Built as one string: the file is written with a single call.
 */
export function priceFileText(universe: Universe, s: FundSeries, etf: boolean, dailyStart: number): string {
  const dates = universe.dates;
  let out = PRICES_HEADER;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const k = s.dayIdx[i];
    if (k >= dailyStart) break;
    const c = formatCents(s.closeCents[i]);
    if (etf) {
      out += `${dates[k]},${formatCents(s.openCents[i])},${formatCents(s.highCents[i])},${formatCents(s.lowCents[i])},${c},${s.adj[i]},${s.volume[i]}\n`;
    } else {
      out += `${dates[k]},${c},${c},${c},${c},${s.adj[i]},0\n`;
    }
  }
  return out;
}

/** Row i as a provider's daily-file line; blank Dividend/Split when there is none. */
export function dailyRowText(universe: Universe, code: string, s: FundSeries, i: number): string {
  return dailyLine({
    code,
    date: universe.dates[s.dayIdx[i]],
    close: formatCents(s.closeCents[i]),
    adjClose: String(s.adj[i]),
    dividend: dividendCell(s.dividend[i]),
    split: splitCell(s.split[i]),
  });
}
