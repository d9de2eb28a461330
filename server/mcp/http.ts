/**
 * /mcp over HTTP: the SDK's web-standard Streamable HTTP transport in stateless mode
 * with JSON responses, bridged onto uWS. The route runs like a REST batch route:
 * gate (auth, then limits: every HTTP request counts one, C23, C30) before the body
 * is read, then the body, then MCP. Only POST is served; GET and DELETE are 405
 * here because a stateless transport would otherwise open an SSE stream that never
 * ends (SDK 1.32) and there are no sessions to delete.
 */
import { isUtf8 } from 'node:buffer';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { Call, isClosingConnections } from '../http/call.js';
import { JSON_TYPE, NO_DATA, NO_DATA_RETRY_AFTER, statusLine } from '../http/fixed-answers.js';
import type { Gate } from '../http/gate.js';
import { gatedBody } from '../http/gate-step.js';
import { guard, reportInternalError } from '../http/guard.js';
import { ascii, headerWriter } from '../http/headers.js';
import { acceptsJson } from '../http/negotiation.js';
import type { HttpRequest, HttpResponse } from '../http/uws.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import {
  EMPTY_BATCH,
  forbiddenOrigin,
  INITIALIZE_IN_BATCH,
  INTERNAL,
  INVALID_MESSAGE,
  invalidBatchElement,
  NOT_ACCEPTABLE_MESSAGE,
  NOT_UTF8,
  rpcError,
} from './jsonrpc-errors.js';
import type { OriginPolicy } from './origin.js';
import { createMcpServer, type McpServerInfo } from './server.js';
import { isToolName } from './tools.js';

/**
 * The transport needs a URL but reads nothing from it in stateless JSON mode; the
 * client's Host is not used, since a malformed one (`a b`) would make Request throw.
 */
const MCP_URL = 'http://localhost/mcp';
const BOTH_TYPES = 'application/json, text/event-stream';

/** A call of one of our tools: what needs data (C24). An unknown tool is -32602 with or without it. */
const isToolCall = (m: unknown) => {
  if (typeof m !== 'object' || m === null || (m as { method?: unknown }).method !== 'tools/call')
    return false;
  const name = (m as { params?: { name?: unknown } }).params?.name;
  return typeof name === 'string' && isToolName(name);
};

const isInitialize = (m: unknown) =>
  typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';

/** The SDK transport's own limit (MAX_BATCH_SIZE): a longer batch is refused whole, by it. */
const BATCH_MAX = 100;

const NOT_ACCEPTABLE = () => jsonResponse(406, rpcError(-32000, NOT_ACCEPTABLE_MESSAGE));

function jsonResponse(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'Content-Type': JSON_TYPE } });
}

/**
 * One POST to /mcp, web-standard in and out. `body` is the parsed JSON-RPC message
 * (or batch); undefined makes the transport read and parse `request`'s own body.
 *
 * JSON that is not a JSON-RPC 2.0 message is -32600 Invalid Request (JSON-RPC 2.0
 * §5.1; the SDK's transport would say -32700 Parse error). In a batch, each such
 * element gets its own error in the answer's array and the others are served (§6).
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
  if (Array.isArray(body) && body.length <= BATCH_MAX) return handleBatch(request, body, snap, info);
  if (body !== undefined && !Array.isArray(body) && !JSONRPCMessageSchema.safeParse(body).success)
    return jsonResponse(400, rpcError(-32600, INVALID_MESSAGE, idOf(body)));
  if (snap === null && isToolCall(body)) return noData();
  return serve(request, body, snap, info);
}

const idOf = (m: unknown): unknown =>
  typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : null;

const noData = () =>
  new Response(NO_DATA, {
    status: 503,
    headers: { 'Content-Type': JSON_TYPE, 'Retry-After': NO_DATA_RETRY_AFTER },
  });

/** A JSON-RPC batch (JSON-RPC 2.0 §6): one answer per request, invalid elements included. */
async function handleBatch(
  request: Request,
  batch: unknown[],
  snap: ServingSnapshot | null,
  info: McpServerInfo,
): Promise<Response> {
  if (batch.length === 0) return jsonResponse(400, rpcError(-32600, EMPTY_BATCH));
  if (batch.length > 1 && batch.some(isInitialize))
    return jsonResponse(400, rpcError(-32600, INITIALIZE_IN_BATCH));
  const valid: unknown[] = [];
  const errors: unknown[] = [];
  batch.forEach((m, i) => {
    if (JSONRPCMessageSchema.safeParse(m).success) valid.push(m);
    else errors.push(rpcError(-32600, invalidBatchElement(i), idOf(m)));
  });
  if (valid.length === 0) return jsonResponse(400, errors);
  if (snap === null && valid.some(isToolCall)) return noData();
  const served = await serve(request, valid, snap, info);
  // Only notifications were valid: nothing to answer but the errors.
  if (served.status === 202) return errors.length === 0 ? served : jsonResponse(200, errors);
  if (served.status !== 200) return served;
  // The SDK answers a batch holding one request with a bare object; a batch's answer is an array.
  const answered: unknown = await served.json();
  const all = [...(Array.isArray(answered) ? answered : [answered]), ...errors];
  return jsonResponse(200, all);
}

/** The SDK's transport and a server for this one request (stateless, JSON responses). */
async function serve(
  request: Request,
  body: unknown,
  snap: ServingSnapshot | null,
  info: McpServerInfo,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  const server = createMcpServer(info, () => snap);
  await server.connect(transport);
  // In JSON-response mode nothing outlives the response (no streams, no timers),
  // so the pair is left to the garbage collector instead of being closed.
  return transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
}

/** What POST /mcp reads from its thread: the gate, the snapshot of the moment and the server's MCP identity. */
export interface McpContext {
  readonly gate: Gate;
  snapshot(): ServingSnapshot | null;
  readonly mcp: { readonly info: McpServerInfo; readonly originAllowed: OriginPolicy };
}

/**
 * POST /mcp (the route table binds it, schemas/routes.ts; other methods are its 405,
 * Allow: POST).
 */
export function mcpPost(ctx: McpContext, res: HttpResponse, req: HttpRequest, route: number): void {
  const { info, originAllowed } = ctx.mcp;
  const call = new Call(res, req, 'POST', '/mcp', route);
  const origin = req.getHeader('origin');
  // Every HTTP request to /mcp passes the gate and counts one, like a REST call (C30).
  // The request object is valid only in this callback: copy what the transport reads.
  const headers: Array<[string, string]> = [];
  let refusesJson = false;
  req.forEach((k, v) => {
    if (k === 'content-length' || k === 'transfer-encoding') return;
    // Answers are always JSON (no event streams): any Accept that takes JSON (`*/*`,
    // `APPLICATION/JSON`, none) is what the SDK requires to hear, both types listed.
    if (k === 'accept') {
      refusesJson = !acceptsJson(v);
      headers.push([k, BOTH_TYPES]);
    } else headers.push([k, v]);
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
    // Said here: the SDK's 406 asks for text/event-stream as well, which we never send.
    // Bytes that are not UTF-8 are a parse error, as REST's 422 json_invalid (C21): the
    // SDK would read them with U+FFFD in their place and answer about another code.
    (refusesJson
      ? Promise.resolve(NOT_ACCEPTABLE())
      : !isUtf8(raw)
        ? Promise.resolve(jsonResponse(400, rpcError(-32700, NOT_UTF8)))
        : handleMcpPost(request, body, snap, info)
    )
      .then((response) => writeResponse(call, response, snap, started))
      .catch((e: unknown) => {
        // JSON-RPC's own internal error, once (http/guard.ts logs it).
        reportInternalError(e);
        guard(call.res, () => call.reply(statusLine(500), JSON_TYPE, INTERNAL));
      });
  };
  // Before the gate, like a framing error: a page in someone's browser is refused
  // whatever key it holds, and counts nothing.
  gatedBody(ctx.gate, call, req, answer, () => {
    if (originAllowed(origin)) return true;
    call.reply(statusLine(403), JSON_TYPE, forbiddenOrigin(origin));
    return false;
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
  // tools/list alone is about 38 KB: compressed like a large REST body when the client accepts it.
  const payload = call.compressed(raw);
  const coding = call.coding;
  const res = call.res;
  call.logged(statusLine(response.status));
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
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
    res.end(payload, isClosingConnections());
  });
}
