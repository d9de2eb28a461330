import { type LimitDecision, type Limiter, nextMonthStart, type PlanLimits } from '../../accounts/model.js';
import { ADMITTED, decide, gcraStep, QUOTA_EXCEEDED, quotaStep, RATE_LIMITED } from './gcra.js';

/**
 * An in-process limiter with the same arithmetic, the fallback when the server does not
 * inject its own. State is per process and forgotten on restart.
 */
export class MemoryLimiter implements Limiter {
  readonly #tat = new Map<string, number>();
  readonly #count = new Map<string, number>();
  #month = -1;

  admit(account: { readonly id: string }, limits: PlanLimits, nowMs: number): LimitDecision {
    const next = nextMonthStart(nowMs);
    if (next !== this.#month) {
      this.#month = next;
      this.#count.clear();
    }
    const quotaReset = Math.ceil((next - nowMs) / 1000);
    const nowUs = Math.round(nowMs * 1000);
    const tat = Math.max(this.#tat.get(account.id) ?? 0, nowUs);
    const count = this.#count.get(account.id) ?? 0;
    if (!quotaStep(count, limits.monthly))
      return decide(QUOTA_EXCEEDED, count, tat - nowUs, limits, quotaReset);
    const after = limits.burst >= 1 ? gcraStep(tat, nowUs, limits.burst) : -1;
    if (after < 0) return decide(RATE_LIMITED, count, tat - nowUs, limits, quotaReset);
    this.#tat.set(account.id, after);
    this.#count.set(account.id, count + 1);
    return decide(ADMITTED, count + 1, after - nowUs, limits, quotaReset);
  }

  peek(account: { readonly id: string }, limits: PlanLimits, nowMs: number): LimitDecision {
    const next = nextMonthStart(nowMs);
    const count = next === this.#month ? (this.#count.get(account.id) ?? 0) : 0;
    const nowUs = Math.round(nowMs * 1000);
    const tat = Math.max(this.#tat.get(account.id) ?? 0, nowUs);
    return decide(ADMITTED, count, tat - nowUs, limits, Math.ceil((next - nowMs) / 1000));
  }
}
