/**
 * The Limiter contract (model.ts; C23, C27–C29): what the local limiter (shared
 * memory, one machine) and the Redis limiter (many machines) must decide alike, run
 * by each limiter's own test file. Counting in Redis, outages and fallbacks, and the
 * local limiter's saved state stay in those files.
 */
import { describe, expect, it } from 'vitest';
import type { LimitDecision, Limiter } from '../../accounts/model.js';

/** A fresh limiter with nothing counted (for two accounts, slots 0 and 1); the caller closes it. */
export type FreshLimiter = () => Promise<Limiter>;

const T0 = Date.UTC(2025, 2, 15, 12, 0, 0); // 2025-03-15T12:00:00Z
const TO_APRIL = (Date.UTC(2025, 3, 1) - T0) / 1000;
const alice = { id: 'acct_alice', slot: 0 };
const bob = { id: 'acct_bob', slot: 1 };

export function limiterContract(name: string, fresh: FreshLimiter): void {
  describe(`Limiter contract: ${name}`, () => {
    it('admits exactly `burst` requests at one instant, then refuses with rate-limited until Retry-After (C27, C29)', async () => {
      const l = await fresh();
      const limits = { burst: 5, monthly: 1000 };
      const seen: LimitDecision[] = [];
      for (let i = 0; i < 5; i++) seen.push(await l.admit(alice, limits, T0));
      expect(seen.map((d) => d.ok)).toEqual([true, true, true, true, true]);
      expect(seen.map((d) => d.burstRemaining)).toEqual([4, 3, 2, 1, 0]);
      expect(seen.map((d) => d.burstReset)).toEqual([12, 24, 36, 48, 60]);
      expect(seen.map((d) => d.quotaRemaining)).toEqual([999, 998, 997, 996, 995]);
      expect(seen[0].quotaReset).toBe(TO_APRIL);

      const refused = await l.admit(alice, limits, T0);
      expect(refused).toMatchObject({
        ok: false,
        refused: 'rate-limited',
        retryAfter: 12,
        burstRemaining: 0,
      });
      // Another account is not affected.
      expect((await l.admit(bob, limits, T0)).ok).toBe(true);

      expect((await l.admit(alice, limits, T0 + 12_000 - 1)).ok).toBe(false);
      const back = await l.admit(alice, limits, T0 + 12_000);
      expect(back).toMatchObject({ ok: true, burstRemaining: 0, burstReset: 60 });
      // A full minute later the bucket is full again.
      expect(await l.admit(alice, limits, T0 + 12_000 + 60_000)).toMatchObject({
        ok: true,
        burstRemaining: 4,
      });
    });

    it('refills one request every 60/burst seconds: burst 9 allows the 10th after 6.667 s, not before', async () => {
      const l = await fresh();
      const limits = { burst: 9, monthly: 1e9 };
      for (let i = 0; i < 9; i++) expect((await l.admit(alice, limits, T0)).ok).toBe(true);
      expect(await l.admit(alice, limits, T0 + 6666)).toMatchObject({ ok: false, retryAfter: 1 });
      expect((await l.admit(alice, limits, T0 + 6667)).ok).toBe(true);
    });

    it('refuses at exactly the monthly quota with quota-exceeded until next month; a higher plan counts at once (C28)', async () => {
      const l = await fresh();
      const limits = { burst: 100, monthly: 3 };
      const ok: LimitDecision[] = [];
      for (let i = 0; i < 3; i++) ok.push(await l.admit(alice, limits, T0 + i * 1000));
      expect(ok.map((d) => [d.ok, d.quotaRemaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
      ]);
      for (let i = 0; i < 4; i++) {
        expect(await l.admit(alice, limits, T0 + 10_000)).toMatchObject({
          ok: false,
          refused: 'quota-exceeded',
          quotaRemaining: 0,
          retryAfter: TO_APRIL - 10,
          quotaReset: TO_APRIL - 10,
        });
      }
      expect((await l.admit(alice, { burst: 100, monthly: 4 }, T0 + 11_000)).ok).toBe(true);
      // The first instant of April starts a new count.
      const april = Date.UTC(2025, 3, 1);
      expect((await l.admit(alice, limits, april - 1)).refused).toBe('quota-exceeded');
      expect(await l.admit(alice, limits, april)).toMatchObject({
        ok: true,
        quotaRemaining: 2,
        quotaReset: 30 * 86400,
      });
    });

    it('counts no request it refuses (C23)', async () => {
      const l = await fresh();
      for (let i = 0; i < 10; i++) await l.admit(alice, { burst: 2, monthly: 100 }, T0);
      expect((await l.peek(alice, { burst: 2, monthly: 100 }, T0 + 60_000)).quotaRemaining).toBe(98);
    });

    it('peek reports the standing an admit would start from and counts nothing (C29)', async () => {
      const l = await fresh();
      const limits = { burst: 5, monthly: 9 };
      await l.admit(alice, limits, T0);
      const before = await l.peek(alice, limits, T0 + 1000);
      expect(before).toMatchObject({ ok: true, burstRemaining: 4, quotaRemaining: 8 });
      expect(await l.peek(alice, limits, T0 + 1000)).toEqual(before);
      expect(await l.admit(alice, limits, T0 + 1000)).toMatchObject({ ok: true, quotaRemaining: 7 });
    });

    it('refuses every request of a plan with no burst', async () => {
      const l = await fresh();
      expect(await l.admit(alice, { burst: 0, monthly: 10 }, T0)).toMatchObject({
        ok: false,
        refused: 'rate-limited',
      });
      expect((await l.peek(alice, { burst: 1, monthly: 10 }, T0)).quotaRemaining).toBe(10);
    });

    it('a burst beyond reach (limits lifted for a benchmark) still reports whole figures', async () => {
      const l = await fresh();
      const d = await l.admit(alice, { burst: 1e9, monthly: 1e9 }, T0);
      expect(d).toMatchObject({ ok: true, burstRemaining: 1e9 - 1, quotaRemaining: 1e9 - 1 });
      expect(Number.isInteger(d.burstReset)).toBe(true);
    });
  });
}
