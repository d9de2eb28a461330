/**
 * Screening, comparing and growth of 10,000 (C50–C56): the figure names a screen
 * filters and sorts on, the figure rows it answers, and the growth series.
 *
 * A figure is named as the screen column it is: every trailing period by its row key
 * (`return_5y`), `history_years`, and each risk figure per window
 * (`<figure>_<window>`, `volatility_3y`). Which of them a server has is decided by
 * its snapshot (a snapshot without risk figures screens on returns and history only);
 * the names below are the ones the API may offer, for the documents.
 */
import { RISK_WINDOW_KEYS, STORED_FIGURES } from '../core/risk.js';
import { TRAILING_KEYS } from '../core/types.js';
import { CodeSchema, CURSOR_EXAMPLE, DateSchema, FundTypeSchema, MarketResponseSchema } from './common.js';
import { ListFundsQuerySchema } from './requests.js';

/** Rows a screen page holds at most (C50). */
export const SCREEN_LIMIT_MAX = 100;
/** Codes one comparison takes at most (C53). */
export const COMPARE_MAX_CODES = 20;
/** Points one growth series holds at most (C55). */
export const GROWTH_MAX_POINTS = 5000;
/** What a growth series starts from (C55). */
export const GROWTH_START_VALUE = 10000;
export const GROWTH_INTERVALS = ['day', 'week', 'month'] as const;
export type GrowthInterval = (typeof GROWTH_INTERVALS)[number];

export const HISTORY_YEARS = 'history_years';

/** Figures of a screen row when `fields` is not given (C51). */
export const DEFAULT_FIGURES = ['return_1y', 'return_3y', 'return_5y', 'return_10y'] as const;

const FIGURE_LIST = `\`${TRAILING_KEYS.join('`, `')}\`, \`${HISTORY_YEARS}\`, and, when the server has risk figures, \`<figure>_<window>\` for the figures ${STORED_FIGURES.map((f) => `\`${f}\``).join(', ')} and the windows ${RISK_WINDOW_KEYS.map((w) => `\`${w}\``).join(', ')}`;

const FIELDS_DESCRIPTION =
  `Comma-separated figure names, in the order wanted, each at most once: ${FIGURE_LIST}. An unknown name is ` +
  'a 422 at `fields` listing the valid ones (C51).';

const FigureValueSchema = {
  type: ['string', 'null'],
  pattern: '^-?\\d+\\.\\d{4}$',
  description:
    'A figure as a decimal string with 4 decimals (C1 rounding): returns and risk percents in percent, ratios ' +
    '(sharpe, sortino) as they are, `history_years` in years; null when the fund has no such figure.',
};

/** A fund's row in a screen or a comparison: identity, then the figures asked for, in that order. */
export const FigureRowSchema = {
  title: 'FigureRow',
  type: 'object',
  description:
    '`code`, `name` and `type` always, then one key per figure asked for (`fields`), in the order asked (C51).',
  required: ['code', 'name', 'type'],
  properties: {
    code: CodeSchema,
    name: { type: ['string', 'null'], description: 'Fund name as stored; null when unknown.' },
    type: FundTypeSchema,
  },
  additionalProperties: FigureValueSchema,
  examples: [{ code: 'VTI', name: 'Vanguard Total Stock Market ETF', type: 'ETF', return_5y: '12.3456' }],
} as const;

export const ScreenPageSchema = {
  title: 'ScreenPage',
  type: 'object',
  description:
    'One page of a screen (C50): at most 100 rows in the sort order, and the cursor of the next page.',
  required: ['data', 'next_cursor'],
  additionalProperties: false,
  properties: {
    data: { type: 'array', items: FigureRowSchema, description: 'The rows of this page.' },
    next_cursor: {
      type: ['string', 'null'],
      description:
        'Opaque keyset cursor (C52): pass it as `cursor` with the same `sort` for the next page, which continues ' +
        'strictly after the last row (its sort value and code), so it stays valid across data refreshes. Null ' +
        'when there are no more rows.',
    },
  },
} as const;

export const FigureRowListSchema = {
  title: 'FigureRowList',
  type: 'array',
  description: 'One row per known code, in the order asked; unknown codes are left out (C53, as C16).',
  items: FigureRowSchema,
} as const;

const MetaFilters = ListFundsQuerySchema.properties;

/** Query of GET /v1/screen; the `<figure>_min` / `<figure>_max` filters are described by the operation. */
export const ScreenQuerySchema = {
  title: 'ScreenQuery',
  type: 'object',
  properties: {
    q: MetaFilters.q,
    type: MetaFilters.type,
    country: MetaFilters.country,
    exchange: MetaFilters.exchange,
    inactive: {
      type: 'boolean',
      description: 'true: only inactive funds; false: only active ones; absent: both (C50).',
      examples: [false],
    },
    sort: {
      type: 'string',
      pattern: '^-?[a-z0-9_]+$',
      description:
        'A figure name to sort by, ascending; with a leading `-` descending. Funds without the figure come last ' +
        'either way; equal values in ascending code order. Absent: ascending code order (C50).',
      examples: ['-return_5y'],
    },
    fields: {
      type: 'string',
      description: FIELDS_DESCRIPTION,
      examples: ['return_1y,return_5y,history_years'],
    },
    cursor: {
      type: 'string',
      description:
        'The `next_cursor` of the previous page, with the same `sort`; one that does not decode, or was issued ' +
        'for another sort, is a 422 at `cursor` (C52).',
      examples: [CURSOR_EXAMPLE],
    },
    limit: {
      type: 'integer',
      minimum: 1,
      default: SCREEN_LIMIT_MAX,
      description: `Page size, 1 to ${SCREEN_LIMIT_MAX}; more is capped at ${SCREEN_LIMIT_MAX}.`,
      examples: [20],
    },
  },
} as const;

export const CompareQuerySchema = {
  title: 'CompareQuery',
  type: 'object',
  required: ['codes'],
  properties: {
    codes: {
      type: 'string',
      description:
        `Comma-separated fund codes, 1 to ${COMPARE_MAX_CODES} (more is a 422 at \`codes\`). Unknown codes are ` +
        'left out of the rows; a code given twice counts once (C53).',
      examples: ['VTI,VOO,QQQ'],
    },
    fields: { type: 'string', description: FIELDS_DESCRIPTION, examples: ['return_1y,return_3y,return_5y'] },
  },
} as const;

export const GrowthQuerySchema = {
  title: 'GrowthQuery',
  type: 'object',
  properties: {
    from: {
      type: 'string',
      format: 'date',
      description:
        "Start: 10,000 is invested at the fund's first observation on or after this date (C55). Absent: its first " +
        'observation.',
      examples: ['2020-01-01'],
    },
    to: {
      type: 'string',
      format: 'date',
      description: 'End: the last point is the last observation on or before this date. Absent: the latest.',
      examples: ['2024-12-31'],
    },
    interval: {
      type: 'string',
      enum: GROWTH_INTERVALS,
      default: 'month',
      description:
        'One point per observation (`day`), per ISO week (`week`, its last observation) or per calendar month ' +
        `(\`month\`, its last observation); the start is always the first point. More than ${GROWTH_MAX_POINTS} ` +
        'points is a 422 at `interval` naming the limit (C55).',
    },
  },
} as const;

export const GrowthSchema = {
  title: 'Growth',
  type: 'object',
  description: 'Growth of 10,000 (C55): the value of 10,000 invested at the start, at each interval end.',
  required: ['code', 'market', 'interval', 'start_date', 'end_date', 'points'],
  additionalProperties: false,
  properties: {
    code: CodeSchema,
    market: MarketResponseSchema,
    interval: { type: 'string', enum: GROWTH_INTERVALS },
    start_date: { ...DateSchema, description: 'The observation 10,000 is invested at.' },
    end_date: { ...DateSchema, description: 'The last point.' },
    points: {
      type: 'array',
      maxItems: GROWTH_MAX_POINTS,
      description: 'Ascending by date; the first is the start at "10000.00".',
      items: {
        type: 'object',
        required: ['date', 'value'],
        additionalProperties: false,
        properties: {
          date: DateSchema,
          value: {
            type: 'string',
            pattern: '^\\d+\\.\\d{2}$',
            description: 'Value in the fund currency, 2 decimals (half away from zero).',
          },
        },
      },
    },
  },
} as const;

export interface FigureRow {
  code: string;
  name: string | null;
  type: string;
  [figure: string]: string | null;
}

export interface ScreenPage {
  data: FigureRow[];
  next_cursor: string | null;
}

export interface Growth {
  code: string;
  market: 'US';
  interval: (typeof GROWTH_INTERVALS)[number];
  start_date: string;
  end_date: string;
  points: Array<{ date: string; value: string }>;
}

/** A row reduced by `fields` on a single or batch endpoint (C51). */
export const PickedRowSchema = {
  title: 'PickedRow',
  type: 'object',
  description:
    'A row with `fields`: the keys naming it (`code`, `market`, and `as_of_date` or `year` where the row has one), ' +
    'then the figures asked for, in that order, as the whole row would give them (C51).',
  required: ['code', 'market'],
  properties: { code: CodeSchema, market: MarketResponseSchema },
  additionalProperties: { type: ['string', 'integer', 'boolean', 'null'] },
} as const;

export const PickedRowListSchema = {
  title: 'PickedRowList',
  type: 'array',
  description: 'The rows of a batch with `fields`, in request order (C16, C51).',
  items: PickedRowSchema,
} as const;
