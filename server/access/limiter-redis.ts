/**
 * The Redis limiter: one burst (C27) and one monthly quota (C28) per account shared by
 * every server process on every machine pointed at the same Redis.
 *
 * Each admitted request costs one round trip: a single Lua script (EVALSHA) reads the
 * month's count and the account's GCRA state, decides, and only when both limits pass
 * increments the count and advances the state, so concurrent servers never race and a
 * refused request is not counted (C23). The caller's clock (`nowMs`) is passed in, which
 * keeps tests deterministic and makes the servers', not Redis's, clock the reference.
 *
 * The script (limiter-scripts.ts) is gcra.ts's arithmetic in Lua, in the same whole microseconds.
 *
 * Outage: when Redis does not answer (refused, not ready, or slower than `timeoutMs`), the
 * limiter decides locally with `fallback` (the server's shared-memory limiter), logs once,
 * counts what it admitted, and when Redis answers again adds those counts into
 * `fr:usage:<month>` and charges them to the account's burst (RECONCILE_SCRIPT). The fallback's quota and burst start from what Redis last said:
 * every count and GCRA time Redis returns is passed to its `observe`, which all threads
 * of a server share, and the
 * main thread seeds it from the whole usage hash at start and every few seconds
 * (server/supervisor.ts), so an account this server has not served yet is not given a fresh
 * month either. See README ("Several servers on one Redis") for the overshoot bound.
 */
import { ErrorReply } from 'redis';
import { type LimitDecision, type Limiter, nextMonthStart, type PlanLimits } from '../../accounts/model.js';
import { type LogFn, makeClient, withDeadline } from '../../accounts/redis-client.js';
import { usageKey } from '../../accounts/redis-keys.js';
import { ADMITTED, decide, QUOTA_EXCEEDED, quotaStep, RATE_LIMITED } from './gcra.js';
import { MemoryLimiter } from './limiter-memory.js';
import { ADMIT_SCRIPT, RECONCILE_SCRIPT } from './limiter-scripts.js';

export const gcraKey = (accountId: string): string => `fr:gcra:${accountId}`;

/**
 * A limiter that can be told an account's standing from elsewhere (LocalLimiter.observe):
 * its month's count and how far its GCRA time is ahead of `nowMs`, in µs.
 */
export interface ObservingLimiter extends Limiter {
  observe?(slot: number, count: number, nowMs: number, tatAheadUs?: number): void;
}

/** A request waiting for its turn's call to Redis. */
interface Queued {
  readonly account: { readonly id: string; readonly slot: number };
  readonly limits: PlanLimits;
  readonly nowMs: number;
  readonly usageKey: string;
  readonly resolve: (d: LimitDecision | Promise<LimitDecision>) => void;
}

/** Requests one account was granted locally in a month, not yet in Redis (RECONCILE_SCRIPT). */
interface Owed {
  n: number;
  /** The burst of the plan they were granted under (the latest). */
  burst: number;
  /** The last grant (caller's clock, ms). */
  atMs: number;
}

/** Most requests decided by one call (its KEYS and ARGV grow with it). */
const BATCH_MAX = 512;

export interface RedisLimiterOptions {
  /** Decides while Redis is unreachable (default: a MemoryLimiter), told every count Redis returns. */
  fallback?: ObservingLimiter;
  log?: LogFn;
  /**
   * How long Redis may go without answering anything while requests wait before it is
   * taken as down (default 50 ms; detection takes between 1 and 1.5 times this).
   */
  timeoutMs?: number;
  /** How often to check whether Redis is back during an outage (default 250 ms). */
  probeMs?: number;
}

type Client = ReturnType<typeof makeClient>;

/** Longest wait for the probe, script load and reconciliation after an outage. */
const PROBE_DEADLINE_MS = 2000;
/** Longest wait for the first connection (as the access store's). */
const CONNECT_DEADLINE_MS = 5000;

export class RedisLimiter implements Limiter {
  readonly #url: string;
  #client: Client;
  readonly #fallback: ObservingLimiter;
  readonly #log: LogFn;
  readonly #probeMs: number;
  readonly #timeoutMs: number;
  #sha = '';

  /**
   * Stall detection without a timer per request: a watchdog ticks every timeoutMs/2 and
   * compares the replies counted; requests in flight and no reply for two ticks in a row
   * means Redis (or the path to it) is stuck. Two ticks, not one, because a tick that fires
   * late after the event loop was blocked runs before the replies waiting in the socket
   * are read; the next tick then sees them.
   */
  #inflight = 0;
  #replies = 0;
  #inflightAtTick = 0;
  #repliesAtTick = 0;
  #quietTicks = 0;
  #watchdog: NodeJS.Timeout | null = null;
  #loading: Promise<void> | null = null;

  /** The current month, cached so the hot path builds no Date. */
  #monthStart = 0;
  #monthEnd = 0;
  #usageKey = '';
  #monthKeyOf = '';
  /**
   * The count Redis last returned to this thread per account this month: with the
   * requests admitted locally, this thread's guard during an outage. The fallback's
   * shared count (observe) is the server's, and the tighter of the two decides.
   */
  readonly #known = new Map<string, number>();
  /** Requests waiting for this turn's call (#flush). */
  #queue: Queued[] = [];
  #flushing = false;

  #down = false;
  #downSince = 0;
  #probeTimer: NodeJS.Timeout | null = null;
  #probing = false;
  /** Requests admitted locally during an outage: month → account id → what is owed, not yet in Redis. */
  #pending = new Map<string, Map<string, Owed>>();

  constructor(url: string, opts: RedisLimiterOptions = {}) {
    this.#fallback = opts.fallback ?? new MemoryLimiter();
    this.#log = opts.log ?? (() => {});
    this.#probeMs = opts.probeMs ?? 250;
    this.#timeoutMs = opts.timeoutMs ?? 50;
    this.#url = url;
    this.#client = this.#newClient(false);
  }

  #newClient(retryFromStart: boolean): Client {
    // Reconnecting as often as it probes: the servers' threads come back within about one
    // probe of each other, which bounds what Redis grants before all of them have
    // charged their local grants to the bucket (README, "Several servers on one Redis").
    const c = makeClient(this.#url, { retryFromStart, commandTimeoutMs: 0, reconnectMaxMs: this.#probeMs });
    c.on('error', (err: unknown) => {
      // Before connect() has succeeded a failure is connect()'s to report, not an outage;
      // a replaced client's errors are old news.
      if (this.#sha !== '' && c === this.#client) this.#markDown(err);
    });
    c.on('ready', () => {
      if (this.#down && c === this.#client) void this.#probe();
    });
    return c;
  }

  /** Drop a connection that stopped answering: its waiting requests fail over to local. */
  #replaceClient(): void {
    const old = this.#client;
    this.#client = this.#newClient(true);
    this.#client.connect().catch(() => {});
    old.destroy();
  }

  async connect(): Promise<void> {
    // A Redis that accepts the connection but never answers would hang the worker's start.
    const c = this.#client;
    await withDeadline(
      (async () => {
        await c.connect();
        await this.#loadScript();
      })(),
      CONNECT_DEADLINE_MS,
      () => {
        if (c.isOpen) c.destroy();
      },
    );
    this.#watchdog = setInterval(() => this.#tick(), Math.max(1, this.#timeoutMs / 2));
    this.#watchdog.unref();
  }

  #tick(): void {
    if (!this.#down && this.#inflightAtTick > 0 && this.#replies === this.#repliesAtTick) {
      if (++this.#quietTicks >= 2) {
        this.#quietTicks = 0;
        this.#markDown(new Error(`no reply from Redis within ${this.#timeoutMs} ms`));
        this.#replaceClient();
      }
    } else this.#quietTicks = 0;
    this.#inflightAtTick = this.#inflight;
    this.#repliesAtTick = this.#replies;
  }

  /** True while Redis is unreachable and limits are enforced per process. */
  get degraded(): boolean {
    return this.#down;
  }

  admit(account: { readonly id: string; readonly slot: number }, limits: PlanLimits, nowMs: number) {
    if (nowMs >= this.#monthEnd || nowMs < this.#monthStart) this.#rollMonth(nowMs);
    if (!(limits.burst >= 1)) {
      return Promise.resolve(decide(RATE_LIMITED, 0, 60e6, limits, this.#quotaReset(nowMs)));
    }
    if (this.#down) return this.#admitLocally(account, limits, nowMs);
    if (!this.#client.isReady) {
      this.#markDown(new Error('redis client not ready'));
      return this.#admitLocally(account, limits, nowMs);
    }
    return this.#admitRemote(account, limits, nowMs);
  }

  /** One read of the count and the TAT; while Redis is out, the local figures. */
  async peek(
    account: { readonly id: string; readonly slot: number },
    limits: PlanLimits,
    nowMs: number,
  ): Promise<LimitDecision> {
    if (nowMs >= this.#monthEnd || nowMs < this.#monthStart) this.#rollMonth(nowMs);
    const quotaReset = this.#quotaReset(nowMs);
    if (!this.#down && this.#client.isReady && limits.burst >= 1) {
      try {
        const [count, tat] = await Promise.all([
          this.#client.sendCommand<string | null>(['HGET', this.#usageKey, account.id]),
          this.#client.sendCommand<string | null>(['GET', gcraKey(account.id)]),
        ]);
        const nowUs = Math.round(nowMs * 1000);
        const tatUs = Math.max(Number(tat ?? 0), nowUs);
        return decide(ADMITTED, Number(count ?? 0), tatUs - nowUs, limits, quotaReset);
      } catch {
        // Counted nothing either way: the local figures will do.
      }
    }
    const pending = this.#pending.get(this.#monthKeyOf)?.get(account.id)?.n ?? 0;
    const used = (this.#known.get(account.id) ?? 0) + pending;
    const local = await this.#fallback.peek(account, limits, nowMs);
    const left = Math.max(0, Math.min(local.quotaRemaining, limits.monthly - used));
    return { ...local, quotaRemaining: left, quotaReset };
  }

  /**
   * Queue the request for this event-loop turn's call. Every request that arrives in
   * one turn (all the sockets one poll found ready) is decided by one EVALSHA: one
   * round trip, one command to encode and decode, one script run, instead of one each.
   */
  #admitRemote(
    account: { readonly id: string; readonly slot: number },
    limits: PlanLimits,
    nowMs: number,
  ): Promise<LimitDecision> {
    return new Promise((resolve) => {
      this.#queue.push({ account, limits, nowMs, usageKey: this.#usageKey, resolve });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushing = false;
    const queued = this.#queue;
    this.#queue = [];
    // One call per month key (a turn that spans a month's end) and at most BATCH_MAX each.
    let from = 0;
    while (from < queued.length) {
      let to = from + 1;
      while (to < queued.length && to - from < BATCH_MAX && queued[to].usageKey === queued[from].usageKey)
        to++;
      void this.#decideRemote(queued.slice(from, to));
      from = to;
    }
  }

  async #decideRemote(batch: Queued[]): Promise<void> {
    const keys: string[] = [batch[0].usageKey];
    const argv: string[] = [String(batch.length)];
    for (const q of batch) {
      keys.push(gcraKey(q.account.id));
      argv.push(
        q.account.id,
        String(Math.round(q.nowMs * 1000)),
        String(q.limits.monthly),
        String(q.limits.burst),
      );
    }
    const args = ['EVALSHA', this.#sha, String(keys.length), ...keys, ...argv];
    let reply: number[];
    this.#inflight++;
    try {
      reply = await this.#client.sendCommand<number[]>(args);
    } catch (err) {
      try {
        if (!(err instanceof ErrorReply && err.message.startsWith('NOSCRIPT'))) throw err;
        // Redis restarted and lost its script cache.
        await this.#loadScript();
        args[1] = this.#sha;
        reply = await this.#client.sendCommand<number[]>(args);
      } catch (err2) {
        this.#markDown(err2);
        for (const q of batch) q.resolve(this.#admitLocally(q.account, q.limits, q.nowMs));
        return;
      }
    } finally {
      this.#inflight--;
      this.#replies++;
    }
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i];
      const count = reply[3 * i + 1];
      this.#known.set(q.account.id, count);
      this.#fallback.observe?.(q.account.slot, count, q.nowMs, reply[3 * i + 2]);
      q.resolve(decide(reply[3 * i], count, reply[3 * i + 2], q.limits, this.#quotaReset(q.nowMs)));
    }
  }

  async #admitLocally(
    account: { readonly id: string; readonly slot: number },
    limits: PlanLimits,
    nowMs: number,
  ): Promise<LimitDecision> {
    const month = this.#monthKeyOf;
    const mine = this.#pending.get(month)?.get(account.id)?.n ?? 0;
    const used = (this.#known.get(account.id) ?? 0) + mine;
    const quotaReset = this.#quotaReset(nowMs);
    if (!quotaStep(used, limits.monthly)) {
      // The fallback is not consulted, so the burst fields can only say "not limited".
      return decide(QUOTA_EXCEEDED, used, 0, limits, quotaReset);
    }
    // Reserve before a possibly asynchronous fallback so concurrent calls cannot both
    // take the last unit of quota; released below if the fallback refuses.
    this.#owe(month, account.id, 1, limits.burst, nowMs);
    const r = this.#fallback.admit(account, limits, nowMs);
    const d = r instanceof Promise ? await r : r;
    if (!d.ok) {
      // Looked up again: a reconciliation may have swapped the map meanwhile; a -1 there nets out.
      this.#owe(month, account.id, -1, limits.burst, nowMs);
      return d;
    }
    const left = limits.monthly - used - 1;
    return d.quotaRemaining > left ? { ...d, quotaRemaining: left } : d;
  }

  #owe(month: string, id: string, n: number, burst: number, atMs: number): void {
    let byAccount = this.#pending.get(month);
    if (!byAccount) {
      byAccount = new Map();
      this.#pending.set(month, byAccount);
    }
    const o = byAccount.get(id);
    if (o === undefined) byAccount.set(id, { n, burst, atMs });
    else {
      o.n += n;
      if (atMs >= o.atMs) {
        o.burst = burst;
        o.atMs = atMs;
      }
    }
  }

  #rollMonth(nowMs: number): void {
    const d = new Date(nowMs);
    this.#monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    this.#monthEnd = nextMonthStart(nowMs);
    this.#monthKeyOf = d.toISOString().slice(0, 7);
    this.#usageKey = usageKey(this.#monthKeyOf);
    this.#known.clear();
  }

  #quotaReset(nowMs: number): number {
    return Math.ceil((this.#monthEnd - nowMs) / 1000);
  }

  #loadScript(): Promise<void> {
    this.#loading ??= this.#client
      .scriptLoad(ADMIT_SCRIPT)
      .then((sha) => {
        this.#sha = String(sha);
      })
      .finally(() => {
        this.#loading = null;
      });
    return this.#loading;
  }

  #markDown(err: unknown): void {
    if (this.#down) return;
    this.#down = true;
    this.#downSince = Date.now();
    this.#log('warn', 'redis limiter: Redis unreachable, enforcing limits per process until it answers', {
      error: err instanceof Error ? err.message : String(err),
    });
    this.#probeTimer = setInterval(() => void this.#probe(), this.#probeMs);
    this.#probeTimer.unref();
  }

  /**
   * During an outage: once Redis answers, add what was granted locally to it and go back
   * to it, in one step. The reconciliation is written to the connection before any
   * request is sent to Redis again, and Redis runs one connection's commands in order,
   * so every request after it is decided on the charged bucket, and no request is
   * granted locally once it is on its way. (Passes until nothing was left never ended
   * under steady load: each pass's round trip let new local grants in.)
   */
  async #probe(): Promise<void> {
    if (this.#probing || !this.#down || !this.#client.isReady) return;
    this.#probing = true;
    try {
      await withDeadline(this.#client.sendCommand(['PING']), PROBE_DEADLINE_MS, () => this.#replaceClient());
      await withDeadline(this.#loadScript(), PROBE_DEADLINE_MS, () => this.#replaceClient());
    } catch {
      // Still away: the next tick tries again.
      this.#probing = false;
      return;
    }
    const batch = this.#pending;
    this.#pending = new Map();
    const sent = this.#reconcile(batch);
    this.#down = false;
    if (this.#probeTimer) clearInterval(this.#probeTimer);
    this.#probeTimer = null;
    try {
      await sent.done;
      this.#log('info', 'redis limiter: Redis reachable again, local counts reconciled', {
        outage_ms: Date.now() - this.#downSince,
        accounts: sent.accounts,
        requests: sent.requests,
      });
    } catch (err) {
      // Put the batch back (with anything counted meanwhile) for the next probe; the
      // requests sent after it fail over to local counting as well.
      for (const [month, owed] of batch)
        for (const [id, o] of owed) this.#owe(month, id, o.n, o.burst, o.atMs);
      this.#markDown(err);
    } finally {
      this.#probing = false;
    }
  }

  /**
   * Send what this thread granted alone to Redis, counts and burst (RECONCILE_SCRIPT), as
   * one transaction written to the connection before this returns; `done` settles with
   * its reply. Reports the distinct accounts and the requests it carries.
   */
  #reconcile(batch: Map<string, Map<string, Owed>>): {
    done: Promise<unknown>;
    accounts: number;
    requests: number;
  } {
    const multi = this.#client.multi();
    const accounts = new Set<string>();
    let requests = 0;
    let calls = 0;
    for (const [month, owed] of batch) {
      const keys = [usageKey(month)];
      const argv: string[] = [];
      for (const [id, o] of owed) {
        if (o.n === 0) continue;
        keys.push(gcraKey(id));
        argv.push(id, String(o.n), String(o.burst), String(Math.round(o.atMs * 1000)));
        accounts.add(id);
        requests += o.n;
      }
      if (keys.length === 1) continue;
      multi.eval(RECONCILE_SCRIPT, { keys, arguments: [String(keys.length - 1), ...argv] });
      calls++;
    }
    const done =
      calls === 0
        ? Promise.resolve()
        : withDeadline(multi.exec(), PROBE_DEADLINE_MS, () => this.#replaceClient());
    return { done, accounts: accounts.size, requests };
  }

  async close(): Promise<void> {
    if (this.#down) await this.#probe();
    if (this.#probeTimer) clearInterval(this.#probeTimer);
    this.#probeTimer = null;
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#watchdog = null;
    if (this.#client.isOpen) {
      if (this.#client.isReady) await this.#client.close();
      else this.#client.destroy();
    }
  }
}
