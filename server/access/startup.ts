/**
 * Access at server start-up and while it serves (C25–C30), on the supervisor's thread:
 * opens the store and claims it, seeds the limiter's shared counters, builds the key
 * table the worker threads read and keeps it current, and saves the counts.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { readBurst, writeBurst } from '../../accounts/burst-file.js';
import { DailyFlusher } from '../../accounts/daily-usage.js';
import { type AccessState, type AccessStore, monthOf } from '../../accounts/model.js';
import { openStore } from '../../accounts/open-store.js';
import type { loadPlans } from '../../accounts/plans.js';
import { redactUrl } from '../../accounts/redact-url.js';
import { claimStore } from '../../accounts/serve-lock.js';
import { now as clockNow } from '../../core/clock.js';
import { KeyCountReader } from './key-counts.js';
import { DEFAULT_SLOTS, LocalLimiter } from './limiter-local.js';
import { LOOK_INTERVAL_MS, Lookout } from './lookout.js';
import { buildKeyTable, type KeyTableData as KeyTable, keySlotMap, SlotMap } from './table.js';

/** How often a server on Redis reads the month's usage of every account (observeUsage). */
const USAGE_OBSERVE_MS = 5000;

type Plans = ReturnType<typeof loadPlans>;

/** The store, opened and (embedded) claimed by this server, and Redis's URL if it is on Redis. */
async function openClaimed(spec: string, log: Logger) {
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
  return { store, redisUrl, release };
}

/**
 * What `accounts show|usage` then report as the limits (the operator's --plans, not the
 * defaults). Servers sharing a store should enforce the same plans: another's are worth
 * a warning.
 */
async function recordPlans(store: AccessStore, plans: Plans, log: Logger): Promise<void> {
  const recorded = await store.readPlans().catch(() => null);
  if (recorded !== null && JSON.stringify(recorded) !== JSON.stringify(plans))
    log.warn(
      { recorded, plans },
      'the store records other plan limits (a server started with another --plans?): recording these',
    );
  await store
    .writePlans(plans)
    .catch((e) => log.warn({ error: (e as Error).message }, 'cannot record the plans in the store'));
}

/** The limiter's counters and the slot of each account in them. */
interface Counting {
  limiter: LocalLimiter;
  slots: SlotMap;
}

/** Embedded mode: this process is the only counter, seeded from the saved month. */
async function seedEmbedded(
  store: AccessStore,
  spec: string,
  month: string,
  { limiter, slots }: Counting,
  log: Logger,
): Promise<void> {
  for (const [account, count] of await store.readUsage(month))
    limiter.seed(slots.slotOf(account), month, count);
  // And each burst bucket where the last run left it (C27): a restart grants no fresh burst.
  const now = clockNow();
  for (const [account, tat] of await readBurst(resolve(spec), (message) => log.warn(message)))
    if (tat > now) limiter.seedTat(slots.slotOf(account), tat);
}

/**
 * Redis mode: while Redis is unreachable each thread's limiter falls back on these
 * shared slots, so their counts follow Redis's: every count a request gets back
 * (limiter-redis.ts), and the whole month's usage at start and every few seconds, so
 * an account this server has not served yet does not start the outage with a fresh
 * quota (the bound in README, "Several servers on one Redis"). One read at a time.
 */
function usageObserver(store: AccessStore, { limiter, slots }: Counting): () => Promise<void> {
  let observing = false;
  return async () => {
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
}

/** Every few seconds: the usage from Redis, and the plans recorded again if they were lost. */
function startObserver(store: AccessStore, plans: Plans, observeUsage: (() => Promise<void>) | null) {
  const observer = setInterval(() => {
    // Redis away: the limiter reports the outage; the slots keep what they had.
    if (observeUsage !== null) observeUsage().catch(() => {});
    // A Redis flushed or restored, or a plans.json deleted, lost the plans recorded at
    // start, which `accounts show|usage` read: record them again.
    store
      .readPlans()
      .then((p) => (p === null ? store.writePlans(plans) : undefined))
      .catch(() => {});
  }, USAGE_OBSERVE_MS);
  observer.unref();
  return observer;
}

/**
 * Embedded mode: this month's counts and the burst buckets, written when they changed
 * (a bucket moves only when a request is counted, so only then is it saved).
 */
function usageSaver(
  store: AccessStore,
  spec: string,
  startMonth: string,
  { limiter, slots }: Counting,
): () => Promise<void> {
  const saved = new Map<string, number>();
  let month = startMonth;
  return async () => {
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
    const tats = new Map<string, number>();
    for (const [account, slot] of slots.entries()) {
      const t = limiter.tat(slot);
      if (t > now) tats.set(account, t);
    }
    await writeBurst(resolve(spec), tats);
  };
}

/** In both modes every server adds what its own threads counted per key and day; kept and retried on failure. */
function dailySaver(store: AccessStore, keyCounts: KeyCountReader, keySlots: SlotMap, log: Logger) {
  const daily = new DailyFlusher(
    store,
    () => keyCounts.take(keySlots.size),
    (slot) => keySlots.idAt(slot),
    clockNow,
  );
  let dailyError: string | null = null;
  return () =>
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
}

/**
 * The key table the threads read, rebuilt from the store whenever it changes. One read
 * at a time: a refresh asked for while one runs gets one more after it, shared by every
 * such ask, since the running read may have started before the change the caller waits
 * for (a look for a new key, lookout.ts).
 */
export class TableKeeper {
  table: KeyTable;
  readonly #listeners: Array<(t: KeyTable) => void> = [];
  #lastError: string | null = null;
  #running: Promise<void> | null = null;
  #queued: Promise<void> | null = null;

  readonly #rebuild: (state: AccessState) => KeyTable;
  readonly #read: () => Promise<AccessState>;
  readonly #describe: { redisUrl: string | null; spec: string; log: Logger };

  constructor(
    first: KeyTable,
    rebuild: (state: AccessState) => KeyTable,
    read: () => Promise<AccessState>,
    describe: { redisUrl: string | null; spec: string; log: Logger },
  ) {
    this.table = first;
    this.#rebuild = rebuild;
    this.#read = read;
    this.#describe = describe;
  }

  onTable(l: (t: KeyTable) => void): void {
    this.#listeners.push(l);
  }

  refresh(): Promise<void> {
    if (this.#running === null) {
      this.#running = this.#readStore().finally(() => {
        this.#running = null;
      });
      return this.#running;
    }
    this.#queued ??= this.#running.then(() => {
      this.#queued = null;
      return this.refresh();
    });
    return this.#queued;
  }

  async #readStore(): Promise<void> {
    const { redisUrl, spec, log } = this.#describe;
    try {
      const state = await this.#read();
      // Versions only grow; a store that went back (a Redis restarted empty or flushed,
      // a log restored from an old backup) lost changes: serving its keys would refuse
      // every key created since. The operator decides; a restart takes the store as it is.
      if (state.version < this.table.version)
        throw new Error(
          `the store went back from change ${this.table.version} to ${state.version}: changes were lost` +
            // The counts live beside the log: whatever lost one lost the other.
            (redisUrl === null
              ? ''
              : "; this month's request counts and burst state in Redis may have gone back too (accounts may be admitted past their quota)"),
        );
      if (this.#lastError !== null) log.info({ version: state.version }, 'access store readable again');
      this.#lastError = null;
      // Every change moves the version: the same version is the same keys. Sending an
      // equal table anyway (the poll asks every second) would make each thread rebuild
      // its index and hash every key again on its next request.
      if (state.version === this.table.version) return;
      this.table = this.#rebuild(state);
      for (const l of this.#listeners) l(this.table);
    } catch (e) {
      // Once per distinct problem: it lasts until the operator acts, and a line a second adds nothing.
      const message = (e as Error).message;
      if (message !== this.#lastError) {
        this.#lastError = message;
        log.error(
          { error: message, store: redactUrl(spec) },
          'access store unreadable: keeping the last known keys',
        );
      }
    }
  }
}

/**
 * The supervisor's side of access control: the store, the limiter's shared counters and
 * the key table. The table is rebuilt whenever the store reports a change (a key
 * created, revoked or rotated, a plan or status changed: at once on every thread)
 * and monthly counts are saved every second and on a clean stop (C25–C28).
 */
export async function startAccess(spec: string, plans: Plans, log: Logger) {
  const { store, redisUrl, release } = await openClaimed(spec, log);
  // Read first: a store refused here (a damaged log) must be left exactly as it was.
  const firstState = await store.read();
  await recordPlans(store, plans, log);
  const { limiter, shared: limiterShared } = LocalLimiter.create(DEFAULT_SLOTS);
  const counting: Counting = { limiter, slots: new SlotMap(limiter.slots) };
  // Requests per key per day: each thread counts into its own buffer (addThread).
  const keyCounts = new KeyCountReader();
  const keySlots = keySlotMap(keyCounts.slots);
  const rebuild = (state: AccessState) => buildKeyTable(state, counting.slots, plans, keySlots);
  const month = monthOf(clockNow());
  const keeper = new TableKeeper(rebuild(firstState), rebuild, () => store.read(), { redisUrl, spec, log });
  if (redisUrl === null) await seedEmbedded(store, spec, month, counting, log);
  const observeUsage = redisUrl === null ? null : usageObserver(store, counting);
  if (observeUsage !== null) await observeUsage();
  const observer = startObserver(store, plans, observeUsage);
  // Read-your-writes for new keys: threads ask when a request carries a key they do not
  // know; asks from all threads within LOOK_INTERVAL_MS share one read of the store.
  const lookout = new Lookout(() => keeper.refresh(), LOOK_INTERVAL_MS);
  const unsubscribe = store.subscribe(() => void keeper.refresh());
  // A poll as well, so a missed notification costs at most a second.
  const poll = setInterval(() => void keeper.refresh(), 1000);
  poll.unref();
  const embeddedSave = usageSaver(store, spec, month, counting);
  const saveUsage = async () => (redisUrl === null ? embeddedSave() : undefined);
  const flushDaily = dailySaver(store, keyCounts, keySlots, log);
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
    table: () => keeper.table,
    onTable: (l: (t: KeyTable) => void) => keeper.onTable(l),
    /** Resolves once a store read that started after this call has been sent to every thread. */
    look: () => lookout.request(),
    stop: async () => {
      clearInterval(poll);
      clearInterval(saver);
      clearInterval(observer);
      unsubscribe();
      await saveUsage().catch((e) => log.error({ error: (e as Error).message }, 'cannot save usage'));
      await flushDaily();
      await store.close();
      await release();
    },
  };
}
