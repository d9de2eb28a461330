/**
 * The MCP tools as `tools/list` shows them (SPEC 4 "MCP endpoint", and the screen,
 * compare and growth tools), and the server instructions an agent reads on connecting.
 *
 * Schemas come from `schemas/` (the one source): inputs are MCP_TOOL_INPUT_SCHEMAS,
 * outputs the REST response schemas. MCP wants `structuredContent` to be an object,
 * so the batch tools wrap the REST array as `{ rows: [...] }`.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  BATCH_MAX_CODES,
  CalendarReturnListSchema,
  CalendarReturnSchema,
  COMPARE_MAX_CODES,
  FigureRowListSchema,
  FundListSchema,
  FundSchema,
  GrowthSchema,
  LIMIT_MAX,
  MCP_TOOL_INPUT_SCHEMAS,
  mcpOutputSchema,
  RiskFiguresListSchema,
  SCREEN_LIMIT_MAX,
  ScreenPageSchema,
  TrailingReturnsListSchema,
  TrailingReturnsSchema,
} from '../../schemas/index.js';

const UNITS =
  'Returns are percent as decimal strings with 4 decimals ("12.3456" means +12.3456 %, C1). Periods under 2 ' +
  'years (1D, 1W, 1M, 3M, 6M, YTD, 1Y, MTD, QTD) are cumulative; 2 years and longer are annualized (CAGR). A ' +
  'figure is null when the fund has too little history for the period or the data has a gap there; keys are never ' +
  'omitted.';
const NOT_ADVICE = 'Informational data only, not investment advice.';
const CODES =
  'Funds are identified by `code`, the bare US ticker (case-sensitive, no exchange suffix, e.g. "VTI").';

const ABOUT = [
  'Fund Returns: trailing and calendar-year total returns plus metadata for US mutual funds and ETFs, ' +
    'built from adjusted end-of-day prices and refreshed daily on trading days.',
  CODES,
  'When you only know a name, call searchFunds first to find the code. For one fund use getTrailingReturns or ' +
    'getCalendarReturns; for several funds use batchTrailingReturns or batchCalendarReturns (up to ' +
    `${BATCH_MAX_CODES} codes in one call) instead of calling a single-fund tool repeatedly. getFund gives ` +
    'metadata (name, type, exchange, ISIN, active or not, the date range with data).',
  UNITS,
];

/** Over HTTP (/mcp), where the API key's plan limits apply (C30). */
export const SERVER_INSTRUCTIONS = [
  ...ABOUT,
  "Every HTTP request to this server counts one request against the API key's plan limits, like a REST call " +
    '(one tool call, or one JSON-RPC batch; connecting costs two: initialize and its notification).',
  NOT_ADVICE,
].join('\n\n');

/** Over stdio (`fundreturns mcp --stdio`): a local snapshot, no key and no limits. */
export const STDIO_SERVER_INSTRUCTIONS = [...ABOUT, NOT_ADVICE].join('\n\n');

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** structuredContent of the batch tools: the REST array under `rows`. */
const rowsOf = (list: { description: string; items: object }) => ({
  type: 'object',
  required: ['rows'],
  additionalProperties: false,
  properties: { rows: { type: 'array', items: list.items, description: list.description } },
});

// The SDK's Tool type wants JSON Schema as loose objects; ours are deeply readonly consts.
const schema = (s: object) => s as Tool['inputSchema'];

export const TOOLS: Tool[] = [
  {
    name: 'searchFunds',
    title: 'Search funds',
    description:
      'Find US mutual funds and ETFs by ticker or name (case-insensitive substring), optionally filtered by type ' +
      '(ETF or FUND), country or exchange. Returns metadata only (no returns), in ascending code order, ' +
      `up to \`limit\` funds (default 100, max ${LIMIT_MAX}); pass \`next_cursor\` back as \`cursor\` for the next ` +
      'page. Use it first when you know a fund by name but not its ticker, then pass the codes to the returns ' +
      `tools. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.searchFunds),
    outputSchema: schema(mcpOutputSchema(FundListSchema)),
    annotations: { title: 'Search funds', ...READ_ONLY },
  },
  {
    name: 'getFund',
    title: 'Fund metadata',
    description:
      'Metadata of one fund by its code: name, type (ETF or FUND), exchange, currency, ISIN, whether it is ' +
      'inactive, and the first and last dates with return data. Fields other than code, market, type and ' +
      `is_inactive may be null. An unknown code is an error result; use searchFunds to find codes. ${CODES}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getFund),
    outputSchema: schema(mcpOutputSchema(FundSchema)),
    annotations: { title: 'Fund metadata', ...READ_ONLY },
  },
  {
    name: 'getTrailingReturns',
    title: 'Trailing returns of one fund',
    description:
      'Trailing total returns of one fund: 1D, 1W, 1M, 3M, 6M, YTD, 1Y, 2Y–20Y, since inception, and in ' +
      'extra_returns MTD, QTD, 25Y, 30Y. Latest by default, or as of a date (a non-trading day snaps back to the ' +
      `fund's previous observation; as_of_date in the result is the date used). ${UNITS} For more than one fund use ` +
      `batchTrailingReturns. An unknown code is an error result. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getTrailingReturns),
    outputSchema: schema(mcpOutputSchema(TrailingReturnsSchema)),
    annotations: { title: 'Trailing returns of one fund', ...READ_ONLY },
  },
  {
    name: 'batchTrailingReturns',
    title: 'Trailing returns of many funds',
    description:
      `Trailing total returns of 1 to ${BATCH_MAX_CODES} funds in one call (one request against the rate limit), ` +
      'latest or as of one date for all. Result: `rows`, one per code that has data, in the order asked; unknown ' +
      `codes are left out (the text lists them), never an error. ${UNITS} ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.batchTrailingReturns),
    outputSchema: schema(mcpOutputSchema(rowsOf(TrailingReturnsListSchema))),
    annotations: { title: 'Trailing returns of many funds', ...READ_ONLY },
  },
  {
    name: 'getCalendarReturns',
    title: 'Calendar-year return of one fund',
    description:
      'Total return of one fund over one calendar year (cumulative, percent with 4 decimals, C1), with the base ' +
      "and end dates and is_partial (inception year, the running year, or a fund that stopped). Without `year`: the fund's " +
      'latest complete year. A year without data or an unknown code is an error result. For more than one fund use ' +
      `batchCalendarReturns. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getCalendarReturns),
    outputSchema: schema(mcpOutputSchema(CalendarReturnSchema)),
    annotations: { title: 'Calendar-year return of one fund', ...READ_ONLY },
  },
  {
    name: 'batchCalendarReturns',
    title: 'Calendar-year returns of many funds',
    description:
      `Calendar-year total returns of 1 to ${BATCH_MAX_CODES} funds for one year (or each fund's latest complete ` +
      'year) in one call. Result: `rows`, in the order asked; codes without a row are left out (the text lists ' +
      `them), never an error. Percent strings with 4 decimals, cumulative; null when not computable. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.batchCalendarReturns),
    outputSchema: schema(mcpOutputSchema(rowsOf(CalendarReturnListSchema))),
    annotations: { title: 'Calendar-year returns of many funds', ...READ_ONLY },
  },
  {
    name: 'getRiskFigures',
    title: 'Risk figures of one or many funds',
    description:
      `Risk figures of one fund (\`code\`) or of 1 to ${BATCH_MAX_CODES} funds (\`codes\`) over windows of 1, 3, 5 ` +
      'and 10 years of month-end returns: annualized volatility (%), Sharpe and Sortino ratios (against the ' +
      '3-month T-bill), maximum drawdown (%) with peak, trough and recovery dates, best and worst month (%), share ' +
      'of positive months (%), and beta and correlation against `benchmark` (a fund code; else the server default, ' +
      'if any). Latest, or as of a date. Result: `rows`, in the order asked; codes without data are left out (the ' +
      'text lists them). Figures are 4-decimal strings; null when the window is incomplete or the figure undefined. ' +
      `An unknown benchmark is an error. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getRiskFigures),
    outputSchema: schema(mcpOutputSchema(rowsOf(RiskFiguresListSchema))),
    annotations: { title: 'Risk figures of one or many funds', ...READ_ONLY },
  },
  {
    name: 'screenFunds',
    title: 'Screen and rank funds',
    description:
      'Find funds by their figures: bounds such as `return_5y_min: 8`, `history_years_min: 10` or ' +
      '`volatility_3y_max: 15` (inclusive; a fund without the figure is left out), the searchFunds filters (q, ' +
      'type, country, exchange) and `inactive`, sorted by `sort` (a figure name, `-` first for descending; funds ' +
      `without it last, ties by code). Up to ${SCREEN_LIMIT_MAX} rows a page (\`limit\`), each code, name, type and ` +
      'the `fields` asked for (default the 1, 3, 5 and 10-year returns plus the sorted and filtered figures); pass ' +
      `\`next_cursor\` back as \`cursor\` with the same sort. Latest data only. ${UNITS} ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.screenFunds),
    outputSchema: schema(mcpOutputSchema(ScreenPageSchema)),
    annotations: { title: 'Screen and rank funds', ...READ_ONLY },
  },
  {
    name: 'compareFunds',
    title: 'Compare funds side by side',
    description:
      `The same figures for 1 to ${COMPARE_MAX_CODES} funds in one call, as one compact table (a header line, ` +
      'one line per fund): `fields` lists the figures wanted in order (trailing returns such as return_1y, ' +
      'history_years, and risk figures such as volatility_3y when the server has them; default the 1, 3, 5 and ' +
      '10-year returns). Full rows in structuredContent `rows`, in the order asked; unknown codes are left out ' +
      `(the text lists them). ${UNITS} ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.compareFunds),
    outputSchema: schema(mcpOutputSchema(rowsOf(FigureRowListSchema))),
    annotations: { title: 'Compare funds side by side', ...READ_ONLY },
  },
  {
    name: 'getGrowth',
    title: 'Growth of 10,000',
    description:
      "The value of 10,000 invested at the fund's first observation on or after `from`, at the end of each " +
      'day, week or month (`interval`, default month) up to `to`: a chart series with dividends reinvested. At ' +
      `most 5000 points; a longer series is an error asking for a longer interval. ${NOT_ADVICE}`,
    inputSchema: schema(MCP_TOOL_INPUT_SCHEMAS.getGrowth),
    outputSchema: schema(mcpOutputSchema(GrowthSchema)),
    annotations: { title: 'Growth of 10,000', ...READ_ONLY },
  },
];

/** The `tools/list` result, built once. */
export const LIST_TOOLS_RESULT = { tools: TOOLS };
