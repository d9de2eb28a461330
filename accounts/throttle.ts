/**
 * The dashboard's throttles (sign-in, sign-up, reset, emails): a sliding window, the
 * one rule both stores apply (file-secrets.ts here, store-redis.ts's THROTTLE_SCRIPT
 * step for step). An attempt is admitted when fewer than `limit` attempts were
 * admitted in the `windowMs` before it, so no window of that length, wherever it
 * starts, holds more than `limit`: a fixed window let `limit` through just before its
 * end and `limit` more just after, twice the budget in a moment.
 */

/** Throws on arguments no caller should pass (a bug, not input). */
export function checkThrottle(limit: number, windowMs: number, nowMs: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new Error(`a throttle limit must be a whole number > 0, not ${limit}`);
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0 || windowMs > 366 * 86_400_000)
    throw new Error(`a throttle window must be a whole number of milliseconds, 1 to a year, not ${windowMs}`);
  if (!Number.isSafeInteger(nowMs) || nowMs < 0)
    throw new Error(`a throttle's clock must be whole epoch milliseconds, not ${nowMs}`);
}

/**
 * The milliseconds from `nowMs` until one more attempt fits, given the times of the
 * attempts admitted under a key (any order, older ones ignored): 0 when it fits now.
 * The window is (nowMs - windowMs, nowMs].
 */
export function slidingWait(
  times: readonly number[],
  limit: number,
  windowMs: number,
  nowMs: number,
): number {
  const inWindow = times.filter((t) => t > nowMs - windowMs).sort((a, b) => a - b);
  if (inWindow.length < limit) return 0;
  // One more fits once all but limit - 1 of them have left the window.
  return Math.max(1, inWindow[inWindow.length - limit] + windowMs - nowMs);
}
