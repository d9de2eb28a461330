import type { KeyEntry } from './table.js';

/** An active key of one account on a plan the tests never reach the limits of. */
export function activeEntry(keyId: string): KeyEntry {
  return {
    keyId,
    accountId: 'acct_1',
    accountName: 'acme',
    slot: 0,
    keySlot: 0,
    plan: 'business',
    limits: { burst: 1_000_000, monthly: 1_000_000 },
    status: 'active',
    expiresAt: Number.POSITIVE_INFINITY,
  };
}
