/**
 * GCRA (C27) and quota (C28) arithmetic in whole microseconds, the one implementation
 * every limiter uses: the shared-memory limiter of one server (limiter-local.ts), the
 * in-process and the Redis limiters (limiter-redis.ts, whose Lua script repeats it
 * step for step).
 *
 * Whole µs keep it exact: the emission interval is floor(60e6 / burst) µs, so a burst of
 * requests at one instant adds up to exactly `burst` intervals and no rounding can turn
 * the burst-th request into a refusal. (In floating-point epoch milliseconds, about
 * 1.8e12, one ulp is 0.00024 ms: summing 60000/9 nine times overshot tau for 1,477 of
 * the bursts from 1 to 3000.) Rounding the interval down makes the refill at most 1 µs
 * per request faster than burst/60 per second, which nobody can observe.
 */
import type { LimitDecision, PlanLimits } from '../../accounts/model.js';

export const ADMITTED = 0;
export const QUOTA_EXCEEDED = 1;
export const RATE_LIMITED = 2;

/** The GCRA emission interval in whole µs (see the header on rounding). */
export function emissionUs(burst: number): number {
  // At least 1 µs: a burst over 60 million a minute (limits set beyond reach) would
  // otherwise make the interval 0 and every figure derived from it NaN.
  return Math.max(1, Math.floor(60_000_000 / burst));
}

/**
 * One GCRA step in whole µs, the same arithmetic as ADMIT_SCRIPT: the new theoretical
 * arrival time when a request at `nowUs` is allowed, or -1 when it is refused.
 */
export function gcraStep(tatUs: number, nowUs: number, burst: number): number {
  const t = emissionUs(burst);
  const tat = Math.max(tatUs, nowUs);
  return tat - nowUs > t * (burst - 1) ? -1 : tat + t;
}

/** Whether one more request fits a monthly quota of which `count` is used. */
export function quotaStep(count: number, monthly: number): boolean {
  return count < monthly;
}

/**
 * The decision for a step outcome, shared by the Redis and the in-process paths so both
 * report the same headers. `tatDiffUs` = max(TAT, now) - now after the step.
 */
export function decide(
  code: number,
  count: number,
  tatDiffUs: number,
  limits: PlanLimits,
  quotaReset: number,
): LimitDecision {
  const t = emissionUs(limits.burst);
  const tau = t * (limits.burst - 1);
  const left = Math.floor((tau + t - tatDiffUs) / t);
  const burstRemaining = Math.min(Math.max(left, 0), limits.burst);
  const burstReset = Math.ceil(tatDiffUs / 1e6);
  const quotaLeft = limits.monthly - count;
  const quotaRemaining = Math.max(quotaLeft, 0);
  let retryAfter = 0;
  if (code === QUOTA_EXCEEDED) retryAfter = quotaReset;
  else if (code === RATE_LIMITED) {
    retryAfter = Math.ceil((tatDiffUs - tau) / 1e6);
    if (retryAfter < 1) retryAfter = 1;
  }
  return {
    ok: code === ADMITTED,
    // Always present (possibly undefined) so every decision shares one object shape.
    refused: code === QUOTA_EXCEEDED ? 'quota-exceeded' : code === RATE_LIMITED ? 'rate-limited' : undefined,
    retryAfter,
    burstRemaining,
    burstReset,
    quotaRemaining,
    quotaReset,
  };
}
