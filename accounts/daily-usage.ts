/**
 * Requests per key per day: the main thread's flush of the threads'
 * counts (key-counts.ts) into the store, and what the dashboard and `accounts usage
 * --daily` read back. A day is a UTC day (YYYY-MM-DD) of the service clock.
 */
import { type AccessStore, DAILY_KEEP_DAYS, type DailyCount } from './model.js';

const DAY_MS = 86_400_000;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day (YYYY-MM-DD) of an instant. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `day` moved by `n` days (negative: back). */
export function addDays(day: string, n: number): string {
  return dayOf(dayStart(day) + n * DAY_MS);
}

/** Midnight UTC (ms) of a YYYY-MM-DD day; throws on anything that is not a real day. */
export function dayStart(day: string): number {
  const m = DAY.exec(day);
  const ms = m === null ? Number.NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls 2026-02-30 over into March: only a day that reads back the same is one.
  if (Number.isNaN(ms) || dayOf(ms) !== day)
    throw new Error(`a day must be YYYY-MM-DD, not ${JSON.stringify(day)}`);
  return ms;
}

/** Every day from `from` to `to`, inclusive (none when `from` is after `to`). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  const end = dayStart(to);
  for (let t = dayStart(from); t <= end; t += DAY_MS) out.push(dayOf(t));
  return out;
}

type Counts = Map<string, Map<string, [number, number]>>;

function addInto(into: Counts, day: string, keyId: string, ok: number, refused: number): void {
  let keys = into.get(day);
  if (keys === undefined) {
    keys = new Map();
    into.set(day, keys);
  }
  const c = keys.get(keyId);
  if (c === undefined) keys.set(keyId, [ok, refused]);
  else {
    c[0] += ok;
    c[1] += refused;
  }
}

/**
 * Moves what the threads counted into the store, under the day of the flush. What a
 * store refuses (Redis away, a full disk) is kept and added with the next flush, so
 * nothing counted is lost while the server runs; flushes run one at a time.
 */
export class DailyFlusher {
  #pending: Counts = new Map();
  #chain: Promise<void> = Promise.resolve();

  readonly #store: AccessStore;
  readonly #take: () => Map<number, readonly [number, number]>;
  readonly #keyOf: (slot: number) => string | undefined;
  readonly #now: () => number;
  constructor(
    store: AccessStore,
    /** Slot → [admitted, refused] counted since the last call (KeyCountReader.take). */
    take: () => Map<number, readonly [number, number]>,
    /** The key id of a slot (undefined: the overflow slot, never counted). */
    keyOf: (slot: number) => string | undefined,
    now: () => number,
  ) {
    this.#store = store;
    this.#take = take;
    this.#keyOf = keyOf;
    this.#now = now;
  }

  /** Take the threads' new counts and add them, with any earlier ones not yet stored, to the store. */
  flush(): Promise<void> {
    const run = this.#chain.then(() => this.#flushNow());
    this.#chain = run.catch(() => {});
    return run;
  }

  async #flushNow(): Promise<void> {
    const day = dayOf(this.#now());
    for (const [slot, [ok, refused]] of this.#take()) {
      const keyId = this.#keyOf(slot);
      if (keyId !== undefined) addInto(this.#pending, day, keyId, ok, refused);
    }
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    try {
      await this.#store.addDaily(batch);
    } catch (e) {
      for (const [d, keys] of batch)
        for (const [k, [ok, refused]] of keys) addInto(this.#pending, d, k, ok, refused);
      throw e;
    }
  }
}

/** One key's requests on one day, as `accounts usage --daily --json` prints them. */
export interface KeyDay {
  readonly day: string;
  readonly key_id: string;
  /** Admitted. */
  readonly ok: number;
  /** Refused by the burst limit or the monthly quota (429). */
  readonly refused: number;
}

/**
 * The counts of the keys `keyIds` on the days `from`..`to` (inclusive): one row per key
 * and day that had a request, by day then key id. A day without a row had none.
 */
export async function readKeyDaily(
  store: AccessStore,
  keyIds: Iterable<string>,
  from: string,
  to: string,
): Promise<KeyDay[]> {
  const wanted = new Set(keyIds);
  const out: KeyDay[] = [];
  const days = await store.readDaily(from, to);
  for (const day of [...days.keys()].sort()) {
    const keys = days.get(day) as Map<string, DailyCount>;
    for (const key_id of [...keys.keys()].sort()) {
      const [ok, refused] = keys.get(key_id) as DailyCount;
      if (wanted.has(key_id) && ok + refused > 0) out.push({ day, key_id, ok, refused });
    }
  }
  return out;
}

/** How far back lastUsedDays reads at a time: most keys in use were used this month. */
const LOOK_BACK_DAYS = 31;

/**
 * The last day (up to `today`) each key had a request, admitted or refused, as far back
 * as the counts are kept (DAILY_KEEP_DAYS); null for a key with none in that time.
 */
export async function lastUsedDays(
  store: AccessStore,
  keyIds: Iterable<string>,
  today: string,
  /** The first day any of the keys existed: nothing before it is read (a new key costs one read, not 13). */
  since?: string,
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  const missing = new Set(keyIds);
  for (const k of missing) out.set(k, null);
  const kept = addDays(today, -(DAILY_KEEP_DAYS - 1));
  const oldest = since === undefined ? kept : maxDay(since, kept);
  for (let to = today; missing.size > 0 && to >= oldest; to = addDays(to, -LOOK_BACK_DAYS)) {
    const from = maxDay(addDays(to, -(LOOK_BACK_DAYS - 1)), oldest);
    const days = await store.readDaily(from, to);
    for (const day of [...days.keys()].sort().reverse()) {
      for (const [k, [ok, refused]] of days.get(day) as Map<string, DailyCount>) {
        if (missing.has(k) && ok + refused > 0) {
          out.set(k, day);
          missing.delete(k);
        }
      }
    }
  }
  return out;
}

function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}
