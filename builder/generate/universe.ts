/**
 * The synthetic universe's fund list: codes, names, identifiers, lifetimes and the
 * parameters of each fund's price model, drawn from the catalogue (catalogue.ts).
 * Everything here is a pure function of (seed, funds, from, to), cheap enough (tens of
 * milliseconds for 32,000 funds) for every worker to recompute instead of receiving it.
 */
import { lastTradingDayOnOrBefore, tradingDaysInRange } from '../../core/calendar.js';
import { type Day, formatDay, fromYmd, toYmd } from '../../core/dates.js';
import { type FundsRow, fundsFileText } from '../source/funds.js';
import {
  type AssetClass,
  CLASSES,
  ETF_CLASS_WEIGHTS,
  ETF_EXCHANGE_WEIGHTS,
  ETF_EXCHANGES,
  ETF_LAUNCHES,
  FUND_CLASS_WEIGHTS,
  FUND_EXCHANGE,
  FUND_LAUNCHES,
  type LaunchPeriods,
  LEVERAGED,
  SHARE_CLASS_WEIGHTS,
  SHARE_CLASSES,
  SPONSORS,
} from './catalogue.js';
import { randomIssuer, sponsorIssuers, uniqueCode, uniqueIsin } from './identifiers.js';
import { Rng, Stream } from './prng.js';

type GeneratedType = 'ETF' | 'FUND' | 'Common Stock' | 'INDEX' | 'Unit';

/** Annual volatility of the shared market factor (before volatility clustering). */
export const MARKET_VOL = 0.155;

/** Shortest history a fund gets, in trading days, so a daily window never swallows a fund. */
const MIN_ROWS = 21;
const INACTIVE_SHARE = 0.05;
const ETF_SHARE = 0.15;
/** Other instrument types in funds.csv (no price file), as a share of priced funds. */
const OTHER_SHARE = 0.005;

/** One row of funds.csv and, for ETF and FUND rows, its price model. */
export interface FundPlan {
  /** Generation index: seeds the fund's own random streams. -1 for the unpriced rows. */
  readonly index: number;
  readonly code: string;
  readonly name: string;
  readonly exchange: string;
  readonly type: GeneratedType;
  readonly isin: string;
  /** Whether the fund has a price file. */
  readonly priced: boolean;
  /** First and last row as indices into the universe's trading days (inclusive). */
  readonly firstIdx: number;
  readonly lastIdx: number;
  readonly inactive: boolean;
  readonly inactiveDate: Day | null;
  readonly assetClass: string;
  /** Price model (per year where it applies). */
  readonly startPrice: number;
  readonly drift: number;
  readonly beta: number;
  readonly idioVol: number;
  readonly yield: number;
  /** Regular distributions per year (0: none). */
  readonly frequency: number;
  /** Months (0..11) with a regular distribution, as a bit mask. */
  readonly distributionMonths: number;
  /** The ex-date is the first trading day of a distribution month on or after this day of month. */
  readonly distributionDay: number;
  readonly capitalGains: boolean;
  readonly capitalGainDay: number;
  readonly canSplit: boolean;
  /** Typical daily volume (ETFs); 0 for mutual funds. */
  readonly baseVolume: number;
}

export interface Universe {
  readonly seed: number;
  /** Every funds.csv row, sorted by code: the output order of funds.csv and of daily rows. */
  readonly rows: readonly FundPlan[];
  /** The priced rows, in the same order. */
  readonly priced: readonly FundPlan[];
  readonly days: Int32Array;
  readonly dates: readonly string[];
  /** Per trading day: year * 12 + month - 1, month 0..11 and day of month. */
  readonly monthKey: Int32Array;
  readonly month: Uint8Array;
  readonly dayOfMonth: Uint8Array;
  /** Per trading day: the shared market factor's log return (daily units). */
  readonly market: Float64Array;
}

/** The universe's trading days, with the calendar fields the price model reads per day. */
type TradingCalendar = Pick<Universe, 'days' | 'dates' | 'monthKey' | 'month' | 'dayOfMonth'>;

/** What every fund's draw shares: the calendar, and the codes and ISINs taken so far. */
interface Drawing {
  readonly seed: number;
  readonly days: Int32Array;
  readonly usedCodes: Set<string>;
  readonly usedIsins: Set<string>;
  /** Per sponsor, its CUSIP issuer numbers. */
  readonly issuers: readonly string[][];
  /** The last trading day as a fractional year: no fund launches after it. */
  readonly endYear: number;
}

export function planUniverse(seed: number, funds: number, from: Day, to: Day): Universe {
  if (!Number.isInteger(funds) || funds < 1) throw new Error(`funds must be a positive integer: ${funds}`);
  const end = lastTradingDayOnOrBefore(to);
  const calendar = tradingCalendar(from, end, to);
  const drawing: Drawing = {
    seed,
    days: calendar.days,
    usedCodes: new Set<string>(),
    usedIsins: new Set<string>(),
    issuers: SPONSORS.map((_, s) => sponsorIssuers(seed, s)),
    endYear: toYmd(end).y + (toYmd(end).m - 0.5) / 12,
  };
  const plans: FundPlan[] = [];
  for (let i = 0; i < funds; i++) plans.push(planFund(drawing, i));
  const others = otherRows(drawing, Math.max(1, Math.round(funds * OTHER_SHARE)), plans[0]);

  const rows = [...plans, ...others].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  return {
    seed,
    rows,
    priced: rows.filter((r) => r.priced),
    ...calendar,
    market: marketFactor(seed, calendar.days.length),
  };
}

/** The trading days from `from` to `end` (the last one on or before `to`). */
function tradingCalendar(from: Day, end: Day, to: Day): TradingCalendar {
  const dayList = tradingDaysInRange(from, end);
  if (dayList.length < MIN_ROWS) {
    throw new Error(`need at least ${MIN_ROWS} trading days between ${formatDay(from)} and ${formatDay(to)}`);
  }
  const days = Int32Array.from(dayList);
  const n = days.length;
  const dates = dayList.map(formatDay);
  const monthKey = new Int32Array(n);
  const month = new Uint8Array(n);
  const dayOfMonth = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const { y, m, d } = toYmd(days[i]);
    monthKey[i] = y * 12 + m - 1;
    month[i] = m - 1;
    dayOfMonth[i] = d;
  }
  return { days, dates, monthKey, month, dayOfMonth };
}

/** Priced fund `i` (an ETF or a mutual fund), from its own metadata stream. */
function planFund(drawing: Drawing, i: number): FundPlan {
  const rng = new Rng(drawing.seed, Stream.metadata, i);
  const isEtf = rng.chance(ETF_SHARE);
  const sponsor = rng.int(0, SPONSORS.length - 1);
  const classIdx = rng.weighted(isEtf ? ETF_CLASS_WEIGHTS : FUND_CLASS_WEIGHTS);
  const cls = CLASSES[classIdx];
  const strategy = rng.pick(cls.strategies);
  const code = uniqueCode(rng, drawing.usedCodes, isEtf ? 'etf' : 'fund', SPONSORS[sponsor]);
  const isin = uniqueIsin(rng, drawing.usedIsins, drawing.issuers[sponsor]);
  const name = fundName(rng, isEtf, `${SPONSORS[sponsor]} ${strategy}`);
  const launchYear = sampleLaunchYear(rng, isEtf ? ETF_LAUNCHES : FUND_LAUNCHES, drawing.endYear);
  const life = lifetime(rng, drawing.days, launchYear);
  const { frequency, distributionDay, distributionMonths } = distributionSchedule(rng, cls);
  const startPrice = drawStartPrice(rng, isEtf);

  const plan: FundPlan = {
    index: i,
    code,
    name,
    exchange: isEtf ? ETF_EXCHANGES[rng.weighted(ETF_EXCHANGE_WEIGHTS)] : FUND_EXCHANGE,
    type: isEtf ? 'ETF' : 'FUND',
    isin,
    priced: true,
    ...life,
    assetClass: cls.key,
    startPrice,
    drift: cls.drift + 0.015 * rng.normal(),
    beta: cls.beta * rng.range(0.85, 1.15),
    idioVol: cls.idioVol * rng.range(0.8, 1.25),
    yield: frequency === 0 ? 0 : cls.yield * rng.range(0.6, 1.4),
    frequency,
    distributionMonths,
    distributionDay,
    capitalGains: !isEtf && cls.capitalGains && rng.chance(0.6),
    capitalGainDay: rng.int(8, 20),
    canSplit: isEtf,
    baseVolume: isEtf ? Math.round(Math.exp(rng.range(7, 16))) : 0,
  };
  if (classIdx === LEVERAGED && !isEtf) throw new Error('leveraged class is ETF-only');
  return plan;
}

/** `family` is sponsor and strategy ("Aldercrest Large Cap Growth"). */
function fundName(rng: Rng, isEtf: boolean, family: string): string {
  if (isEtf) return `${family} ETF`;
  const shareClass = SHARE_CLASSES[rng.weighted(SHARE_CLASS_WEIGHTS)];
  // Some providers separate the share class with a comma, which forces CSV quoting.
  return rng.chance(0.02) ? `${family} Fund, ${shareClass}` : `${family} Fund ${shareClass}`;
}

/** A fund's first and last rows, and whether (and when) it closes. */
function lifetime(
  rng: Rng,
  days: Int32Array,
  launchYear: number,
): Pick<FundPlan, 'firstIdx' | 'lastIdx' | 'inactive' | 'inactiveDate'> {
  const n = days.length;
  const inceptionDay = fromYmd(Math.floor(launchYear), 1, 1) + Math.floor((launchYear % 1) * 365.25);
  let firstIdx = lowerBound(days, inceptionDay);
  firstIdx = Math.min(firstIdx, n - MIN_ROWS);

  let lastIdx = n - 1;
  let inactive = false;
  let inactiveDate: Day | null = null;
  // An inactive fund stops at least two weeks before `to`, so InactiveDate stays in the past.
  const latestStop = n - 11;
  if (rng.chance(INACTIVE_SHARE) && latestStop >= firstIdx + MIN_ROWS - 1) {
    inactive = true;
    lastIdx = rng.int(firstIdx + MIN_ROWS - 1, latestStop);
    inactiveDate = days[lastIdx] + rng.int(1, 7);
  }
  return { firstIdx, lastIdx, inactive, inactiveDate };
}

/** How often, in which months and from which day of the month a fund pays distributions. */
function distributionSchedule(
  rng: Rng,
  cls: AssetClass,
): Pick<FundPlan, 'frequency' | 'distributionDay' | 'distributionMonths'> {
  const frequency = rng.chance(0.04) ? 0 : rng.pick(cls.frequencies);
  // Every month has a trading day on or after the 25th, so these days never skip a month.
  const distributionDay = frequency === 12 ? rng.int(18, 25) : rng.int(5, 24);
  const monthOffset = rng.int(0, frequency === 0 ? 0 : 12 / frequency - 1);
  let distributionMonths = 0;
  // Quarterly funds mostly pay in the calendar quarter's last month.
  const offset =
    frequency === 4 && rng.chance(0.7) ? 2 : frequency === 1 ? 11 - rng.int(0, 1) * 6 : monthOffset;
  if (frequency > 0)
    for (let m = offset % (12 / frequency); m < 12; m += 12 / frequency) distributionMonths |= 1 << m;
  return { frequency, distributionDay, distributionMonths };
}

/** ETFs list anywhere from $15 to $80; most mutual funds start at a round NAV such as $10. */
function drawStartPrice(rng: Rng, isEtf: boolean): number {
  return isEtf
    ? Math.round(rng.range(15, 80) * 100) / 100
    : rng.chance(0.6)
      ? 10
      : rng.chance(0.5)
        ? rng.pick([20, 25, 12.5, 15])
        : Math.round(rng.range(8, 40) * 100) / 100;
}

/**
 * The funds.csv rows of other types (stocks, indices, units): listed, never priced.
 * `template` fills the price-model fields, which nothing reads for an unpriced row.
 */
function otherRows(drawing: Drawing, count: number, template: FundPlan): FundPlan[] {
  const others: FundPlan[] = [];
  for (let j = 0; j < count; j++) {
    const rng = new Rng(drawing.seed, Stream.universe, j);
    const type: GeneratedType = rng.pick(['Common Stock', 'Common Stock', 'INDEX', 'Unit']);
    const code = uniqueCode(rng, drawing.usedCodes, 'other', '');
    const isin = type === 'INDEX' ? '' : uniqueIsin(rng, drawing.usedIsins, [randomIssuer(rng)]);
    const name =
      type === 'INDEX'
        ? `${rng.pick(SPONSORS)} ${rng.pick(['Composite', 'Total Market', 'Volatility', 'Dividend'])} Index`
        : type === 'Unit'
          ? `${rng.pick(SPONSORS)} Acquisition Corp Unit`
          : `${rng.pick(SPONSORS)} ${rng.pick(['Holdings', 'Industries', 'Bancorp', 'Technologies'])} Inc`;
    others.push({
      ...template,
      index: -1,
      code,
      name,
      exchange: type === 'INDEX' ? 'INDX' : rng.pick(['NYSE', 'NASDAQ']),
      type,
      isin,
      priced: false,
      inactive: false,
      inactiveDate: null,
      assetClass: '',
    });
  }
  return others;
}

/**
 * The shared market factor: a random walk whose volatility clusters (log-volatility
 * follows an AR(1)), so calm years and crises hit every equity fund together.
 */
function marketFactor(seed: number, n: number): Float64Array {
  const rng = new Rng(seed, Stream.universe, 0x7fff_0000);
  const out = new Float64Array(n);
  const baseDaily = MARKET_VOL / Math.sqrt(252);
  const phi = 0.985;
  const shock = 0.08;
  // Stationary variance of logVol; E[exp(2·logVol)] = exp(2·variance), so dividing by
  // exp(variance) keeps the long-run (RMS) volatility at MARKET_VOL.
  const variance = (shock * shock) / (1 - phi * phi);
  const scale = baseDaily / Math.exp(variance);
  let logVol = 0;
  let sum = 0;
  let convexity = 0;
  for (let i = 0; i < n; i++) {
    logVol = phi * logVol + shock * rng.normal();
    const vol = scale * Math.exp(logVol);
    out[i] = vol * rng.normal() - 0.5 * vol * vol;
    convexity -= 0.5 * vol * vol;
    sum += out[i];
  }
  // One path decides every equity fund's long-run return, so a lucky or unlucky seed
  // would skew the whole universe: centre the path on its expected log return and
  // leave only the decade-to-decade swings random.
  const shift = (convexity - sum) / n;
  for (let i = 0; i < n; i++) out[i] += shift;
  return out;
}

/** A fractional launch year before `endYear`, periods past it left out. */
function sampleLaunchYear(rng: Rng, periods: LaunchPeriods, endYear: number): number {
  const weights = periods.map(([start, , w]) => (start < endYear ? w : 0));
  if (weights.every((w) => w === 0)) return endYear;
  const [start, stop] = periods[rng.weighted(weights)];
  return rng.range(start, Math.min(stop, endYear));
}

function lowerBound(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * funds.csv as it reads on trading day `endIdx` (default the universe's last): a priced
 * fund is listed from its first row on, and is inactive once its InactiveDate has come.
 * A universe planned past `to` (a horizon) thus gains funds and loses some as the days
 * go by, which is what a refresh's fund list does.
 */
export function fundsCsv(universe: Universe, endIdx: number = universe.days.length - 1): string {
  const day = universe.days[endIdx];
  return fundsFileText(
    listedRows(universe, endIdx).map((r): FundsRow => {
      const isInactive = inactiveAt(r, day);
      return {
        code: r.code,
        name: r.name,
        country: 'USA',
        exchange: r.exchange,
        currency: 'USD',
        type: r.type,
        isin: r.isin,
        isInactive,
        inactiveDate: isInactive ? r.inactiveDate : null,
      };
    }),
  );
}

/** The funds.csv rows listed on trading day `endIdx`, in code order. */
function listedRows(universe: Universe, endIdx: number): FundPlan[] {
  return universe.rows.filter((r) => !r.priced || r.firstIdx <= endIdx);
}

/** Whether a fund is listed inactive on `day`. */
function inactiveAt(plan: FundPlan, day: Day): boolean {
  return plan.inactive && plan.inactiveDate !== null && plan.inactiveDate <= day;
}

/** Index of the last trading day on or before `day` (-1 when `day` is before the first). */
export function dayIndexOnOrBefore(universe: Universe, day: Day): number {
  let lo = 0;
  let hi = universe.days.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (universe.days[mid] <= day) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
