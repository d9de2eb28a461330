/**
 * The key table a server enforces: key hash → account, plan limits, status and the
 * account's limiter slot. Built on the main thread from the store's state and sent
 * to every worker, which answers from it without touching the store.
 */

import {
  type AccessState,
  DEFAULT_PLANS,
  type PlanLimits,
  type PlanName,
  type SubscriptionStatus,
} from '../../accounts/model.js';
import { DEFAULT_KEY_SLOTS } from './key-counts.js';

export interface KeyEntry {
  readonly keyId: string;
  readonly accountId: string;
  readonly accountName: string;
  readonly slot: number;
  /** The key's slot in each thread's request counts (key-counts.ts), stable for the life of the process. */
  readonly keySlot: number;
  readonly plan: PlanName;
  readonly limits: PlanLimits;
  readonly status: SubscriptionStatus;
  /** ms since epoch after which the key is refused; Infinity when it never expires. */
  readonly expiresAt: number;
}

export interface KeyTableData {
  readonly version: number;
  /** [hash, entry] pairs of usable (not revoked) keys. */
  readonly entries: ReadonlyArray<readonly [string, KeyEntry]>;
  /**
   * Hashes of revoked keys: refused at once, where a key the table does not list at all
   * may be one created a moment ago and is looked up again first (gate.ts, lookout.ts).
   */
  readonly revoked: readonly string[];
}

/**
 * Limiter slots by account id (count slots by key id), stable for the life of the
 * process so an account's (a key's) counters survive table rebuilds.
 */
export class SlotMap {
  readonly #slots = new Map<string, number>();
  readonly #ids: string[] = [];

  readonly #capacity: number;
  readonly #overflow: number | undefined;
  constructor(
    capacity: number,
    /**
     * The slot given to every id past the capacity, instead of an error: key counts
     * (keySlotMap) are not worth refusing a new key for.
     */
    overflow?: number,
  ) {
    this.#capacity = capacity;
    this.#overflow = overflow;
  }

  slotOf(accountId: string): number {
    let s = this.#slots.get(accountId);
    if (s === undefined) {
      if (this.#slots.size >= this.#capacity && this.#overflow !== undefined) return this.#overflow;
      if (this.#slots.size >= this.#capacity)
        throw new Error(`more than ${this.#capacity} accounts: raise the limiter's slot count`);
      s = this.#slots.size;
      this.#slots.set(accountId, s);
      this.#ids.push(accountId);
    }
    return s;
  }

  /** Slots handed out so far (they are 0 up to this). */
  get size(): number {
    return this.#slots.size;
  }

  /** The id holding `slot`; undefined for a slot not handed out (the overflow slot). */
  idAt(slot: number): string | undefined {
    return this.#ids[slot];
  }

  /** The slot an account already has; undefined for one this table never listed. */
  existing(accountId: string): number | undefined {
    return this.#slots.get(accountId);
  }

  entries(): IterableIterator<[string, number]> {
    return this.#slots.entries();
  }
}

/**
 * Count slots by key id for `capacity` slots: the last is shared by the keys made past
 * the others in one process's life, and never read (KeyCountReader reads up to `size`).
 */
export function keySlotMap(capacity = DEFAULT_KEY_SLOTS): SlotMap {
  return new SlotMap(capacity - 1, capacity - 1);
}

export function buildKeyTable(
  state: AccessState,
  slots: SlotMap,
  plans: Readonly<Record<PlanName, PlanLimits>> = DEFAULT_PLANS,
  keySlots: SlotMap = keySlotMap(),
): KeyTableData {
  const accounts = new Map(state.accounts.map((a) => [a.id, a]));
  const entries: Array<readonly [string, KeyEntry]> = [];
  const revoked: string[] = [];
  for (const k of state.keys) {
    const a = accounts.get(k.account_id);
    if (k.revoked_at !== null || !a) {
      revoked.push(k.hash);
      continue;
    }
    entries.push([
      k.hash,
      {
        keyId: k.id,
        accountId: a.id,
        accountName: a.name,
        slot: slots.slotOf(a.id),
        keySlot: keySlots.slotOf(k.id),
        plan: a.plan,
        limits: plans[a.plan],
        status: a.status,
        expiresAt: k.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(k.expires_at),
      },
    ]);
  }
  // Accounts without keys still get a slot so their saved usage is restored.
  for (const a of state.accounts) slots.slotOf(a.id);
  return { version: state.version, entries, revoked };
}
