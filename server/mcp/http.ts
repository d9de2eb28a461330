/**
 * /mcp over HTTP: the SDK's web-standard Streamable HTTP transport in stateless mode
 * with JSON responses, bridged onto uWS. The route runs like a REST batch route:
 * gate (auth, then limits: every HTTP request counts one, C23, C30) before the body
 * is read, then the body, then MCP. Only POST is served; GET and DELETE are 405
 * here because a stateless transport would otherwise open an SSE stream that never
 * ends (SDK 1.32) and there are no sessions to delete.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { type AppContext, gatedBody } from '../app.js';
import { Call } from '../http/call.js';
import { guard, reportInternalError } from '../http/guard.js';
import { ascii, headerBlock, headerWriter } from '../http/headers.js';
import { acceptsJson } from '../http/negotiation.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import type { TemplatedApp } from '../uws.js';
import { createMcpServer, type McpServerInfo } from './server.js';
import { NO_DATA_DETAIL } from './tools.js';

const JSON_TYPE = 'application/json';
/**
 * The transport needs a URL but reads nothing from it in stateless JSON mode; the
 * client's Host is not used, since a malformed one (`a b`) would make Request throw.
 */
const MCP_URL = 'http://localhost/mcp';
const BOTH_TYPES = 'application/json, text/event-stream';
const NO_DATA = JSON.stringify({ detail: NO_DATA_DETAIL });
const METHOD_NOT_ALLOWED = '{"detail":"Method Not Allowed"}';
const ALLOW_POST = headerBlock([['Allow', 'POST']]);
const INTERNAL = '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}';

const STATUS: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  400: '400 Bad Request',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

const isToolCall = (m: unknown) =>
  typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call';

/**
 * Why JSON that parsed is still not a JSON-RPC 2.0 message or batch, or null. The
 * SDK's transport answers these -32700 Parse error; JSON-RPC 2.0 §5.1 says -32600.
 */
function invalidRequest(body: unknown): string | null {
  if (Array.isArray(body)) {
    if (body.length === 0) return 'an empty batch';
    const bad = body.findIndex((m) => !JSONRPCMessageSchema.safeParse(m).success);
    return bad < 0 ? null : `batch element ${bad} is not a JSON-RPC 2.0 message`;
  }
  return JSONRPCMessageSchema.safeParse(body).success
    ? null
    : 'not a JSON-RPC 2.0 message (jsonrpc "2.0", a method and a string or number id, or a notification)';
}

/**
 * One POST to /mcp, web-standard in and out. `body` is the parsed JSON-RPC message
 * (or batch); undefined makes the transport read and parse `request`'s own body.
 *
 * C24: a POST carrying a tools/call while no snapshot is loaded is answered
 * 503 `{"detail":"No data loaded"}` like a REST data route, so HTTP clients and
 * proxies see "briefly unavailable" and retry; initialize, ping and tools/list
 * need no data and still work.
 */
export async function handleMcpPost(
  request: Request,
  body: unknown,
  snap: ServingSnapshot | null,
  info: McpServerInfo,
): Promise<Response> {
  const invalid = body === undefined ? null : invalidRequest(body);
  if (invalid !== null) {
    return new Response(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32600, message: `Invalid Request: ${invalid}` },
        id: null,
      }),
      { status: 400, headers: { 'Content-Type': JSON_TYPE } },
    );
  }
  if (snap === null && (Array.isArray(body) ? body.some(isToolCall) : isToolCall(body))) {
    return new Response(NO_DATA, {
      status: 503,
      headers: { 'Content-Type': JSON_TYPE, 'Retry-After': '30' },
    });
  }
  // Stateless (no session id generator): this pair serves this one request only.
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  const server = createMcpServer(info, () => snap);
  await server.connect(transport);
  // In JSON-response mode nothing outlives the response (no streams, no timers),
  // so the pair is left to the garbage collector instead of being closed.
  return transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
}

/** Register POST /mcp and its 405s; called through AppContext.extend before the catch-alls. */
export function registerMcpRoutes(app: TemplatedApp, ctx: AppContext, info: McpServerInfo): void {
  app.post('/mcp', (res, req) => {
    const call = new Call(res, req, 'POST', '/mcp');
    // Every HTTP request to /mcp passes the gate and counts one, like a REST call (C30).
    // The request object is valid only in this callback: copy what the transport reads.
    const headers: Array<[string, string]> = [];
    req.forEach((k, v) => {
      if (k === 'content-length' || k === 'transfer-encoding') return;
      // Answers are always JSON (no event streams): any Accept that takes JSON (`*/*`,
      // `APPLICATION/JSON`, none) is what the SDK requires to hear, both types listed.
      if (k === 'accept' && acceptsJson(v)) headers.push([k, BOTH_TYPES]);
      else headers.push([k, v]);
    });
    if (!headers.some(([k]) => k === 'accept')) headers.push(['accept', BOTH_TYPES]);
    const answer = (raw: Buffer) => {
      const started = performance.now();
      const snap = ctx.snapshot();
      let body: unknown;
      let request: Request;
      try {
        body = JSON.parse(raw.toString('utf8'));
        request = new Request(MCP_URL, { method: 'POST', headers });
      } catch {
        // Not JSON: the transport reads the text itself and answers with its own JSON-RPC error.
        body = undefined;
        request = new Request(MCP_URL, { method: 'POST', headers, body: raw });
      }
      handleMcpPost(request, body, snap, info)
        .then((response) => writeResponse(call, response, snap, started))
        .catch((e: unknown) => {
          // JSON-RPC's own internal error, once (http/guard.ts logs it).
          reportInternalError(e);
          guard(call.res, () => call.reply(STATUS[500], JSON_TYPE, INTERNAL));
        });
    };
    gatedBody(ctx, call, req, answer);
  });
  app.any('/mcp', (res, req) => {
    const call = new Call(res, req, req.getMethod().toUpperCase(), '/mcp');
    call.reply(STATUS[405], JSON_TYPE, METHOD_NOT_ALLOWED, ALLOW_POST);
  });
}

/**
 * Copy the transport's Response onto uWS. Not `Call.reply`: it would turn
 * application/json into MessagePack for clients that accept it, and JSON-RPC must
 * stay JSON.
 */
async function writeResponse(
  call: Call,
  response: Response,
  snap: ServingSnapshot | null,
  started: number,
): Promise<void> {
  const raw = response.body === null ? '' : new Uint8Array(await response.arrayBuffer());
  if (call.aborted) return;
  // tools/list alone is about 55 KB: compressed like a large REST body when the client accepts it.
  const payload = call.compressed(raw);
  const coding = call.coding;
  const res = call.res;
  res.cork(() => {
    res.writeStatus(STATUS[response.status] ?? String(response.status));
    response.headers.forEach((v, k) => {
      res.writeHeader(k, v);
    });
    if (coding !== null) {
      res.writeHeader('Content-Encoding', coding);
      res.writeHeader('Vary', 'Accept-Encoding');
    }
    // Server time of this request (whole body in → response out; waiting for the client's
    // body packets is not ours), for clients and the benchmark's p50. Our own headers
    // ride on its line as one block (http/headers.ts).
    const w = headerWriter.start(ascii(`mcp;dur=${(performance.now() - started).toFixed(3)}`));
    if (snap !== null) w.bytes(snap.dataHeaders);
    call.extraHeaders?.writeHeaders(w);
    res.writeHeader('Server-Timing', w.view());
    res.end(payload);
  });
  call.logged(STATUS[response.status] ?? String(response.status));
}
