/**
 * Request bodies arrive in pieces (uWS onData); each piece's ArrayBuffer is valid
 * only during its callback, so it is copied. Bodies over 1 MiB are refused with
 * 413 (C21) as soon as the declared length or the running total says so.
 */
import type { Call } from './call.js';
import { guard } from './guard.js';

export const MAX_BODY_BYTES = 1 << 20;

/** Requests of this thread whose body is still arriving: shutdown waits for them. */
export const inflight = { bodies: 0 };

export function readBody(
  call: Call,
  contentLength: string,
  onBody: (body: Buffer) => void,
  onTooLarge: () => void,
): void {
  call.detach();
  call.res.onAborted(() => {
    call.aborted = true;
    settle();
  });
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
