/** Risk figures (C38–C46): the row, its batch, the query and the batch body. */
import { RISK_WINDOW_KEYS } from '../core/risk.js';
import {
  CodeSchema,
  DateSchema,
  MarketParamSchema,
  MarketResponseSchema,
  PERCENT_4DP_PATTERN,
  SPEC_DECIMAL_PATTERN,
} from './common.js';
import { AsOfSchema, CodesSchema, MarketBodySchema } from './requests.js';

const MONTH_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])$';

const MonthSchema = {
  type: 'string',
  pattern: MONTH_PATTERN,
  description: 'A calendar month, `YYYY-MM`.',
  examples: ['2024-03'],
} as const;

const NullableMonth = (description: string) =>
  ({ type: ['string', 'null'], pattern: MONTH_PATTERN, description, examples: ['2020-03', null] }) as const;

const NullableDay = (description: string) =>
  ({ type: ['string', 'null'], format: 'date', description, examples: ['2024-03-28', null] }) as const;

/** What every risk figure's description ends with. */
const RISK_FIGURE_BASE =
  'A decimal string with exactly 4 decimal places, rounded half away from zero (C1); JSON null when the window ' +
  'is incomplete (a month without a month-end value, history too short) or the figure is undefined there (C39); ' +
  'the key is never omitted.';

function figure(description: string) {
  return {
    type: ['string', 'null'],
    allOf: [{ pattern: SPEC_DECIMAL_PATTERN }, { pattern: PERCENT_4DP_PATTERN }],
    description: `${description} ${RISK_FIGURE_BASE}`,
    examples: ['15.4321', null],
  } as const;
}

export const RiskWindowSchema = {
  title: 'RiskWindow',
  type: 'object',
  description:
    'Risk figures over the 12·N monthly returns of the months start_month … end_month (C39). Monthly return of ' +
    'month M: V(M) / V(M−1) − 1, where V(M) is the last observation on or before the market’s last trading day ' +
    'of M, if at most 7 days before it (C38).',
  required: [
    'start_month',
    'end_month',
    'volatility',
    'sharpe',
    'sortino',
    'max_drawdown',
    'peak_date',
    'trough_date',
    'recovery_date',
    'best_month',
    'best_month_date',
    'worst_month',
    'worst_month_date',
    'positive_months',
    'beta',
    'correlation',
  ],
  additionalProperties: false,
  properties: {
    start_month: { ...MonthSchema, description: 'First month of the window.' },
    end_month: {
      ...MonthSchema,
      description:
        "E: the anchor's month when the anchor is the market's last trading day of it, else the month before (C39).",
    },
    volatility: figure(
      'Annualized volatility in percent (C40): sample standard deviation (n − 1) of the monthly returns × √12.',
    ),
    sharpe: figure(
      'Sharpe ratio (C42): mean(e) / sd(e) × √12, e = monthly return − rf, rf = the 3-month T-bill yield at the ' +
        'end of the month before ÷ 1200 (C41). Null when a month has no rate or sd(e) is 0.',
    ),
    sortino: figure(
      'Sortino ratio (C42): mean(e) / sqrt(mean(min(e, 0)²)) × √12. Null when a month has no rate or no month is ' +
        'below rf.',
    ),
    max_drawdown: figure(
      'Maximum drawdown in percent (C43): the deepest fall from a running maximum over the daily observations ' +
        'from V(start_month − 1) to V(end_month), ≤ 0; "0.0000" when there was no fall.',
    ),
    peak_date: NullableDay(
      'Date of the maximum the deepest fall started from (its earliest date); null: no fall.',
    ),
    trough_date: NullableDay('Date of the deepest point (its earliest date); null: no fall.'),
    recovery_date: NullableDay(
      "First observation after the trough, up to the anchor, back at the peak's price; null: not recovered, or no fall.",
    ),
    best_month: figure('Best monthly return of the window, in percent (C44).'),
    best_month_date: NullableMonth('Month of the best return (the earliest on a tie).'),
    worst_month: figure('Worst monthly return of the window, in percent (C44).'),
    worst_month_date: NullableMonth('Month of the worst return (the earliest on a tie).'),
    positive_months: figure('Share of months with a return above zero, in percent (C44).'),
    beta: figure(
      "Beta against `benchmark` (C45): sample cov(r, r_b) / var(r_b) over the same months. Null without a benchmark, when the benchmark's window is incomplete or its variance is 0.",
    ),
    correlation: figure(
      'Pearson correlation with `benchmark` over the same months (C45). Null without a benchmark, when its window is incomplete or either variance is 0.',
    ),
  },
} as const;

export const RiskFiguresSchema = {
  title: 'RiskFigures',
  type: 'object',
  description:
    'Risk figures of one fund at one anchor for windows of 1, 3, 5 and 10 years (C38–C46). Percents and ratios ' +
    'are decimal strings with 4 decimals or null; every key is always present.',
  required: ['code', 'market', 'as_of_date', 'benchmark', 'windows'],
  additionalProperties: false,
  properties: {
    code: CodeSchema,
    market: MarketResponseSchema,
    as_of_date: {
      ...DateSchema,
      description:
        "The anchor (C3): the fund's last observation on or before the requested as_of date, or its last.",
    },
    benchmark: {
      type: ['string', 'null'],
      description:
        "The benchmark fund of beta and correlation: the one asked for, else the server's default; null: none.",
      examples: ['VTI', null],
    },
    windows: {
      type: 'object',
      description: 'One entry per window, always all four.',
      required: RISK_WINDOW_KEYS,
      additionalProperties: false,
      properties: Object.fromEntries(RISK_WINDOW_KEYS.map((k) => [k, RiskWindowSchema])),
    },
  },
} as const;

export const RiskFiguresListSchema = {
  title: 'RiskFiguresList',
  type: 'array',
  items: RiskFiguresSchema,
  description:
    'Batch result: one row per requested code that has one, in the order asked; duplicates once, misses left out ' +
    '(C16). Never a 404.',
} as const;

const BenchmarkSchema = {
  ...CodeSchema,
  description:
    "Benchmark fund for beta and correlation (C45): a code of this universe; one that is not is a 422 naming it. Omit for the server's default (`serve --benchmark`), if any.",
  examples: ['VTI'],
} as const;

/** Query of GET /v1/funds/{code}/risk. */
export const RiskQuerySchema = {
  title: 'RiskQuery',
  type: 'object',
  properties: {
    as_of: {
      type: 'string',
      format: 'date',
      description: AsOfSchema.description.replace(' Omit or null', ' Omit'),
      examples: AsOfSchema.examples,
    },
    benchmark: BenchmarkSchema,
    market: MarketParamSchema,
  },
} as const;

export const RiskBatchRequestSchema = {
  title: 'RiskBatchRequest',
  type: 'object',
  description: 'Body of POST /v1/risk/batch. Unknown fields are ignored.',
  required: ['codes'],
  properties: {
    codes: CodesSchema,
    market: MarketBodySchema,
    as_of: AsOfSchema,
    benchmark: { ...BenchmarkSchema, type: ['string', 'null'] },
  },
  examples: [{ codes: ['VTI', 'VFIAX'], as_of: '2024-03-28', benchmark: 'VTI' }],
} as const;

export interface RiskParams {
  code: string;
  market: string;
  as_of: string | null;
  benchmark: string | null;
}

export interface RiskBatchRequest {
  codes: string[];
  market: string;
  as_of: string | null;
  benchmark: string | null;
}

type RiskWindow = Record<(typeof RiskWindowSchema.required)[number], string | null>;

export interface RiskFigures {
  code: string;
  market: 'US';
  as_of_date: string;
  benchmark: string | null;
  windows: Record<string, RiskWindow>;
}
