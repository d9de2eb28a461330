/**
 * Input schemas of the MCP tools (SPEC 4). Arguments arrive as JSON, so they are the
 * typed forms of the REST parameters: the same rules, the same descriptions.
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
  ({ type: 'object', required: ['code'], properties: { code: CodeSchema, ...properties } }) as const;

export const MCP_TOOL_INPUT_SCHEMAS = {
  searchFunds: { type: 'object', properties: ListFundsQuerySchema.properties },
  getFund: withCode({ market: MarketParamSchema }),
  getTrailingReturns: withCode(TrailingQuerySchema.properties),
  batchTrailingReturns: {
    type: 'object',
    required: TrailingBatchRequestSchema.required,
    properties: TrailingBatchRequestSchema.properties,
  },
  getCalendarReturns: withCode(CalendarQuerySchema.properties),
  batchCalendarReturns: {
    type: 'object',
    required: CalendarBatchRequestSchema.required,
    properties: CalendarBatchRequestSchema.properties,
  },
} as const;

export type McpToolName = keyof typeof MCP_TOOL_INPUT_SCHEMAS;
