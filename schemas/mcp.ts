/**
 * Input schemas of the MCP tools (SPEC 4). Arguments arrive as JSON, so they are the
 * typed forms of the REST parameters: the same rules, the same descriptions.
 *
 * Unlike REST's query (C19), an argument a tool does not take is refused: an agent
 * that writes `asof` for `as_of` or `yr` for `year` would otherwise get the latest
 * figures as if they were the ones it asked for, with nothing to tell it so.
 */
import { CodeSchema, MarketParamSchema } from './common.js';
import {
  CalendarBatchRequestSchema,
  CalendarQuerySchema,
  ListFundsQuerySchema,
  TrailingBatchRequestSchema,
  TrailingQuerySchema,
} from './requests.js';

const withCode = <P extends object>(properties: P) =>
  ({
    type: 'object',
    required: ['code'],
    properties: { code: CodeSchema, ...properties },
    additionalProperties: false,
  }) as const;

export const MCP_TOOL_INPUT_SCHEMAS = {
  searchFunds: { type: 'object', properties: ListFundsQuerySchema.properties, additionalProperties: false },
  getFund: withCode({ market: MarketParamSchema }),
  getTrailingReturns: withCode(TrailingQuerySchema.properties),
  batchTrailingReturns: {
    type: 'object',
    required: TrailingBatchRequestSchema.required,
    properties: TrailingBatchRequestSchema.properties,
    additionalProperties: false,
  },
  getCalendarReturns: withCode(CalendarQuerySchema.properties),
  batchCalendarReturns: {
    type: 'object',
    required: CalendarBatchRequestSchema.required,
    properties: CalendarBatchRequestSchema.properties,
    additionalProperties: false,
  },
} as const;

export type McpToolName = keyof typeof MCP_TOOL_INPUT_SCHEMAS;
