/**
 * What a person does to their keys from the dashboard: create with a
 * label, rotate with a grace period, revoke. Every change goes through the store, so
 * every server on it applies it within a second, as the CLI's changes are (C25).
 */

import { AccessChangeError } from './changes.js';
import { generateKey } from './keys.js';
import { type AccessState, type AccessStore, type Account, type KeyRecord, LABEL_MAX } from './model.js';

export type KeyState = 'active' | 'revoked' | 'expired' | 'expiring';

export function keyState(k: KeyRecord, nowMs: number): KeyState {
  if (k.revoked_at !== null) return 'revoked';
  if (k.expires_at !== null) return Date.parse(k.expires_at) <= nowMs ? 'expired' : 'expiring';
  return 'active';
}

/** A key a request can still use (in its grace period included). */
export function usable(k: KeyRecord, nowMs: number): boolean {
  const s = keyState(k, nowMs);
  return s === 'active' || s === 'expiring';
}

/** Default most keys one person may hold at once (`--max-keys`). */
export const DEFAULT_MAX_KEYS = 10;

/** Grace periods the dashboard offers when rotating, in seconds (0: the old key stops at once). */
export const ROTATE_GRACES = [0, 3600, 86_400, 7 * 86_400] as const;

/** A label as kept: trimmed, control characters out, at most LABEL_MAX characters. */
function cleanLabel(label: string): string {
  return label
    .replace(/\p{Cc}/gu, ' ')
    .trim()
    .slice(0, LABEL_MAX);
}

/** Create a key for `account`; the secret is returned once and never stored. */
export async function issueKey(
  store: AccessStore,
  account: Account,
  label: string,
  nowMs: number,
): Promise<{ record: KeyRecord; secret: string }> {
  const g = generateKey();
  const clean = cleanLabel(label);
  const record: KeyRecord = {
    id: g.id,
    account_id: account.id,
    prefix: g.prefix,
    hash: g.hash,
    created_at: new Date(nowMs).toISOString(),
    revoked_at: null,
    expires_at: null,
    ...(clean === '' ? {} : { label: clean }),
  };
  await store.change({ op: 'key.create', key: record });
  return { record, secret: g.key };
}

/** Issue a key unless the account already holds `max` usable ones. */
export async function issueKeyWithin(
  store: AccessStore,
  state: AccessState,
  account: Account,
  label: string,
  max: number,
  nowMs: number,
): Promise<{ record: KeyRecord; secret: string }> {
  const held = state.keys.filter((k) => k.account_id === account.id && usable(k, nowMs)).length;
  if (held >= max)
    throw new AccessChangeError(
      `You already hold ${held} keys, the most one account may hold (${max}). Revoke one you no longer use first.`,
    );
  return await issueKey(store, account, label, nowMs);
}

/**
 * Replace key `old` with a new one of the same label; `old` keeps working for
 * `graceSeconds`. The new key is durable before the old one is given an end: a crash
 * in between leaves two working keys, never none.
 */
export async function rotateKey(
  store: AccessStore,
  account: Account,
  old: KeyRecord,
  graceSeconds: number,
  nowMs: number,
): Promise<{ record: KeyRecord; secret: string; oldEndsAt: string }> {
  const s = keyState(old, nowMs);
  if (s !== 'active')
    throw new AccessChangeError(
      s === 'expiring'
        ? `Key ${old.prefix}… was already rotated; rotate its replacement instead.`
        : `Key ${old.prefix}… is ${s}; create a new key instead.`,
    );
  const made = await issueKey(store, account, old.label ?? '', nowMs);
  const oldEndsAt = new Date(nowMs + graceSeconds * 1000).toISOString();
  await store.change({ op: 'key.expire', key_id: old.id, at: oldEndsAt });
  return { ...made, oldEndsAt };
}

export async function revokeKey(store: AccessStore, key: KeyRecord, nowMs: number): Promise<void> {
  if (key.revoked_at !== null) return;
  await store.change({ op: 'key.revoke', key_id: key.id, at: new Date(nowMs).toISOString() });
}
