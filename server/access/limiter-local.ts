/**
 * Burst (C27) and monthly quota (C28) per account, exact across every worker
 * thread of one process: each account has a slot in shared memory holding its GCRA
 * theoretical arrival time and its month's count, updated under a per-slot spin
 * lock (Atomics), so no thread can let an account past a limit by racing another.
 * A refused request changes nothing (C23).
 */

import { type LimitDecision, type Limiter, nextMonthStart, type PlanLimits } from '../../accounts/model.js';
import { ADMITTED, decide, gcraStep, QUOTA_EXCEEDED, quotaStep, RATE_LIMITED } from './gcra.js';

/** Accounts one limiter can hold; slots are assigned by the main thread. */
export const DEFAULT_SLOTS = 1 << 17;

/**
 * One 64-byte cache line per slot: the lock word (int32 0) and the three figures
 * (float64 1..3): the GCRA time in whole epoch µs (gcra.ts), the month, its count. Two threads serving one account pass its line back and forth on
 * every request; lock and state in one line move once, not twice, and no two
 * accounts share a line.
 */
const SLOT_BYTES = 64;
const INTS_PER_SLOT = SLOT_BYTES / 4;
const FLOATS_PER_SLOT = SLOT_BYTES / 8;
const TAT = 1;
const MONTH = 2;
const USED = 3;

export interface LimiterShared {
  slots: SharedArrayBuffer;
}

export class LocalLimiter implements Limiter {
  readonly #locks: Int32Array;
  readonly #state: Float64Array;
  readonly slots: number;
  /** The month a cached boundary belongs to, so most requests skip date arithmetic. */
  #monthFrom = 0;
  #monthTo = -1;
  #monthKey = 0;

  constructor(shared: LimiterShared) {
    // Two views of one buffer: the lock words and the figures of each slot's line.
    this.#locks = new Int32Array(shared.slots);
    this.#state = new Float64Array(shared.slots);
    this.slots = shared.slots.byteLength / SLOT_BYTES;
  }

  static create(slots = DEFAULT_SLOTS): { limiter: LocalLimiter; shared: LimiterShared } {
    const shared = { slots: new SharedArrayBuffer(SLOT_BYTES * slots) };
    return { limiter: new LocalLimiter(shared), shared };
  }

  #month(nowMs: number): number {
    if (nowMs < this.#monthFrom || nowMs >= this.#monthTo) {
      const d = new Date(nowMs);
      this.#monthFrom = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      this.#monthTo = nextMonthStart(nowMs);
      this.#monthKey = d.getUTCFullYear() * 100 + d.getUTCMonth() + 1;
    }
    return this.#monthKey;
  }

  #lock(slot: number): void {
    // Critical sections are a few arithmetic operations: spinning beats parking.
    while (Atomics.compareExchange(this.#locks, slot * INTS_PER_SLOT, 0, 1) !== 0) {
      /* spin */
    }
  }

  #unlock(slot: number): void {
    Atomics.store(this.#locks, slot * INTS_PER_SLOT, 0);
  }

  admit(account: { readonly slot: number }, limits: PlanLimits, nowMs: number): LimitDecision {
    const slot = account.slot;
    const month = this.#month(nowMs);
    const quotaReset = Math.ceil((this.#monthTo - nowMs) / 1000);
    const nowUs = Math.round(nowMs * 1000);
    const s = this.#state;
    const base = slot * FLOATS_PER_SLOT;
    this.#lock(slot);
    const used = s[base + MONTH] === month ? s[base + USED] : 0;
    const tat = Math.max(s[base + TAT], nowUs);
    if (!quotaStep(used, limits.monthly)) {
      this.#unlock(slot);
      return decide(QUOTA_EXCEEDED, used, tat - nowUs, limits, quotaReset);
    }
    const next = gcraStep(tat, nowUs, limits.burst);
    if (next < 0) {
      this.#unlock(slot);
      return decide(RATE_LIMITED, used, tat - nowUs, limits, quotaReset);
    }
    s[base + TAT] = next;
    s[base + MONTH] = month;
    s[base + USED] = used + 1;
    this.#unlock(slot);
    return decide(ADMITTED, used + 1, next - nowUs, limits, quotaReset);
  }

  peek(account: { readonly slot: number }, limits: PlanLimits, nowMs: number): LimitDecision {
    const month = this.#month(nowMs);
    const nowUs = Math.round(nowMs * 1000);
    const base = account.slot * FLOATS_PER_SLOT;
    const s = this.#state;
    this.#lock(account.slot);
    const used = s[base + MONTH] === month ? s[base + USED] : 0;
    const tat = Math.max(s[base + TAT], nowUs);
    this.#unlock(account.slot);
    return decide(ADMITTED, used, tat - nowUs, limits, Math.ceil((this.#monthTo - nowMs) / 1000));
  }

  /** This month's count for a slot (0 when the slot last counted another month). */
  used(slot: number, nowMs: number): number {
    const month = this.#month(nowMs);
    const base = slot * FLOATS_PER_SLOT;
    this.#lock(slot);
    const n = this.#state[base + MONTH] === month ? this.#state[base + USED] : 0;
    this.#unlock(slot);
    return n;
  }

  /** A slot's GCRA theoretical arrival time (epoch ms; 0 when it never counted). */
  tat(slot: number): number {
    const base = slot * FLOATS_PER_SLOT;
    this.#lock(slot);
    const t = this.#state[base + TAT];
    this.#unlock(slot);
    return t / 1000;
  }

  /** Seed a slot's GCRA time (server start: the burst a previous run left, C27). */
  seedTat(slot: number, tatMs: number): void {
    const base = slot * FLOATS_PER_SLOT;
    this.#lock(slot);
    this.#state[base + TAT] = Math.max(this.#state[base + TAT], Math.round(tatMs * 1000));
    this.#unlock(slot);
  }

  /** Seed a slot's count for a month (server start: counts saved by the store). */
  seed(slot: number, month: string, count: number): void {
    const [y, m] = month.split('-').map(Number);
    const base = slot * FLOATS_PER_SLOT;
    this.#lock(slot);
    this.#state[base + MONTH] = y * 100 + m;
    this.#state[base + USED] = count;
    this.#unlock(slot);
  }

  /**
   * Raise a slot's count for the month of `nowMs` to at least `count`, and its GCRA
   * time to at least `nowMs` + `tatAheadUs`: the standing Redis reported, so that while
   * Redis is unreachable every thread of this server guards the account's remaining
   * quota and burst, not a fresh month or a full bucket (limiter-redis.ts). Never lowers
   * either: the requests this server admitted alone are in them until Redis has them too.
   */
  observe(slot: number, count: number, nowMs: number, tatAheadUs = 0): void {
    const month = this.#month(nowMs);
    const base = slot * FLOATS_PER_SLOT;
    const tat = Math.round(nowMs * 1000) + tatAheadUs;
    this.#lock(slot);
    if (this.#state[base + MONTH] !== month) {
      this.#state[base + MONTH] = month;
      this.#state[base + USED] = count;
    } else if (count > this.#state[base + USED]) this.#state[base + USED] = count;
    if (tatAheadUs > 0 && tat > this.#state[base + TAT]) this.#state[base + TAT] = tat;
    this.#unlock(slot);
  }

  /** Reset a slot (an account was removed from its slot's history). */
  clear(slot: number): void {
    const base = slot * FLOATS_PER_SLOT;
    this.#lock(slot);
    this.#state[base + TAT] = 0;
    this.#state[base + MONTH] = 0;
    this.#state[base + USED] = 0;
    this.#unlock(slot);
  }
}
