/**
 * The gate step of a route (C23: route → gate → validation → lookup), for REST and
 * MCP alike: run the rest of the request once the gate admits it, now for a
 * synchronous gate or when an asynchronous one (Redis) answers, and answer a
 * refusal here. A request with a body reads it while the gate decides.
 */

import { readBody, refusedFraming } from './body.js';
import type { Call } from './call.js';
import {
  GATE_UNAVAILABLE,
  GATE_UNAVAILABLE_HEADERS,
  JSON_TYPE,
  PROBLEM_JSON_TYPE,
  statusLine,
  TOO_LARGE,
} from './fixed-answers.js';
import type { Gate, GateDecision } from './gate.js';
import { guard } from './guard.js';
import { requestHeader } from './headers.js';
import type { HttpRequest } from './uws.js';

/**
 * The gate step (C23): runs `next` once the request is admitted, at once for a
 * synchronous gate or when an asynchronous one answers; a refusal is answered here.
 */
export function gated(gate: Gate, call: Call, req: HttpRequest, next: () => void): void {
  afterGate(call, gate.admit(req.getHeader(requestHeader.authorization)), next);
}

/** Go on from a gate decision, now or when an asynchronous gate answers. */
export function afterGate(call: Call, d: GateDecision | Promise<GateDecision>, next: () => void): void {
  if (!(d instanceof Promise)) {
    if (applyDecision(call, d)) next();
    return;
  }
  call.watchAbort();
  d.then(
    (x) =>
      guard(call.res, () => {
        if (applyDecision(call, x)) next();
      }),
    () => gateFailed(call),
  );
}

/** Apply a gate decision: remember its headers (C29), or answer its refusal. */
function applyDecision(call: Call, d: GateDecision): boolean {
  call.extraHeaders = d.headers;
  if (d.ok) return true;
  call.reply(d.status, PROBLEM_JSON_TYPE, d.body(call.path));
  return false;
}

/**
 * The gate step for a request with a body (C23). The body must be subscribed to
 * inside the route callback, so it is read while an asynchronous gate decides;
 * `next` runs once both are in, a refusal is answered by the gate whatever the body,
 * and a body over MAX_BODY_BYTES is a 413 only for an admitted request.
 */
export function gatedBody(
  gate: Gate,
  call: Call,
  req: HttpRequest,
  next: (body: Buffer) => void,
  /** A route's own check between framing and the gate; false when it has answered. */
  precheck?: () => boolean,
): void {
  // Before the gate: nothing of a request whose extent is unknown is looked at.
  if (refusedFraming(call, req)) return;
  if (precheck !== undefined && !precheck()) return;
  const contentLength = req.getHeader(requestHeader.contentLength);
  let admitted = false;
  let body: Buffer | 'too-large' | null = null;
  const proceed = () => {
    if (!admitted || body === null) return;
    // The connection is kept: uWS reads the rest of the body and drops it, so the client
    // reads this answer whenever it stops sending. Closing now (it once said
    // Connection: close) resets a client still uploading, which then never sees the 413.
    if (body === 'too-large') call.reply(statusLine(413), JSON_TYPE, TOO_LARGE);
    else next(body);
  };
  const d = gate.admit(req.getHeader(requestHeader.authorization));
  if (!(d instanceof Promise)) {
    if (!applyDecision(call, d)) return;
    admitted = true;
  }
  readBody(
    call,
    contentLength,
    (b) => {
      body = b;
      proceed();
    },
    () => {
      body = 'too-large';
      proceed();
    },
  );
  if (d instanceof Promise) {
    d.then(
      (x) =>
        guard(call.res, () => {
          admitted = applyDecision(call, x);
          proceed();
        }),
      () => gateFailed(call),
    );
  }
}

function gateFailed(call: Call): void {
  call.reply(statusLine(503), JSON_TYPE, GATE_UNAVAILABLE, GATE_UNAVAILABLE_HEADERS);
}
