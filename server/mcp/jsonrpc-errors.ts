/**
 * What /mcp answers a request it cannot take as MCP: JSON-RPC 2.0 error objects
 * (§5.1 codes), with the sentences that say why. The HTTP status of each is chosen
 * where it is answered (http.ts).
 */

/** A JSON-RPC error object; `id` is the message's own when it could be read (JSON-RPC 2.0 §5). */
export function rpcError(code: number, message: string, id: unknown = null) {
  return {
    jsonrpc: '2.0',
    error: { code, message },
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
  };
}

/** An exception while serving (http/guard.ts logged it): JSON-RPC's own internal error. */
export const INTERNAL = '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}';

/** Said by us: the SDK's own 406 asks for text/event-stream as well, which we never send. */
export const NOT_ACCEPTABLE_MESSAGE =
  'Not Acceptable: /mcp answers in application/json only (no event streams); send an Accept that admits it, such as application/json or */*';

const NOT_A_MESSAGE =
  'not a JSON-RPC 2.0 message (jsonrpc "2.0", a method and a string or number id, or a notification)';

export const INVALID_MESSAGE = `Invalid Request: ${NOT_A_MESSAGE}`;
export const invalidBatchElement = (i: number) => `Invalid Request: batch element ${i} is ${NOT_A_MESSAGE}`;
export const EMPTY_BATCH = 'Invalid Request: an empty batch';
/** MCP's lifecycle: initialize is sent alone (the SDK would say "only one initialization request"). */
export const INITIALIZE_IN_BATCH =
  'Invalid Request: initialize must be sent alone, not in a batch (MCP lifecycle)';
/** Bytes that are not UTF-8 (as REST's 422 json_invalid, C21). */
export const NOT_UTF8 = 'Parse error: the body is not valid UTF-8';

/** The 403 for a browser origin /mcp does not accept (origin.ts): a JSON-RPC error with no id. */
export function forbiddenOrigin(origin: string): string {
  const shown = origin.length > 100 ? `${origin.slice(0, 97)}...` : origin;
  return JSON.stringify(
    rpcError(
      -32000,
      `Forbidden: requests from browser origin ${JSON.stringify(shown)} are not accepted (MCP's DNS-rebinding protection); the operator can allow an origin with --mcp-origins`,
    ),
  );
}
