/**
 * The synthetic universe's fund list: codes, names, identifiers, lifetimes and the
 * parameters of each fund's price model. Everything here is a pure function of
 * (seed, funds, from, to), cheap enough (tens of milliseconds for 32,000 funds) for
 * every worker to recompute instead of receiving it.
 */
import { lastTradingDayOnOrBefore, tradingDaysInRange } from '../../core/calendar.js';
import { type Day, formatDay, fromYmd, toYmd } from '../../core/dates.js';
import { type FundsRow, fundsFileText } from '../source/funds.js';
import { usIsin } from './isin.js';
import { Rng, Stream } from './prng.js';

type GeneratedType = 'ETF' | 'FUND' | 'Common Stock' | 'INDEX' | 'Unit';

interface AssetClass {
  readonly key: string;
  readonly strategies: readonly string[];
  /** Expected total return per year (price drift plus distributions). */
  readonly drift: number;
  /** Sensitivity to the shared market factor. */
  readonly beta: number;
  /** Fund-specific annual volatility on top of the market factor. */
  readonly idioVol: number;
  readonly yield: number;
  /** Distributions per year a fund of this class may choose from. */
  readonly frequencies: readonly number[];
  /** Whether mutual funds of this class pay year-end capital gains now and then. */
  readonly capitalGains: boolean;
}

/** Annual volatility of the shared market factor (before volatility clustering). */
export const MARKET_VOL = 0.155;

const CLASSES: readonly AssetClass[] = [
  {
    key: 'us-large',
    strategies: [
      '500 Index',
      'Large Cap Growth',
      'Large Cap Value',
      'Total Stock Market Index',
      'Dividend Growth',
      'Blue Chip Growth',
      'Equity Income',
      'Large Cap Core',
      'Growth & Income',
      'US Quality Factor',
      'Low Volatility Equity',
      'Disciplined Equity',
      'Contrafund-Style Growth',
      'Capital Appreciation',
    ],
    drift: 0.075,
    beta: 1,
    idioVol: 0.04,
    yield: 0.017,
    frequencies: [4, 4, 4, 1],
    capitalGains: true,
  },
  {
    key: 'us-small-mid',
    strategies: [
      'Mid Cap Index',
      'Small Cap Value',
      'Small Cap Growth',
      'Small-Mid Cap Equity',
      'Extended Market Index',
      'Micro Cap',
      'Mid Cap Growth',
      'Small Cap Index',
      'Opportunities',
    ],
    drift: 0.085,
    beta: 1.1,
    idioVol: 0.12,
    yield: 0.011,
    frequencies: [4, 1, 1, 2],
    capitalGains: true,
  },
  {
    key: 'international',
    strategies: [
      'International Index',
      'Developed Markets Index',
      'International Value',
      'Global Equity',
      'International Growth',
      'European Stock Index',
      'Pacific Stock Index',
      'Total International Stock Index',
      'International Small Cap',
      'World Stock',
    ],
    drift: 0.062,
    beta: 0.8,
    idioVol: 0.11,
    yield: 0.028,
    frequencies: [4, 2, 1],
    capitalGains: true,
  },
  {
    key: 'emerging',
    strategies: [
      'Emerging Markets',
      'Emerging Markets Index',
      'Frontier Markets',
      'China Equity',
      'India Equity',
      'Latin America Equity',
      'Emerging Markets Small Cap',
    ],
    drift: 0.065,
    beta: 0.85,
    idioVol: 0.18,
    yield: 0.024,
    frequencies: [1, 2, 4],
    capitalGains: true,
  },
  {
    key: 'sector',
    strategies: [
      'Technology',
      'Health Care',
      'Financials',
      'Energy',
      'Utilities',
      'Real Estate',
      'Consumer Staples',
      'Industrials',
      'Biotechnology',
      'Semiconductor',
      'Clean Energy',
      'Communication Services',
      'Precious Metals and Mining',
      'Global Infrastructure',
    ],
    drift: 0.075,
    beta: 0.95,
    idioVol: 0.19,
    yield: 0.016,
    frequencies: [4, 4, 1],
    capitalGains: true,
  },
  {
    key: 'allocation',
    strategies: [
      'Balanced',
      'Target Retirement 2030',
      'Target Retirement 2040',
      'Target Retirement 2050',
      'Target Retirement 2060',
      'Conservative Allocation',
      'Moderate Allocation',
      'Growth Allocation',
      'Global Allocation',
      'Income Builder',
      'Retirement Income',
    ],
    drift: 0.062,
    beta: 0.58,
    idioVol: 0.035,
    yield: 0.022,
    frequencies: [4, 4, 1, 2],
    capitalGains: true,
  },
  {
    key: 'bond-core',
    strategies: [
      'Total Bond Market Index',
      'Core Bond',
      'Aggregate Bond Index',
      'Intermediate-Term Bond',
      'Corporate Bond',
      'Core Plus Bond',
      'Investment Grade Credit',
      'Mortgage-Backed Securities',
      'Intermediate-Term Treasury',
      'Long-Term Treasury',
      'Inflation-Protected Securities',
      'GNMA',
    ],
    drift: 0.047,
    beta: 0.03,
    idioVol: 0.045,
    yield: 0.034,
    frequencies: [12],
    capitalGains: false,
  },
  {
    key: 'bond-short',
    strategies: [
      'Short-Term Bond',
      'Ultra-Short Bond',
      'Short-Term Treasury',
      'Short-Term Investment Grade',
      'Floating Rate',
      'Limited Duration Income',
      'Short-Term Federal',
    ],
    drift: 0.032,
    beta: 0.01,
    idioVol: 0.016,
    yield: 0.03,
    frequencies: [12],
    capitalGains: false,
  },
  {
    key: 'high-yield',
    strategies: [
      'High Yield Bond',
      'High Yield Corporate',
      'Strategic Income',
      'Multi-Sector Income',
      'Emerging Markets Bond',
      'Senior Loan',
      'Convertible Securities',
    ],
    drift: 0.058,
    beta: 0.3,
    idioVol: 0.06,
    yield: 0.058,
    frequencies: [12],
    capitalGains: false,
  },
  {
    key: 'municipal',
    strategies: [
      'Municipal Bond',
      'Tax-Exempt Bond',
      'Intermediate-Term Tax-Exempt',
      'California Municipal',
      'New York Municipal',
      'High Yield Municipal',
      'Limited-Term Tax-Exempt',
      'National Municipal Index',
    ],
    drift: 0.038,
    beta: 0.02,
    idioVol: 0.042,
    yield: 0.028,
    frequencies: [12],
    capitalGains: false,
  },
  {
    // Leveraged and inverse ETFs: the ones that lose value and need reverse splits.
    key: 'leveraged',
    strategies: [
      'Daily 2x Technology Bull',
      'Ultra 3x Large Cap',
      'Daily 3x Small Cap Bull',
      'Ultra 2x Semiconductor',
      'Daily 2x Financials Bull',
      'Ultra 2x Crude Oil',
      'Daily 3x Biotech Bull',
    ],
    drift: 0.02,
    beta: 2.4,
    idioVol: 0.18,
    yield: 0.004,
    frequencies: [4, 1],
    capitalGains: false,
  },
];

const LEVERAGED = CLASSES.length - 1;

/** How often each class occurs among mutual funds and among ETFs (same order as CLASSES). */
const FUND_CLASS_WEIGHTS = [25, 12, 12, 5, 6, 14, 12, 4, 5, 5, 0];
const ETF_CLASS_WEIGHTS = [20, 10, 12, 7, 20, 2, 12, 6, 4, 3, 5];

/** Invented fund sponsors: realistic-looking without passing off fake returns as a real firm's. */
const SPONSORS: readonly string[] = [
  'Aldercrest',
  'Northbridge',
  'Harbor Point',
  'Stonegate',
  'Bluewater',
  'Crestline',
  'Meridian Peak',
  'Ironwood',
  'Granite Bay',
  'Lakeshore',
  'Summit Ridge',
  'Copperfield',
  'Westhaven',
  'Redwood Hill',
  'Pinecrest',
  'Fairmount',
  'Kingsbridge',
  'Eastwind',
  'Highmark Valley',
  'Sterling Cove',
  'Oakridge',
  'Brightwater',
  'Tidewater',
  'Foxhollow',
  'Cedar Point',
  'Evergreen Trail',
  'Silverpine',
  'Hawthorne',
  'Beacon Street',
  'Lexington Square',
  'Marlow',
  'Ashford',
  'Whitestone',
  'Canyon Creek',
  'Prairie Wind',
  'Old Harbor',
];

/** Mutual fund share classes, most common first-ish. */
const SHARE_CLASSES: readonly string[] = [
  'Class A',
  'Class C',
  'Class I',
  'Institutional Class',
  'Investor Class',
  'Admiral Shares',
  'Investor Shares',
  'Institutional Shares',
  'Class R6',
  'Class Y',
  'Service Class',
  'Class R',
  'Class K',
  'Advisor Class',
];
const SHARE_CLASS_WEIGHTS = [16, 10, 12, 10, 8, 4, 5, 6, 7, 4, 3, 3, 2, 4];

const ETF_EXCHANGES = ['NYSE ARCA', 'NASDAQ', 'BATS', 'NYSE MKT'];
const ETF_EXCHANGE_WEIGHTS = [70, 15, 12, 3];
/** Where EODHD lists US mutual funds. */
const FUND_EXCHANGE = 'NMFQS';

/** CUSIP characters, without I and O which issuers avoid (they read as 1 and 0). */
const CUSIP_ALNUM = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

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

export function planUniverse(seed: number, funds: number, from: Day, to: Day): Universe {
  if (!Number.isInteger(funds) || funds < 1) throw new Error(`funds must be a positive integer: ${funds}`);
  const end = lastTradingDayOnOrBefore(to);
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

  const usedCodes = new Set<string>();
  const usedIsins = new Set<string>();
  const issuers = SPONSORS.map((_, s) => sponsorIssuers(seed, s));
  const endYear = toYmd(end).y + (toYmd(end).m - 0.5) / 12;

  const plans: FundPlan[] = [];
  for (let i = 0; i < funds; i++) {
    const rng = new Rng(seed, Stream.metadata, i);
    const isEtf = rng.chance(ETF_SHARE);
    const sponsor = rng.int(0, SPONSORS.length - 1);
    const classIdx = rng.weighted(isEtf ? ETF_CLASS_WEIGHTS : FUND_CLASS_WEIGHTS);
    const cls = CLASSES[classIdx];
    const strategy = rng.pick(cls.strategies);
    const code = uniqueCode(rng, usedCodes, isEtf ? 'etf' : 'fund', SPONSORS[sponsor]);
    const isin = uniqueIsin(rng, usedIsins, issuers[sponsor]);

    let name: string;
    if (isEtf) {
      name = `${SPONSORS[sponsor]} ${strategy} ETF`;
    } else {
      const shareClass = SHARE_CLASSES[rng.weighted(SHARE_CLASS_WEIGHTS)];
      // Some providers separate the share class with a comma, which forces CSV quoting.
      name = rng.chance(0.02)
        ? `${SPONSORS[sponsor]} ${strategy} Fund, ${shareClass}`
        : `${SPONSORS[sponsor]} ${strategy} Fund ${shareClass}`;
    }

    const launchYear = sampleLaunchYear(rng, isEtf ? ETF_LAUNCHES : FUND_LAUNCHES, endYear);
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

    const startPrice = isEtf
      ? Math.round(rng.range(15, 80) * 100) / 100
      : rng.chance(0.6)
        ? 10
        : rng.chance(0.5)
          ? rng.pick([20, 25, 12.5, 15])
          : Math.round(rng.range(8, 40) * 100) / 100;

    plans.push({
      index: i,
      code,
      name,
      exchange: isEtf ? ETF_EXCHANGES[rng.weighted(ETF_EXCHANGE_WEIGHTS)] : FUND_EXCHANGE,
      type: isEtf ? 'ETF' : 'FUND',
      isin,
      priced: true,
      firstIdx,
      lastIdx,
      inactive,
      inactiveDate,
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
    });
    if (classIdx === LEVERAGED && !isEtf) throw new Error('leveraged class is ETF-only');
  }

  const otherCount = Math.max(1, Math.round(funds * OTHER_SHARE));
  const others: FundPlan[] = [];
  for (let j = 0; j < otherCount; j++) {
    const rng = new Rng(seed, Stream.universe, j);
    const type: GeneratedType = rng.pick(['Common Stock', 'Common Stock', 'INDEX', 'Unit']);
    const code = uniqueCode(rng, usedCodes, 'other', '');
    const isin = type === 'INDEX' ? '' : uniqueIsin(rng, usedIsins, [randomIssuer(rng)]);
    const name =
      type === 'INDEX'
        ? `${rng.pick(SPONSORS)} ${rng.pick(['Composite', 'Total Market', 'Volatility', 'Dividend'])} Index`
        : type === 'Unit'
          ? `${rng.pick(SPONSORS)} Acquisition Corp Unit`
          : `${rng.pick(SPONSORS)} ${rng.pick(['Holdings', 'Industries', 'Bancorp', 'Technologies'])} Inc`;
    others.push({
      ...plans[0],
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

  const rows = [...plans, ...others].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  return {
    seed,
    rows,
    priced: rows.filter((r) => r.priced),
    days,
    dates,
    monthKey,
    month,
    dayOfMonth,
    market: marketFactor(seed, n),
  };
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

/**
 * Launch years by period, as [from, to, weight]: few survivors from the 1970s, most
 * share classes and nearly all ETFs launched since 2000. The weights make the mean
 * history about 12.5 years at a 2020s end date (≈ 100 million rows for 32,000 funds).
 */
const FUND_LAUNCHES: readonly (readonly [number, number, number])[] = [
  [1970, 1980, 1],
  [1980, 1990, 2],
  [1990, 2000, 8],
  [2000, 2010, 17],
  [2010, 2020, 34],
  [2020, 9999, 38],
];
const ETF_LAUNCHES: readonly (readonly [number, number, number])[] = [
  // A few ETFs carry an older mutual fund's history from before they converted.
  [1976, 1993, 1],
  [1993, 2000, 3],
  [2000, 2010, 20],
  [2010, 2020, 38],
  [2020, 9999, 38],
];

/** A fractional launch year before `endYear`, periods past it left out. */
function sampleLaunchYear(
  rng: Rng,
  periods: readonly (readonly [number, number, number])[],
  endYear: number,
): number {
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

function uniqueCode(rng: Rng, used: Set<string>, kind: 'fund' | 'etf' | 'other', sponsor: string): string {
  for (;;) {
    let code = '';
    if (kind === 'fund') {
      // Tickers of a family often share its initial (VFIAX, FXAIX).
      code = sponsor !== '' && rng.chance(0.6) ? sponsor[0] : LETTERS[rng.int(0, 25)];
      for (let k = 0; k < 3; k++) code += LETTERS[rng.int(0, 25)];
      code += 'X';
    } else {
      const len = kind === 'etf' ? [2, 3, 3, 3, 4, 4][rng.int(0, 5)] : rng.int(1, 4);
      for (let k = 0; k < len; k++) code += LETTERS[rng.int(0, 25)];
    }
    if (!used.has(code)) {
      used.add(code);
      return code;
    }
  }
}

function randomIssuer(rng: Rng): string {
  let issuer = '';
  for (let k = 0; k < 5; k++) issuer += String(rng.int(0, 9));
  return issuer + CUSIP_ALNUM[rng.int(0, CUSIP_ALNUM.length - 1)];
}

/** A sponsor's trusts: the 6-character CUSIP issuer numbers its funds share. */
function sponsorIssuers(seed: number, sponsor: number): string[] {
  const rng = new Rng(seed, Stream.universe, 0x10000 + sponsor);
  const out: string[] = [];
  for (let t = 0; t < 6; t++) out.push(randomIssuer(rng));
  return out;
}

function uniqueIsin(rng: Rng, used: Set<string>, issuers: readonly string[]): string {
  for (;;) {
    const issue =
      CUSIP_ALNUM[rng.int(0, CUSIP_ALNUM.length - 1)] + CUSIP_ALNUM[rng.int(0, CUSIP_ALNUM.length - 1)];
    const isin = usIsin(rng.pick(issuers) + issue);
    if (!used.has(isin)) {
      used.add(isin);
      return isin;
    }
  }
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
