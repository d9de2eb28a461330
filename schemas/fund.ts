/** Fund metadata and the paged fund list (SPEC 2, C17, C18). */
import {
  CodeSchema,
  CURSOR_EXAMPLE,
  type FUND_TYPES,
  FundTypeSchema,
  MarketResponseSchema,
} from './common.js';

const nullableString = (description: string, examples: readonly (string | null)[]) =>
  ({ type: ['string', 'null'], description, examples }) as const;

const nullableDate = (description: string) =>
  ({
    type: ['string', 'null'],
    format: 'date',
    description: `${description} ISO 8601 \`YYYY-MM-DD\`, or null.`,
    examples: ['2024-03-28', null],
  }) as const;

const FUND_KEYS = [
  'code',
  'market',
  'name',
  'country',
  'exchange',
  'currency',
  'type',
  'isin',
  'is_inactive',
  'inactive_date',
  'min_return_date',
  'max_return_date',
] as const;

export const FundSchema = {
  title: 'Fund',
  type: 'object',
  description:
    'Metadata of one US mutual fund or ETF. Every key is always present (C17); `code`, `market`, ' +
    '`type` and `is_inactive` are never null, the other fields may be null when the source has no value.',
  required: FUND_KEYS,
  additionalProperties: false,
  properties: {
    code: CodeSchema,
    market: MarketResponseSchema,
    name: nullableString('Fund name as stored.', ['Vanguard Total Stock Market ETF']),
    country: nullableString('Domicile country as stored (exact-match filter value of `country`).', ['USA']),
    exchange: nullableString('Listing exchange as stored (exact-match filter value of `exchange`).', [
      'NYSE ARCA',
    ]),
    currency: nullableString('Trading currency.', ['USD']),
    type: FundTypeSchema,
    isin: nullableString('ISIN.', ['US9229087690']),
    is_inactive: {
      type: 'boolean',
      description: 'True when the fund is inactive (delisted or liquidated); see `inactive_date`.',
      examples: [false],
    },
    inactive_date: nullableDate('Date the fund became inactive; null for active funds or when unknown.'),
    min_return_date: nullableDate(
      "Earliest date with return data: the fund's first observation (C2). Null when no data.",
    ),
    max_return_date: nullableDate(
      "Latest date with return data: the fund's last observation, the default anchor of its rows (C3).",
    ),
  },
} as const;

export const FundListSchema = {
  title: 'FundList',
  type: 'object',
  description:
    'One page of funds in ascending code order (byte order, C18). Metadata only, no performance figures.',
  required: ['data', 'next_cursor'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'array',
      items: FundSchema,
      description: 'The funds of this page, at most `limit` of them.',
    },
    next_cursor: {
      type: ['string', 'null'],
      description:
        'Opaque keyset cursor (base64url, encodes the last code returned, C18): pass it as the `cursor` ' +
        'query parameter for the next page, which continues strictly after that code, so it stays valid ' +
        'across data refreshes and filter changes. Null when there are no more pages.',
      examples: [CURSOR_EXAMPLE, null],
    },
  },
} as const;

export interface Fund {
  code: string;
  market: 'US';
  name: string | null;
  country: string | null;
  exchange: string | null;
  currency: string | null;
  type: (typeof FUND_TYPES)[number];
  isin: string | null;
  is_inactive: boolean;
  inactive_date: string | null;
  min_return_date: string | null;
  max_return_date: string | null;
}

export interface FundList {
  data: Fund[];
  next_cursor: string | null;
}
