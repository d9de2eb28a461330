/**
 * The fixed answers of the HTTP layer, in one place (in the spirit of Fastify's
 * lib/errors.js): status lines, and the `{"detail": …}` bodies that never change
 * (C21 routing and body errors, C24's no data, the gate's and the last line of
 * defence's 503 and 500). Answers that depend on the request are made where they
 * are decided: 422 in validation.ts (C20), problem+json in access/ (C22),
 * JSON-RPC errors in mcp/errors.ts, framing errors in body.ts.
 */
import { TOO_LARGE_DETAIL } from '../../schemas/common.js';
import { headerBlock } from './headers.js';

export const JSON_TYPE = 'application/json';
export const PROBLEM_JSON_TYPE = 'application/problem+json';

const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  400: '400 Bad Request',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  422: '422 Unprocessable Entity',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** The status line of a status code; the bare number for one not listed (uWS adds no reason phrase). */
export function statusLine(status: number): string {
  return STATUS_LINES[status] ?? String(status);
}

/** C24's sentence: no snapshot is loaded (REST and /mcp: 503; an MCP tool: an error result). */
export const NO_DATA_DETAIL = 'No data loaded';
export const NO_DATA = JSON.stringify({ detail: NO_DATA_DETAIL });
/** C24: a snapshot is expected within seconds; 30 s keeps retrying clients from hammering. */
export const NO_DATA_RETRY_AFTER = '30';
export const NO_DATA_HEADERS = headerBlock([['Retry-After', NO_DATA_RETRY_AFTER]]);

/** C21: a path no route answers. */
export const NOT_FOUND = '{"detail":"Not Found"}';
/** C21: a known route asked with another method (with `Allow`). */
export const METHOD_NOT_ALLOWED = '{"detail":"Method Not Allowed"}';
/** C21: a body over MAX_BODY_BYTES. */
export const TOO_LARGE = JSON.stringify({ detail: TOO_LARGE_DETAIL });
/** The gate could not decide (Redis failed past its fallback): retry in a second. */
export const GATE_UNAVAILABLE = '{"detail":"Access control is unavailable"}';
export const GATE_UNAVAILABLE_HEADERS = headerBlock([['Retry-After', '1']]);
/** An exception escaped a handler (http/guard.ts). */
export const INTERNAL_ERROR = '{"detail":"Internal Server Error"}';
