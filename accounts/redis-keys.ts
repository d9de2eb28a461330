/**
 * The keys of the Redis store (store-redis.ts) and limiter (limiter-redis.ts).
 *
 * Layout (all keys under `fr:`):
 * - `fr:access:log`      list of AccessChange JSON, append-only; replaying it with
 *                        `applyChange` gives the state, so both stores share one definition.
 * - `fr:access:version`  the number of entries in the log (= AccessState.version).
 * - `fr:access:changed`  pub/sub channel; the payload is the new version.
 * - `fr:usage:<YYYY-MM>` hash account id → requests admitted that month, incremented
 *                        atomically by RedisLimiter (limiter-redis.ts).
 * - `fr:secret:<kind>:<id>` a session or token, SET with PX, taken with GETDEL.
 * - `fr:throttle:<key>`  the dashboard's admitted attempts under one throttle key in
 *                        its sliding window: a sorted set scored by time (ms), trimmed
 *                        and added to in one script; expires a window after the last.
 * - `fr:audit`           list of admin actions, JSON, newest first (LPUSH, LTRIM).
 * - `fr:daily:<YYYY-MM-DD>` hash `<key id>:ok` / `<key id>:refused` → requests of that key
 *                        admitted / refused with 429 that day (UTC), added to by every
 *                        server's flush; expires DAILY_KEEP_DAYS + 2 days after the last add.
 */
import type { SecretKind } from './model.js';

export const LOG_KEY = 'fr:access:log';
export const VERSION_KEY = 'fr:access:version';
export const CHANGED_CHANNEL = 'fr:access:changed';
/** The limits the last server started on this Redis enforces (readPlans). */
export const PLANS_KEY = 'fr:plans';
export const usageKey = (month: string): string => `fr:usage:${month}`;
/** A session or token by kind and hashed id (expires with the secret: SET PX). */
export const secretKey = (kind: SecretKind, id: string): string => `fr:secret:${kind}:${id}`;
/** The admitted attempts under a throttle key in its window; lives one window from the last. */
export const throttleKey = (key: string): string => `fr:throttle:${key}`;
/** Admin actions, newest first, the newest AUDIT_KEEP kept. */
export const AUDIT_KEY = 'fr:audit';
/** Requests per key on one day (addDaily). */
export const dailyKey = (day: string): string => `fr:daily:${day}`;
/** The fields of a key in a day's hash, in DailyCount's order: `<key id>:ok`, `<key id>:refused`. */
const DAILY_FIELDS = ['ok', 'refused'];

/** A day's hash (`fr:daily:<day>`, its fields and values) as key id → [admitted, refused]. */
export function dailyFromFields(fields: Iterable<readonly [string, string]>): Map<string, [number, number]> {
  const keys = new Map<string, [number, number]>();
  for (const [field, value] of fields) {
    const cut = field.lastIndexOf(':');
    const which = DAILY_FIELDS.indexOf(field.slice(cut + 1));
    // A field addDaily did not write (someone else's) is not a count.
    if (cut < 1 || which < 0) continue;
    const id = field.slice(0, cut);
    const c = keys.get(id) ?? [0, 0];
    c[which] = Number(value);
    keys.set(id, c);
  }
  return keys;
}
