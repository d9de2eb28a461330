/**
 * POST /mcp on uWS: the gate (auth, then limits: every HTTP request counts one, C23,
 * C30) before the body is read, then the body to this event loop's MCP endpoint
 * (rpc.ts), then its answer written as it is. Only POST is served; GET and DELETE are
 * 405: the endpoint is stateless, so it has no event stream to open and no session to
 * delete.
 */

import { Call, isClosingConnections } from '../http/call.js';
import { JSON_TYPE, NO_DATA, NO_DATA_RETRY_AFTER, statusLine } from '../http/fixed-answers.js';
import type { Gate } from '../http/gate.js';
import { gatedBody } from '../http/gate-step.js';
import { guard, reportInternalError } from '../http/guard.js';
import { ascii, headerWriter, requestHeader } from '../http/headers.js';
import { acceptsJson } from '../http/negotiation.js';
import type { HttpRequest, HttpResponse } from '../http/uws.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { forbiddenOrigin, INTERNAL, NOT_ACCEPTABLE_MESSAGE, rpcError } from './jsonrpc-errors.js';
import type { OriginPolicy } from './origin.js';
import { McpEndpoint, type McpReply } from './rpc.js';
import type { McpServerInfo } from './server.js';

/** Said by us: the SDK's own 406 asks for text/event-stream as well, which we never send. */
const NOT_ACCEPTABLE: McpReply = {
  status: 406,
  body: JSON.stringify(rpcError(-32000, NOT_ACCEPTABLE_MESSAGE)),
};

/** One endpoint (and SDK server) per event loop: each worker thread has its own context. */
const endpoints = new WeakMap<McpContext['mcp'], McpEndpoint>();

function endpointOf(ctx: McpContext): McpEndpoint {
  let e = endpoints.get(ctx.mcp);
  if (e === undefined) {
    e = new McpEndpoint(ctx.mcp.info, () => ctx.snapshot());
    endpoints.set(ctx.mcp, e);
  }
  return e;
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
  const endpoint = endpointOf(ctx);
  const call = new Call(res, req, 'POST', '/mcp', route);
  const origin = req.getHeader('origin');
  // The request object is valid only in this callback: what the answer reads is copied.
  // Answers are always JSON (no event streams): any Accept that takes JSON (`*/*`,
  // `APPLICATION/JSON`, none) will do.
  const refusesJson = !acceptsJson(call.accept);
  const contentType = req.getHeader(requestHeader.contentType);
  const protocolVersion = req.getHeader('mcp-protocol-version');
  const answer = (raw: Buffer) => {
    const started = performance.now();
    const snap = ctx.snapshot();
    try {
      const reply = refusesJson ? NOT_ACCEPTABLE : endpoint.answer(raw, contentType, protocolVersion);
      if (!(reply instanceof Promise)) return write(call, reply, snap, started);
      reply.then(
        (r) => guard(call.res, () => write(call, r, snap, started)),
        (e: unknown) => internal(call, e),
      );
    } catch (e) {
      internal(call, e);
    }
  };
  // Before the gate, like a framing error: a page in someone's browser is refused
  // whatever key it holds, and counts nothing.
  gatedBody(ctx.gate, call, req, answer, () => {
    if (ctx.mcp.originAllowed(origin)) return true;
    call.reply(statusLine(403), JSON_TYPE, forbiddenOrigin(origin));
    return false;
  });
}

/** JSON-RPC's own internal error, once (http/guard.ts logs it). */
function internal(call: Call, e: unknown): void {
  reportInternalError(e);
  guard(call.res, () => call.reply(statusLine(500), JSON_TYPE, INTERNAL));
}

/**
 * Write an answer as it is. Not `Call.reply`: it would turn application/json into
 * MessagePack for clients that accept it, and JSON-RPC must stay JSON.
 */
function write(call: Call, reply: McpReply, snap: ServingSnapshot | null, started: number): void {
  if (call.aborted) return;
  const status = statusLine(reply.status);
  // tools/list alone is about 38 KB: compressed like a large REST body when the client accepts it.
  const payload = call.compressed(reply.noData ? NO_DATA : reply.body);
  const coding = call.coding;
  const res = call.res;
  call.logged(status);
  res.cork(() => {
    res.writeStatus(status);
    if (reply.status !== 202) res.writeHeader('Content-Type', JSON_TYPE);
    if (reply.noData) res.writeHeader('Retry-After', NO_DATA_RETRY_AFTER);
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
