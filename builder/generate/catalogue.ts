/**
 * The invented catalogue the synthetic universe draws its funds from: asset classes
 * with their price-model parameters, sponsors, share classes, exchanges and launch
 * periods. Plain data; the drawing happens in universe.ts.
 */

export interface AssetClass {
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

export const CLASSES: readonly AssetClass[] = [
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

export const LEVERAGED = CLASSES.length - 1;

/** How often each class occurs among mutual funds and among ETFs (same order as CLASSES). */
export const FUND_CLASS_WEIGHTS = [25, 12, 12, 5, 6, 14, 12, 4, 5, 5, 0];
export const ETF_CLASS_WEIGHTS = [20, 10, 12, 7, 20, 2, 12, 6, 4, 3, 5];

/** Invented fund sponsors: realistic-looking without passing off fake returns as a real firm's. */
export const SPONSORS: readonly string[] = [
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
export const SHARE_CLASSES: readonly string[] = [
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
export const SHARE_CLASS_WEIGHTS = [16, 10, 12, 10, 8, 4, 5, 6, 7, 4, 3, 3, 2, 4];

export const ETF_EXCHANGES = ['NYSE ARCA', 'NASDAQ', 'BATS', 'NYSE MKT'];
export const ETF_EXCHANGE_WEIGHTS = [70, 15, 12, 3];
/** Where EODHD lists US mutual funds. */
export const FUND_EXCHANGE = 'NMFQS';

/** Launch periods as [from year, to year, weight]. */
export type LaunchPeriods = readonly (readonly [number, number, number])[];

/**
 * Launch years by period, as [from, to, weight]: few survivors from the 1970s, most
 * share classes and nearly all ETFs launched since 2000. The weights make the mean
 * history about 12.5 years at a 2020s end date (≈ 100 million rows for 32,000 funds).
 */
export const FUND_LAUNCHES: LaunchPeriods = [
  [1970, 1980, 1],
  [1980, 1990, 2],
  [1990, 2000, 8],
  [2000, 2010, 17],
  [2010, 2020, 34],
  [2020, 9999, 38],
];
export const ETF_LAUNCHES: LaunchPeriods = [
  // A few ETFs carry an older mutual fund's history from before they converted.
  [1976, 1993, 1],
  [1993, 2000, 3],
  [2000, 2010, 20],
  [2010, 2020, 38],
  [2020, 9999, 38],
];
