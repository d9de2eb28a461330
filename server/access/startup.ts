/**
 * Access at server start-up and while it serves (C25–C30), on the supervisor's thread:
 * opens the store and claims it, seeds the limiter's shared counters, builds the key
 * table the worker threads read and keeps it current, and saves the counts.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { readBurst, writeBurst } from '../../accounts/burst-file.js';
import { DailyFlusher } from '../../accounts/daily-usage.js';
import { type AccessStore, monthOf } from '../../accounts/model.js';
import { openStore } from '../../accounts/open-store.js';
import type { loadPlans } from '../../accounts/plans.js';
import { redactUrl } from '../../accounts/redact-url.js';
import { claimStore } from '../../accounts/serve-lock.js';
import { now as clockNow } from '../../core/clock.js';
import { KeyCountReader } from './key-counts.js';
import { DEFAULT_SLOTS, LocalLimiter } from './limiter-local.js';
import { LOOK_INTERVAL_MS, Lookout } from './lookout.js';
import { buildKeyTable, keySlotMap, SlotMap } from './table.js';

/** How often a server on Redis reads the month's usage of every account (observeUsage). */
const USAGE_OBSERVE_MS = 5000;

/**
 * The supervisor's side of access control: the store, the limiter's shared counters and
 * the key table. The table is rebuilt whenever the store reports a change (a key
 * created, revoked or rotated, a plan or status changed: at once on every thread)
 * and monthly counts are saved every second and on a clean stop (C25–C28).
 */
export async function startAccess(spec: string, plans: ReturnType<typeof loadPlans>, log: Logger) {
  const store: AccessStore = await openStore(
    spec,
    (level: 'info' | 'warn' | 'error', msg: string, fields?: object) => log[level](fields ?? {}, msg),
  );
  const redisUrl = /^rediss?:\/\//i.test(spec) ? spec : null;
  let release: () => Promise<void> = async () => {};
  if (redisUrl === null) {
    try {
      release = await claimStore(resolve(spec));
    } catch (e) {
      await store.close();
      throw e;
    }
  }
  // Read first: a store refused here (a damaged log) must be left exactly as it was.
  const firstState = await store.read();
  // What `accounts show|usage` then report as the limits (the operator's --plans, not the defaults).
  // Servers sharing a store should enforce the same plans: another's are worth a warning.
  const recorded = await store.readPlans().catch(() => null);
  if (recorded !== null && JSON.stringify(recorded) !== JSON.stringify(plans))
    log.warn(
      { recorded, plans },
      'the store records other plan limits (a server started with another --plans?): recording these',
    );
  await store
    .writePlans(plans)
    .catch((e) => log.warn({ error: (e as Error).message }, 'cannot record the plans in the store'));
  const { limiter, shared: limiterShared } = LocalLimiter.create(DEFAULT_SLOTS);
  const slots = new SlotMap(limiter.slots);
  // Requests per key per day: each thread counts into its own buffer (addThread).
  const keyCounts = new KeyCountReader();
  const keySlots = keySlotMap(keyCounts.slots);
  let table = buildKeyTable(firstState, slots, plans, keySlots);
  let month = monthOf(clockNow());
  // Embedded mode: this process is the only counter, seeded from the saved month.
  if (redisUrl === null) {
    for (const [account, count] of await store.readUsage(month))
      limiter.seed(slots.slotOf(account), month, count);
    // And each burst bucket where the last run left it (C27): a restart grants no fresh burst.
    const now = clockNow();
    for (const [account, tat] of await readBurst(resolve(spec), (message) => log.warn(message)))
      if (tat > now) limiter.seedTat(slots.slotOf(account), tat);
  }
  // Redis mode: while Redis is unreachable each thread's limiter falls back on these
  // shared slots, so their counts follow Redis's: every count a request gets back
  // (limiter-redis.ts), and the whole month's usage at start and every few seconds, so
  // an account this server has not served yet does not start the outage with a fresh
  // quota (the bound in README, "Several servers on one Redis").
  let observing = false;
  const observeUsage = async () => {
    if (observing) return;
    observing = true;
    try {
      const now = clockNow();
      for (const [account, count] of await store.readUsage(monthOf(now))) {
        const slot = slots.existing(account);
        if (slot !== undefined) limiter.observe(slot, count, now);
      }
    } finally {
      observing = false;
    }
  };
  if (redisUrl !== null) await observeUsage();
  const observer = setInterval(() => {
    // Redis away: the limiter reports the outage; the slots keep what they had.
    if (redisUrl !== null) observeUsage().catch(() => {});
    // A Redis flushed or restored, or a plans.json deleted, lost the plans recorded at
    // start, which `accounts show|usage` read: record them again.
    store
      .readPlans()
      .then((p) => (p === null ? store.writePlans(plans) : undefined))
      .catch(() => {});
  }, USAGE_OBSERVE_MS);
  observer.unref();
  const listeners: Array<(t: typeof table) => void> = [];
  let lastRefreshError: string | null = null;
  /**
   * One read at a time. A refresh asked for while one runs gets one more after it, shared
   * by every such ask: the running read may have started before the change the caller
   * waits for (a look for a new key, lookout.ts).
   */
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const refresh = (): Promise<void> => {
    if (running === null) {
      running = readStore().finally(() => {
        running = null;
      });
      return running;
    }
    queued ??= running.then(() => {
      queued = null;
      return refresh();
    });
    return queued;
  };
  const readStore = async () => {
    try {
      const state = await store.read();
      // Versions only grow; a store that went back (a Redis restarted empty or flushed,
      // a log restored from an old backup) lost changes: serving its keys would refuse
      // every key created since. The operator decides; a restart takes the store as it is.
      if (state.version < table.version)
        throw new Error(
          `the store went back from change ${table.version} to ${state.version}: changes were lost` +
            // The counts live beside the log: whatever lost one lost the other.
            (redisUrl === null
              ? ''
              : "; this month's request counts and burst state in Redis may have gone back too (accounts may be admitted past their quota)"),
        );
      table = buildKeyTable(state, slots, plans, keySlots);
      if (lastRefreshError !== null) log.info({ version: state.version }, 'access store readable again');
      lastRefreshError = null;
      for (const l of listeners) l(table);
    } catch (e) {
      // Once per distinct problem: it lasts until the operator acts, and a line a second adds nothing.
      const message = (e as Error).message;
      if (message !== lastRefreshError) {
        lastRefreshError = message;
        log.error(
          { error: message, store: redactUrl(spec) },
          'access store unreadable: keeping the last known keys',
        );
      }
    }
  };
  // Read-your-writes for new keys: threads ask when a request carries a key they do not
  // know; asks from all threads within LOOK_INTERVAL_MS share one read of the store.
  const lookout = new Lookout(refresh, LOOK_INTERVAL_MS);
  const unsubscribe = store.subscribe(() => void refresh());
  // A poll as well, so a missed notification costs at most a second.
  const poll = setInterval(() => void refresh(), 1000);
  poll.unref();

  const saved = new Map<string, number>();
  const saveUsage = async () => {
    if (redisUrl !== null) return;
    const now = clockNow();
    const m = monthOf(now);
    if (m !== month) {
      month = m;
      saved.clear();
    }
    const changed = new Map<string, number>();
    for (const [account, slot] of slots.entries()) {
      const n = limiter.used(slot, now);
      if (saved.get(account) !== n) changed.set(account, n);
    }
    if (changed.size === 0) return;
    const all = new Map<string, number>();
    for (const [account, slot] of slots.entries()) all.set(account, limiter.used(slot, now));
    await store.writeUsage(month, all);
    for (const [k, v] of changed) saved.set(k, v);
    // A bucket moves only when a request is counted, so only then is it saved.
    const tats = new Map<string, number>();
    for (const [account, slot] of slots.entries()) {
      const t = limiter.tat(slot);
      if (t > now) tats.set(account, t);
    }
    await writeBurst(resolve(spec), tats);
  };
  // In both modes: every server adds what its own threads counted.
  const daily = new DailyFlusher(
    store,
    () => keyCounts.take(keySlots.size),
    (slot) => keySlots.idAt(slot),
    clockNow,
  );
  let dailyError: string | null = null;
  const flushDaily = () =>
    daily.flush().then(
      () => {
        if (dailyError !== null) log.info('daily request counts saved again');
        dailyError = null;
      },
      (e) => {
        // Kept and retried each second: said once per distinct problem.
        const message = (e as Error).message;
        if (message !== dailyError)
          log.warn({ error: message }, 'cannot save the daily request counts (kept, retried)');
        dailyError = message;
      },
    );
  const saver = setInterval(() => {
    saveUsage().catch((e) => log.error({ error: (e as Error).message }, 'cannot save usage'));
    void flushDaily();
  }, 1000);
  saver.unref();

  return {
    limiterShared,
    redisUrl,
    /** A new worker thread's request counts per key (key-counts.ts), flushed with the usage. */
    addThread: () => keyCounts.addThread(),
    table: () => table,
    onTable: (l: (t: typeof table) => void) => listeners.push(l),
    /** Resolves once a store read that started after this call has been sent to every thread. */
    look: () => lookout.request(),
    stop: async () => {
      clearInterval(poll);
      clearInterval(saver);
      if (observer) clearInterval(observer);
      unsubscribe();
      await saveUsage().catch((e) => log.error({ error: (e as Error).message }, 'cannot save usage'));
      await flushDaily();
      await store.close();
      await release();
    },
  };
}
