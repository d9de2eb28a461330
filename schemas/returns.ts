/** Trailing-return rows (SPEC 2, C1–C8) and calendar-year rows (C9–C12). */
import { TOP_LEVEL_TRAILING, TRAILING_KEYS, type TrailingKey } from '../core/types.js';
import { CodeSchema, DateSchema, MarketResponseSchema, returnFigure } from './common.js';

const CUMULATIVE = 'Cumulative (C6): P_end / P_base − 1.';
const ANNUALIZED = (n: number) => `Annualized (CAGR over ${n} years, C6): (P_end / P_base)^(1/${n}) − 1.`;
const MONTHS = (n: number) =>
  `Base: the last observation on or before the anchor minus ${n} calendar month${n === 1 ? '' : 's'}, ` +
  'day clamped to the month length, or the target month-end when the anchor is the last US trading day of its month (C4).';
const YEARS = (n: number) =>
  `Base: the last observation on or before the anchor minus ${n} year${n === 1 ? '' : 's'} (same month-end rule as months, C4).`;

/** What each figure measures; the unit, format and null rules are appended by returnFigure(). */
const FIGURE_TEXT: Record<TrailingKey, string> = {
  return_1d: `1 day. ${CUMULATIVE} Base: the observation on or before the previous US trading day (C4).`,
  return_1w: `1 week. ${CUMULATIVE} Base: the last observation on or before the anchor minus 7 days (C4).`,
  return_1m: `1 month. ${CUMULATIVE} ${MONTHS(1)}`,
  return_3m: `3 months. ${CUMULATIVE} ${MONTHS(3)}`,
  return_6m: `6 months. ${CUMULATIVE} ${MONTHS(6)}`,
  return_ytd: `Year to date. ${CUMULATIVE} Base: the last observation on or before 31 December of the anchor's previous year (C5).`,
  return_1y: `1 year. ${CUMULATIVE} ${YEARS(1)}`,
  return_2y: `2 years. ${ANNUALIZED(2)} ${YEARS(2)}`,
  return_3y: `3 years. ${ANNUALIZED(3)} ${YEARS(3)}`,
  return_4y: `4 years. ${ANNUALIZED(4)} ${YEARS(4)}`,
  return_5y: `5 years. ${ANNUALIZED(5)} ${YEARS(5)}`,
  return_7y: `7 years. ${ANNUALIZED(7)} ${YEARS(7)}`,
  return_10y: `10 years. ${ANNUALIZED(10)} ${YEARS(10)}`,
  return_15y: `15 years. ${ANNUALIZED(15)} ${YEARS(15)}`,
  return_20y: `20 years. ${ANNUALIZED(20)} ${YEARS(20)}`,
  return_earliest_available:
    'Since inception (C7): base = the first observation; span = days between base and anchor / 365.25. ' +
    'Annualized over the span when the span is at least 2 years, cumulative otherwise. Null when the anchor is the first observation.',
  return_mtd: `Month to date. ${CUMULATIVE} Base: the last observation on or before the previous month-end (C5).`,
  return_qtd: `Quarter to date. ${CUMULATIVE} Base: the last observation on or before the previous quarter-end (C5).`,
  return_25y: `25 years. ${ANNUALIZED(25)} ${YEARS(25)}`,
  return_30y: `30 years. ${ANNUALIZED(30)} ${YEARS(30)}`,
};

const TOP_KEYS = TRAILING_KEYS.slice(0, TOP_LEVEL_TRAILING);
const EXTRA_KEYS = TRAILING_KEYS.slice(TOP_LEVEL_TRAILING);

function figures(keys: readonly TrailingKey[]) {
  return Object.fromEntries(keys.map((k) => [k, returnFigure(FIGURE_TEXT[k])]));
}

export const ExtraReturnsSchema = {
  title: 'ExtraReturns',
  type: 'object',
  description:
    'Additional figures (C8). Always present with exactly these four keys: `return_mtd` and `return_qtd` ' +
    '(cumulative), `return_25y` and `return_30y` (annualized). Values as every other return figure (C1).',
  required: EXTRA_KEYS,
  additionalProperties: false,
  properties: figures(EXTRA_KEYS),
} as const;

export const TrailingReturnsSchema = {
  title: 'TrailingReturns',
  type: 'object',
  description:
    'Trailing total returns of one fund at one anchor date. Periods under 2 years (1D, 1W, 1M, 3M, 6M, YTD, 1Y) ' +
    'are cumulative; 2 years and longer are annualized (CAGR, C6). Every figure is a percent string with ' +
    'exactly 4 decimals or null (C1); every key is always present.',
  required: ['code', 'market', 'as_of_date', ...TOP_KEYS, 'extra_returns'],
  additionalProperties: false,
  properties: {
    code: CodeSchema,
    market: MarketResponseSchema,
    as_of_date: {
      ...DateSchema,
      description:
        "The anchor (C3): the fund's last observation on or before the requested as_of date, or its last " +
        'observation when none was requested. Every period is measured back from this date.',
    },
    ...figures(TOP_KEYS),
    extra_returns: ExtraReturnsSchema,
  },
} as const;

export const TrailingReturnsListSchema = {
  title: 'TrailingReturnsList',
  type: 'array',
  items: TrailingReturnsSchema,
  description:
    'Batch result: one row per requested code that has one, in the order of the requested codes; a code asked ' +
    'twice comes once, at its first place; unknown codes and codes without a row are left out (C16). Never a 404.',
} as const;

export const CalendarReturnSchema = {
  title: 'CalendarReturn',
  type: 'object',
  description:
    'Total return of one fund over one calendar year (C9, C10): P_end / P_base − 1, cumulative, never annualized. ' +
    'End = the last observation in the year; base = the last observation on or before 31 December of the previous ' +
    "year, or the fund's first observation in its inception year.",
  required: ['code', 'market', 'year', 'total_return', 'start_date', 'end_date', 'is_partial'],
  additionalProperties: false,
  properties: {
    code: CodeSchema,
    market: MarketResponseSchema,
    year: { type: 'integer', description: 'Calendar year of the row.', examples: [2023] },
    total_return: returnFigure(
      'Calendar-year total return, cumulative (C10). Null when base and end are the same single observation.',
    ),
    start_date: {
      ...DateSchema,
      description:
        "Date of the base observation: normally in the previous year, the fund's first date in its inception year.",
    },
    end_date: { ...DateSchema, description: 'Date of the last observation in the year.' },
    is_partial: {
      type: 'boolean',
      description:
        'True when the base is not in the previous year (inception year), or when end_date is before the last US ' +
        'trading day of the year: the year is still running or the fund stopped during it (C11).',
      examples: [false],
    },
  },
} as const;

export const CalendarReturnListSchema = {
  title: 'CalendarReturnList',
  type: 'array',
  items: CalendarReturnSchema,
  description:
    'Batch result: one row per requested code that has one for the year (or its default row, C12), in the order ' +
    'of the requested codes, duplicates once, misses left out (C16). Never a 404.',
} as const;

/** C1 percent string, or null. */
type ReturnFigure = string | null;

type ExtraReturns = Record<'return_mtd' | 'return_qtd' | 'return_25y' | 'return_30y', ReturnFigure>;

export type TrailingReturns = {
  code: string;
  market: 'US';
  as_of_date: string;
  extra_returns: ExtraReturns;
} & Record<Exclude<TrailingKey, keyof ExtraReturns>, ReturnFigure>;

export interface CalendarReturn {
  code: string;
  market: 'US';
  year: number;
  total_return: ReturnFigure;
  start_date: string;
  end_date: string;
  is_partial: boolean;
}
