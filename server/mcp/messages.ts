/**
 * What a JSON-RPC message to /mcp and its parameters must be, checked by ajv validators
 * compiled once (the instance REST's bodies use, ajv.ts), not by the SDK's zod schemas:
 * zod's union of four strict objects was the largest single cost of a tools/call.
 * The shapes are the SDK's own (`JSONRPCMessageSchema`, `CallToolRequestParamsSchema`,
 * `InitializeRequestParamsSchema` of the pinned 1.32): the same messages pass.
 * Used over HTTP (rpc.ts) and stdio (server.ts) alike.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { ajv } from '../api/ajv.js';

/** A request id: a string or an integer (the SDK's RequestIdSchema). */
const ID = { type: ['string', 'integer'] } as const;
const VERSION = { const: '2.0' } as const;
/** `params` of a request or notification: an object whose `_meta`, if any, is one. */
const PARAMS = {
  type: 'object',
  properties: {
    _meta: { type: 'object', properties: { progressToken: ID } },
  },
} as const;

const MESSAGE = {
  anyOf: [
    // A request.
    {
      type: 'object',
      required: ['jsonrpc', 'id', 'method'],
      properties: { jsonrpc: VERSION, id: ID, method: { type: 'string' }, params: PARAMS },
      additionalProperties: false,
    },
    // A notification.
    {
      type: 'object',
      required: ['jsonrpc', 'method'],
      properties: { jsonrpc: VERSION, method: { type: 'string' }, params: PARAMS },
      additionalProperties: false,
    },
    // A result.
    {
      type: 'object',
      required: ['jsonrpc', 'id', 'result'],
      properties: { jsonrpc: VERSION, id: ID, result: { type: 'object' } },
      additionalProperties: false,
    },
    // An error.
    {
      type: 'object',
      required: ['jsonrpc', 'error'],
      properties: {
        jsonrpc: VERSION,
        id: ID,
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'integer' }, message: { type: 'string' } },
        },
      },
      additionalProperties: false,
    },
  ],
} as const;

const CALL_TOOL_PARAMS = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    arguments: { type: 'object' },
    _meta: PARAMS.properties._meta,
  },
} as const;

const INITIALIZE_PARAMS = {
  type: 'object',
  required: ['protocolVersion', 'capabilities', 'clientInfo'],
  properties: {
    protocolVersion: { type: 'string' },
    capabilities: { type: 'object' },
    clientInfo: {
      type: 'object',
      required: ['name', 'version'],
      properties: { name: { type: 'string' }, version: { type: 'string' } },
    },
    _meta: PARAMS.properties._meta,
  },
} as const;

const isMessage = ajv.compile(MESSAGE);
const isCallToolParams = ajv.compile(CALL_TOOL_PARAMS);
const isInitializeParams = ajv.compile(INITIALIZE_PARAMS);

export type RequestId = string | number;

/** A message as sent: jsonrpc "2.0", a method or a result or an error. */
export interface Message {
  jsonrpc: '2.0';
  id?: RequestId;
  method?: string;
  params?: Record<string, unknown>;
  result?: object;
  error?: { code: number; message: string };
}

export function isJsonRpcMessage(m: unknown): m is Message {
  return isMessage(m);
}

/** A valid message that expects an answer. */
export const isRequest = (m: Message): m is Message & { id: RequestId; method: string } =>
  m.method !== undefined && m.id !== undefined;

/** An error a handler throws: JSON-RPC's code and message, as the SDK's Protocol layer sends it. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** -32602 Invalid params (JSON-RPC 2.0 §5.1). */
const INVALID_PARAMS = -32602;

/** ajv's errors about `params` as one line: `params.clientInfo: is required; …`. */
function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => {
      const at = `params${e.instancePath.replaceAll('/', '.')}`;
      return e.keyword === 'required'
        ? `${at}.${(e.params as { missingProperty: string }).missingProperty}: is required`
        : `${at}: ${e.message ?? e.keyword}`;
    })
    .join('; ');
}

function checked<T>(check: ValidateFunction, params: unknown): T {
  if (!check(params)) throw new RpcError(INVALID_PARAMS, `Invalid params: ${describe(check.errors)}`);
  return params as T;
}

/** tools/call's params, or a -32602 naming the fields (not the SDK's zod dump). */
export function readToolCall(params: unknown): { name: string; arguments?: Record<string, unknown> } {
  return checked(isCallToolParams, params);
}

/** initialize's params, or a -32602 naming the fields. */
export function readInitialize(params: unknown): { protocolVersion: string } {
  return checked(isInitializeParams, params);
}
