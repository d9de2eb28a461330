/** Error bodies: FastAPI-style 422 (C20), app errors (C21), gateway problem+json (C22). */

import { MAX_BODY_TEXT } from './common.js';

export const ValidationErrorSchema = {
  title: 'ValidationError',
  type: 'object',
  description: 'One failed check, in FastAPI / Pydantic v2 form (C20).',
  required: ['loc', 'msg', 'type'],
  properties: {
    loc: {
      type: 'array',
      items: { type: ['string', 'integer'] },
      description:
        'Where the faulty input is: starts with `path`, `query` or `body`, then the field name and, inside lists, ' +
        'the item index (e.g. `["body","codes",3]`). A JSON syntax error is `["body", <character position>]`.',
      examples: [
        ['query', 'limit'],
        ['body', 'codes', 3],
      ],
    },
    msg: {
      type: 'string',
      description: "Pydantic v2's usual message for the error type.",
      examples: ['Input should be greater than or equal to 1'],
    },
    type: {
      type: 'string',
      description:
        'Pydantic v2 error type, e.g. `missing`, `int_parsing`, `greater_than_equal`, `less_than_equal`, ' +
        '`too_short`, `too_long`, `string_too_long`, `string_pattern_mismatch`, `string_type`, `list_type`, ' +
        '`literal_error`, `date_from_datetime_parsing`, `date_from_datetime_inexact`, `date_parsing`, `int_parsing_size`, `json_invalid`, `model_attributes_type`.',
      examples: ['greater_than_equal'],
    },
    input: { description: 'The offending input value as received.', examples: ['0'] },
    ctx: {
      type: 'object',
      description: 'Parameters of the failed check, e.g. `{"ge": 1}` or `{"max_length": 100}`.',
      examples: [{ ge: 1 }],
    },
  },
} as const;

export const HTTPValidationErrorSchema = {
  title: 'HTTPValidationError',
  type: 'object',
  description: '422 body for invalid parameters or bodies: every failure of the request is listed (C20).',
  required: ['detail'],
  properties: {
    detail: { type: 'array', items: ValidationErrorSchema, description: 'All failures, in field order.' },
  },
  examples: [
    {
      detail: [
        {
          type: 'greater_than_equal',
          loc: ['query', 'limit'],
          msg: 'Input should be greater than or equal to 1',
          input: '0',
          ctx: { ge: 1 },
        },
      ],
    },
  ],
} as const;

export const AppErrorSchema = {
  title: 'AppError',
  type: 'object',
  description:
    'Application error (C21): 404 for an unknown code or no row (C3, C12), 404 `Not Found` for an unknown route, ' +
    `405 \`Method Not Allowed\`, 413 for a body over ${MAX_BODY_TEXT}, 503 \`No data loaded\` (C24).`,
  required: ['detail'],
  properties: { detail: { type: 'string', description: 'A human sentence.', examples: ['Fund not found'] } },
  examples: [{ detail: 'No data loaded' }],
} as const;

/** A JSON-RPC 2.0 error response: what /mcp answers a request it cannot take as MCP. */
export const JsonRpcErrorSchema = {
  title: 'JsonRpcError',
  type: 'object',
  description: 'A JSON-RPC 2.0 error response (MCP transport errors on /mcp).',
  required: ['jsonrpc', 'error', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'integer',
          description: 'JSON-RPC error code (-32700 parse error, -32600 invalid request, ...).',
        },
        message: { type: 'string' },
        data: {},
      },
    },
    id: {
      type: ['string', 'integer', 'null'],
      description: 'The request id, null when it could not be read.',
    },
  },
  examples: [{ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null }],
} as const;

export const PROBLEM_SLUGS = ['unauthorized', 'forbidden', 'rate-limited', 'quota-exceeded'] as const;

export const ProblemSchema = {
  title: 'Problem',
  type: 'object',
  description:
    'RFC 7807 problem details (`application/problem+json`) for gateway errors (C22): 401 missing/unknown/revoked key, ' +
    '403 no active subscription, 429 burst limit (`rate-limited`) or monthly quota (`quota-exceeded`).',
  required: ['type', 'title', 'status', 'detail', 'instance'],
  properties: {
    type: {
      type: 'string',
      format: 'uri',
      description:
        '`<public base URL>/problems/<slug>`, slug one of `unauthorized`, `forbidden`, `rate-limited`, ' +
        '`quota-exceeded`; the URL answers with a short explanation page.',
      examples: ['https://api.example.com/problems/rate-limited'],
    },
    title: {
      type: 'string',
      description: 'Short summary of the problem type.',
      examples: ['Too Many Requests'],
    },
    status: { type: 'integer', description: 'HTTP status code.', examples: [429] },
    detail: {
      type: 'string',
      description: 'Explanation of this occurrence.',
      examples: ['Burst limit of 100 requests per minute exceeded; retry after 1 s.'],
    },
    instance: { type: 'string', description: 'The request path.', examples: ['/v1/funds/VTI'] },
  },
} as const;
