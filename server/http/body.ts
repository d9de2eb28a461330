/**
 * Request bodies arrive in pieces (uWS onData); each piece's ArrayBuffer is valid
 * only during its callback, so it is copied. Bodies over MAX_BODY_BYTES are refused
 * with 413 (C21) as soon as the declared length or the running total says so.
 */
import { MAX_BODY_BYTES } from '../../schemas/common.js';
import type { Call } from './call.js';
import { JSON_TYPE } from './fixed-answers.js';
import { guard } from './guard.js';
import { NO_HEADERS } from './headers.js';
import type { HttpRequest } from './uws.js';

/** Requests of this thread whose body is still arriving: shutdown waits for them. */
export const inflight = { bodies: 0 };

export function readBody(
  call: Call,
  contentLength: string,
  onBody: (body: Buffer) => void,
  onTooLarge: () => void,
): void {
  // The answer comes from a later data callback or gate decision, outside the route
  // callback: a deferred call, whose replies are corked.
  call.watchAbort(() => settle());
  let settled = false;
  const settle = () => {
    if (!settled) {
      settled = true;
      inflight.bodies--;
    }
  };
  inflight.bodies++;
  const declared = contentLength === '' ? -1 : Number(contentLength);
  if (declared > MAX_BODY_BYTES) {
    settle();
    onTooLarge();
    return;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let refused = false;
  call.res.onData((chunk, isLast) => guard(call.res, () => piece(chunk, isLast)));
  const piece = (chunk: ArrayBuffer, isLast: boolean) => {
    if (refused || call.aborted) return;
    total += chunk.byteLength;
    if (total > MAX_BODY_BYTES) {
      refused = true;
      settle();
      onTooLarge();
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      settle();
      onBody(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
    }
  };
}

/** A request whose body length is ambiguous: the answer, after which its connection closes. */
interface FramingProblem {
  status: '400 Bad Request' | '501 Not Implemented';
  body: string;
}

/**
 * RFC 9112 §6.1 and §6.3: a body whose length two readers could take differently.
 * uWS reads the first Content-Length, and de-chunks whatever Transfer-Encoding says;
 * a proxy in front may read another length, and the bytes in between would run here
 * as a request of their own (request smuggling). So conflicting lengths, and chunked
 * not last, are a 400; another transfer coding, which uWS does not decode, a 501.
 * Read with forEach, once per request with a body: uWS's getHeader sees only the first.
 */
function framingProblem(req: HttpRequest): FramingProblem | null {
  let length: string | null = null;
  let conflicting = false;
  const codings: string[] = [];
  req.forEach((name, value) => {
    if (name === 'content-length') {
      // A list of one value repeated is allowed (RFC 9110 §8.6); anything else conflicts.
      for (const v of value.split(',')) {
        const n = v.trim();
        if (length === null) length = n;
        else if (n !== length) conflicting = true;
      }
    } else if (name === 'transfer-encoding') {
      for (const c of value.split(',')) {
        const coding = c.trim().toLowerCase();
        if (coding !== '') codings.push(coding);
      }
    }
  });
  if (conflicting) return framing('400 Bad Request', 'Conflicting Content-Length values.');
  if (codings.length === 0) return null;
  if (codings[codings.length - 1] !== 'chunked')
    return framing('400 Bad Request', 'Transfer-Encoding must end with chunked.');
  if (codings.length > 1)
    return framing(
      '501 Not Implemented',
      `Transfer-Encoding ${codings.join(', ')} is not supported: send the body chunked or with Content-Length.`,
    );
  return null;
}

function framing(status: FramingProblem['status'], detail: string): FramingProblem {
  return { status, body: JSON.stringify({ detail }) };
}

/**
 * Answer a request whose body length is ambiguous (framingProblem) and close its
 * connection; false when its framing is sound and the caller goes on. The request's
 * extent is unknown, so nothing after it on this connection can be trusted. Answered
 * on the next turn, not now: a request uWS finds behind an unanswered one makes it
 * close the connection unrouted, while one behind an answer would run (a close asked
 * for inside the route callback is forgotten when uWS parses the next request of the
 * same read).
 */
export function refusedFraming(call: Call, req: HttpRequest): boolean {
  const framing = framingProblem(req);
  if (framing === null) return false;
  call.watchAbort();
  setImmediate(() =>
    guard(call.res, () => call.reply(framing.status, JSON_TYPE, framing.body, NO_HEADERS, true)),
  );
  return true;
}
