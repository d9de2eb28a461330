/**
 * The Redis-backed AccessStore (`--store redis://HOST:PORT`): several server processes
 * or machines share one key base and one set of limits.
 *
 * Its keys are laid out in redis-keys.ts.
 *
 * Appends are compare-and-set on the version inside one Lua script: the change is
 * validated in TypeScript against the state at version v, and the script appends it only
 * if the version is still v (otherwise the state is refreshed and validation runs again).
 * Validation therefore lives in one readable place and no interleaving of two admins can
 * create duplicate names or dangling references.
 */
import { randomBytes } from 'node:crypto';
import { ClientOfflineError, ErrorReply } from 'redis';
import { AUDIT_KEEP, auditLine, checkAuditLimit, parseAuditLine } from './audit-log.js';
import { applyChange, assertChange } from './changes.js';
import { dayStart, daysBetween } from './daily-usage.js';
import {
  type AccessChange,
  type AccessState,
  type AccessStore,
  type AuditEntry,
  DAILY_KEEP_DAYS,
  type DailyCount,
  EMPTY_STATE,
  type PlanLimits,
  type PlanName,
  type SecretKind,
} from './model.js';
import { parsePlans } from './plans.js';
import { redactUrl } from './redact-url.js';
import { type LogFn, makeClient, RedisTimeoutError, withDeadline } from './redis-client.js';
import {
  AUDIT_KEY,
  CHANGED_CHANNEL,
  dailyFromFields,
  dailyKey,
  LOG_KEY,
  PLANS_KEY,
  secretKey,
  throttleKey,
  usageKey,
  VERSION_KEY,
} from './redis-keys.js';
import { checkThrottle } from './throttle.js';

/** Returns the new version, or -1 when the expected version is stale. */
const APPEND_SCRIPT = `
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v ~= tonumber(ARGV[1]) then return -1 end
redis.call('RPUSH', KEYS[1], ARGV[2])
v = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', ARGV[3], v)
return v
`;

/**
 * One attempt against a sliding window (throttle): ARGV now ms, window ms, limit, a
 * unique member. Drops what left the window (now - window, now], then admits and adds
 * the attempt when fewer than `limit` remain (0), else says when the oldest that keeps
 * it full leaves (ms). The caller's clock, not Redis's: every server of one store and
 * the tests agree on it.
 */
const THROTTLE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now)
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return 0
`;

type Client = ReturnType<typeof makeClient>;
type Multi = ReturnType<Client['multi']>;

export interface RedisStoreOptions {
  log?: LogFn;
  /** Fallback poll of the version when a pub/sub message was missed (default 1000 ms). */
  pollMs?: number;
  /** Longest wait for any reply before the connection is taken as dead and replaced (default 3000 ms). */
  timeoutMs?: number;
  /** Longest wait for `connect()`: TCP connection, handshake and script load (default 5000 ms). */
  connectTimeoutMs?: number;
}

export class RedisAccessStore implements AccessStore {
  readonly #url: string;
  #client: Client;
  readonly #log: LogFn;
  readonly #pollMs: number;
  readonly #timeoutMs: number;
  readonly #connectTimeoutMs: number;
  #appendSha = '';
  /** Replayed state; entries [0, version) of the log are applied. */
  #state: AccessState = EMPTY_STATE;
  /** The raw log entry #state's version ends with (null before the first). */
  #lastEntry: string | null = null;
  #reading: Promise<AccessState> | null = null;
  readonly #subscriptions = new Set<() => Promise<void>>();
  /** Clients dropped because a reply did not come in time. */
  readonly #stalled = new WeakSet<Client>();

  constructor(url: string, opts: RedisStoreOptions = {}) {
    this.#log = opts.log ?? (() => {});
    this.#pollMs = opts.pollMs ?? 1000;
    this.#timeoutMs = opts.timeoutMs ?? 3000;
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
    this.#url = url;
    this.#client = makeClient(url);
    // Without a listener node-redis would throw connection errors as uncaught exceptions.
    this.#client.on('error', () => {});
  }

  /** One call with a deadline; past it the connection is replaced, failing whatever waits on it. */
  #call<T>(f: (c: Client) => Promise<T>): Promise<T> {
    const c = this.#client;
    const where = `Redis at ${redactUrl(this.#url)}`;
    return withDeadline(
      f(c),
      this.#timeoutMs,
      () => {
        if (this.#client !== c) return;
        // A server keeps going on its last known state and this client retries in the
        // background; a command line simply fails.
        this.#stalled.add(c);
        this.#client = makeClient(this.#url, { retryFromStart: true });
        this.#client.on('error', () => {});
        this.#client.connect().catch(() => {});
        c.destroy();
      },
      where,
    ).catch((err: unknown) => {
      // Other calls waiting on a connection dropped for a stall, and calls made while its
      // replacement connects, fail for the same reason: say that, not the client's words.
      if (this.#stalled.has(c) && !(err instanceof RedisTimeoutError))
        throw new RedisTimeoutError(`no answer from ${where} within ${this.#timeoutMs} ms`);
      if (err instanceof ClientOfflineError) throw new Error(`${where} is unreachable (reconnecting)`);
      throw err;
    });
  }

  /**
   * Connect once, or fail within `connectTimeoutMs`: `socket.connectTimeout` covers only
   * the TCP connection, and a Redis that accepts it but never answers (stopped, hung,
   * overloaded) would otherwise keep the handshake, and the caller, waiting for ever.
   */
  async connect(): Promise<void> {
    const c = this.#client;
    await withDeadline(
      (async () => {
        await c.connect();
        this.#appendSha = String(await c.scriptLoad(APPEND_SCRIPT));
      })(),
      this.#connectTimeoutMs,
      () => {
        if (c.isOpen) c.destroy();
      },
    );
  }

  read(): Promise<AccessState> {
    // Concurrent readers share one round trip and never apply the same entries twice.
    this.#reading ??= this.#refresh().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  async #refresh(): Promise<AccessState> {
    const known = this.#state.version;
    // The last entry applied is read back with the new ones: the log must still be the
    // one replayed, not merely as long (see below).
    const [version, last, entries] = (await this.#call((c) =>
      c
        .multi()
        .get(VERSION_KEY)
        .lIndex(LOG_KEY, Math.max(0, known - 1))
        .lRange(LOG_KEY, known, -1)
        .exec(),
    )) as unknown as [string | null, string | null, string[]];
    const v = Number(version ?? 0);
    // The log shrank (FLUSHALL, a restored backup), or is another history at least as
    // long (a flush then new changes, a restore after changes made on a wrong backup):
    // nothing cached can be trusted, and adding the new entries to it would mix two
    // histories (a revoked key valid again, a deleted one accepted).
    const rewritten = known > 0 && v >= known && last !== this.#lastEntry;
    if (v < known || rewritten) {
      this.#log(
        'warn',
        rewritten
          ? 'redis access log is not the one replayed (restored or rewritten); replaying it whole'
          : 'redis access log is shorter than the cached state; replaying it whole',
        { cached: known, redis: v },
      );
      this.#state = EMPTY_STATE;
      this.#lastEntry = null;
      return this.#refresh();
    }
    let s = this.#state;
    for (const e of entries) s = applyChange(s, JSON.parse(e) as AccessChange);
    if (entries.length > 0) this.#lastEntry = entries[entries.length - 1];
    this.#state = s;
    return s;
  }

  async change(c: AccessChange): Promise<AccessState> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const s = await this.read();
      assertChange(s, c);
      let v: number;
      try {
        // Each entry unique (`entry`): #refresh tells two histories apart by the entry it
        // applied last, and two `account.plan` changes alike would otherwise look the same.
        v = await this.#evalAppend(
          s.version,
          JSON.stringify({ ...c, entry: randomBytes(8).toString('hex') }),
        );
      } catch (err) {
        // The script may have run and only its reply been lost: say so rather than "failed".
        if (err instanceof RedisTimeoutError)
          throw new RedisTimeoutError(
            `${err.message}: the change may or may not have been recorded; look (accounts list, keys list) before trying again`,
          );
        throw err;
      }
      if (v >= 0) {
        // A read already in flight may predate the append; the next one cannot.
        const after = await this.read();
        return after.version >= v ? after : this.read();
      }
      // Someone else appended since we read: validate again against the newer state.
    }
    throw new Error('access store: too much contention appending a change');
  }

  async #evalAppend(expected: number, json: string): Promise<number> {
    const args = ['2', LOG_KEY, VERSION_KEY, String(expected), json, CHANGED_CHANNEL];
    try {
      return Number(await this.#call((c) => c.sendCommand(['EVALSHA', this.#appendSha, ...args])));
    } catch (err) {
      // Redis restarted without its script cache.
      if (!(err instanceof ErrorReply && err.message.startsWith('NOSCRIPT'))) throw err;
      this.#appendSha = String(await this.#call((c) => c.scriptLoad(APPEND_SCRIPT)));
      return Number(await this.#call((c) => c.sendCommand(['EVALSHA', this.#appendSha, ...args])));
    }
  }

  subscribe(onChange: () => void): () => void {
    let seen = this.#state.version;
    let closed = false;
    const notify = (version: number) => {
      if (closed || !(version > seen)) return;
      seen = version;
      onChange();
    };
    const sub = this.#client.duplicate();
    sub.on('error', () => {});
    const connecting = sub
      .connect()
      .then(() => sub.subscribe(CHANGED_CHANNEL, (msg) => notify(Number(msg))))
      .catch((err: unknown) => {
        if (closed) return;
        // The poll below still notices changes, only later.
        this.#log('warn', 'redis access store: cannot subscribe to changes; polling only', {
          error: String(err),
        });
      });
    let polling = false;
    let unreachable = false;
    const timer = setInterval(async () => {
      if (polling) return;
      polling = true;
      try {
        const v = Number((await this.#call((c) => c.get(VERSION_KEY))) ?? 0);
        if (unreachable) this.#log('info', 'redis access store reachable again');
        unreachable = false;
        // A shorter log (flushed Redis) is a change too.
        if (v < seen) seen = -1;
        notify(v);
      } catch (err) {
        if (!unreachable) {
          this.#log('warn', 'redis access store unreachable; serving the last known keys', {
            error: String(err),
          });
        }
        unreachable = true;
      } finally {
        polling = false;
      }
    }, this.#pollMs);
    timer.unref();
    const stop = async () => {
      closed = true;
      clearInterval(timer);
      this.#subscriptions.delete(stop);
      // Destroyed first: a subscriber still connecting to a Redis that does not answer
      // would otherwise keep `connecting`, and so close(), waiting for ever.
      if (sub.isOpen) sub.destroy();
      await connecting;
    };
    this.#subscriptions.add(stop);
    return () => {
      void stop();
    };
  }

  /**
   * The month's count of every account, read in HSCAN steps of about a thousand fields
   * rather than one HGETALL: servers read it every few seconds (server/supervisor.ts), and a
   * month of 100,000 accounts read at once would hold Redis, and every server's
   * admits, for tens of milliseconds.
   */
  async readUsage(month: string): Promise<Map<string, number>> {
    const m = new Map<string, number>();
    let cursor = '0';
    do {
      const step = await this.#call((c) => c.hScan(usageKey(month), cursor, { COUNT: 1000 }));
      // A field may come twice while Redis rehashes: the later value is as good.
      for (const { field, value } of step.entries) m.set(String(field), Number(value));
      cursor = String(step.cursor);
    } while (cursor !== '0');
    return m;
  }

  async readPlans(): Promise<Record<PlanName, PlanLimits> | null> {
    let text: string | null;
    try {
      text = await this.#call((c) => c.get(PLANS_KEY));
    } catch (e) {
      throw new Error(`Redis key ${PLANS_KEY}: ${(e as Error).message}`);
    }
    if (text === null) return null;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`Redis key ${PLANS_KEY}: not valid JSON`);
    }
    return parsePlans(json, `Redis key ${PLANS_KEY}`);
  }

  async writePlans(plans: Readonly<Record<PlanName, PlanLimits>>): Promise<void> {
    await this.#call((c) => c.set(PLANS_KEY, JSON.stringify(plans)));
  }

  /**
   * A no-op: in Redis mode the counters live in `fr:usage:<month>` and RedisLimiter
   * increments them atomically with each admitted request, so there is nothing to copy
   * back; writing absolute counts here would erase other servers' increments.
   */
  async writeUsage(_month: string, _counts: ReadonlyMap<string, number>): Promise<void> {}

  // ---- dashboard records: shared by every server on this Redis ----

  async putSecret(kind: SecretKind, id: string, value: string, ttlMs: number): Promise<void> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
      throw new Error(`a secret TTL must be whole milliseconds > 0, not ${ttlMs}`);
    await this.#call((c) => c.set(secretKey(kind, id), value, { PX: ttlMs }));
  }

  async getSecret(kind: SecretKind, id: string): Promise<string | null> {
    return await this.#call((c) => c.get(secretKey(kind, id)));
  }

  /** GETDEL (Redis 6.2; Debian 12 ships 7.0): one command, so one taker gets the value. */
  async takeSecret(kind: SecretKind, id: string): Promise<string | null> {
    return await this.#call((c) => c.getDel(secretKey(kind, id)));
  }

  async deleteSecret(kind: SecretKind, id: string): Promise<void> {
    await this.#call((c) => c.del(secretKey(kind, id)));
  }

  async throttle(key: string, limit: number, windowMs: number, nowMs: number): Promise<number> {
    checkThrottle(limit, windowMs, nowMs);
    const wait = await this.#call((c) =>
      c.eval(THROTTLE_SCRIPT, {
        keys: [throttleKey(key)],
        arguments: [
          String(nowMs),
          String(windowMs),
          String(limit),
          `${nowMs}-${randomBytes(6).toString('hex')}`,
        ],
      }),
    );
    return Number(wait);
  }

  async audit(entry: AuditEntry): Promise<void> {
    const line = auditLine(entry);
    await this.#call((c) =>
      c
        .multi()
        .lPush(AUDIT_KEY, line)
        .lTrim(AUDIT_KEY, 0, AUDIT_KEEP - 1)
        .exec(),
    );
  }

  async readAudit(limit: number): Promise<AuditEntry[]> {
    checkAuditLimit(limit);
    if (limit === 0) return [];
    const lines = await this.#call((c) => c.lRange(AUDIT_KEY, 0, limit - 1));
    return lines.map(parseAuditLine).filter((e): e is AuditEntry => e !== null);
  }

  // ---- per-key daily counts ----

  /**
   * HINCRBY on `fr:daily:<day>` (fields `<key id>:ok` and `<key id>:refused`), in one
   * MULTI so a flush is added whole or not at all (a failed flush is retried by the
   * server: a half-added one would count twice). Each day added to lives
   * DAILY_KEEP_DAYS + 2 days from then: its last add is on the day itself or just after.
   */
  async addDaily(counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>): Promise<void> {
    const steps: Array<(m: Multi) => Multi> = [];
    for (const [day, keys] of counts) {
      dayStart(day);
      const k = dailyKey(day);
      for (const [id, [ok, refused]] of keys) {
        for (const n of [ok, refused])
          if (!Number.isSafeInteger(n) || n < 0)
            throw new Error(
              `the daily counts of ${id} on ${day} must be whole numbers, not ${ok}, ${refused}`,
            );
        if (ok > 0) steps.push((m) => m.hIncrBy(k, `${id}:ok`, ok));
        if (refused > 0) steps.push((m) => m.hIncrBy(k, `${id}:refused`, refused));
      }
      steps.push((m) => m.expire(k, (DAILY_KEEP_DAYS + 2) * 86_400));
    }
    if (steps.length === 0) return;
    await this.#call((c) => steps.reduce((m, step) => step(m), c.multi() as Multi).exec());
  }

  async readDaily(from: string, to: string): Promise<Map<string, Map<string, DailyCount>>> {
    const days = daysBetween(from, to);
    const out = new Map<string, Map<string, DailyCount>>();
    if (days.length === 0) return out;
    const hashes = (await this.#call((c) =>
      days.reduce((m, day) => m.hGetAll(dailyKey(day)), c.multi() as Multi).exec(),
    )) as unknown as Array<Record<string, string>>;
    days.forEach((day, i) => {
      const keys = dailyFromFields(Object.entries(hashes[i] ?? {}));
      if (keys.size > 0) out.set(day, keys);
    });
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#subscriptions].map((stop) => stop()));
    if (this.#client.isReady) await this.#client.close();
    else if (this.#client.isOpen) this.#client.destroy();
  }
}
