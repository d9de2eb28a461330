import { describe, expect, it } from 'vitest';
import { limiterContract } from './limiter.contract.js';
import { LocalLimiter } from './limiter-local.js';

const NOW = Date.UTC(2026, 10, 22, 14, 37, 12, 345);

limiterContract('local (shared memory)', async () => LocalLimiter.create(2).limiter);

describe('LocalLimiter (C27 burst, C29 RateLimit r)', () => {
  it('admits exactly `burst` requests at one instant, whatever the burst, then refuses', () => {
    // In floating-point epoch ms, 9, 14, 17, 19 … (1,477 bursts up to 3000) let one fewer through.
    const { limiter } = LocalLimiter.create(1);
    const short: number[] = [];
    for (let burst = 1; burst <= 3000; burst++) {
      limiter.clear(0);
      const limits = { burst, monthly: 1e9 };
      let admitted = 0;
      for (let i = 0; i < burst; i++) {
        const d = limiter.admit({ slot: 0 }, limits, NOW);
        if (!d.ok) break;
        admitted++;
        // `r` after the k-th request is burst − k.
        if (d.burstRemaining !== burst - admitted) short.push(-burst);
      }
      if (admitted !== burst) short.push(burst);
      expect(limiter.admit({ slot: 0 }, limits, NOW)).toMatchObject({ ok: false, refused: 'rate-limited' });
    }
    expect(short).toEqual([]);
  });

  it('keeps the GCRA time a restart saves and seeds in epoch ms', () => {
    const { limiter } = LocalLimiter.create(1);
    for (let i = 0; i < 5; i++) limiter.admit({ slot: 0 }, { burst: 10, monthly: 100 }, NOW);
    expect(limiter.tat(0)).toBe(NOW + 5 * 6000);
    const { limiter: next } = LocalLimiter.create(1);
    next.seedTat(0, limiter.tat(0));
    expect(next.peek({ slot: 0 }, { burst: 10, monthly: 100 }, NOW).burstRemaining).toBe(5);
  });
});
