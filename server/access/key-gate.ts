/**
 * The access gate (C22, C23, C25–C29): bearer key → account → subscription →
 * limits, before anything else runs. Refusals are problem+json; every admitted
 * (and rate-refused) response carries the RateLimit fields.
 *
 * The key check avoids hashing on every request: a bounded cache maps the exact
 * presented Authorization value to its table entry, and is dropped whenever the
 * table changes (so a revoke takes effect with the next table, within a second).
 * The cache compares a candidate in full, never stopping at the first difference
 * (core/string-index.ts, secret mode). A new token is found by hashing it (SHA-256)
 * into a Map keyed by the stored hash, so no comparison runs over the secret itself
 * there, and keys are never logged.
 *
 * Read-your-writes: a well-formed key the table does not list may have been
 * created a moment ago, before this thread heard of it. With `lookAgain` (a bounded look
 * at the store that resolves once a table read after the request has been set here,
 * lookout.ts) it is looked up once more before it is refused. A revoked key is listed as
 * revoked and refused at once; a token that is not even shaped like a key never looks.
 */
import { createHash } from 'node:crypto';
import { KEY_BODY_LENGTH, KEY_PREFIX, looksLikeKey, parseBearer } from '../../accounts/keys.js';
import { type LimitDecision, type Limiter, monthSeconds, type PlanLimits } from '../../accounts/model.js';
import { now as clockNow } from '../../core/clock.js';
import { StringIndex } from '../../core/string-index.js';
import type { Gate, GateDecision } from '../http/gate.js';
import {
  ascii,
  type HeaderBlock,
  type HeaderSource,
  type HeaderWriter,
  headerBlock,
  staticHeaders,
} from '../http/headers.js';
import { countRefusal, GATE_REASONS } from '../metrics/counters.js';
import { problemJson } from '../public/problems.js';
import type { KeyCounts } from './key-counts.js';
import type { KeyEntry, KeyTableData } from './table.js';

/** Tokens remembered per thread; cleared wholesale when full (keys are few, clients fewer). */
const CACHE_MAX = 10_000;

export class AccessGate implements Gate {
  #byHash = new Map<string, KeyEntry>();
  #revoked = new Set<string>();
  /** Presented Authorization value → position in `cached` (string-index.ts: secret mode, no Map). */
  #cache = new StringIndex({ secret: true, capacity: 64 });
  #cached: KeyEntry[] = [];
  readonly #wwwAuthenticate = staticHeaders(headerBlock([['WWW-Authenticate', 'Bearer']]));
  /** RateLimit-Policy lines keyed by the plan's limits object (one per plan for the life of the table). */
  #policyCache = new Map<PlanLimits, HeaderBlock>();
  #policyMonthSeconds = 0;
  #policyFrom = 0;
  #policyTo = -1;

  readonly #baseUrl: string;
  readonly #limiter: Limiter;
  readonly #now: () => number;
  readonly #lookAgain: (() => Promise<void>) | null;
  readonly #counts: KeyCounts | null;
  constructor(
    baseUrl: string,
    limiter: Limiter,
    now: () => number = clockNow,
    lookAgain: (() => Promise<void>) | null = null,
    /** This thread's requests per key (key-counts.ts, the daily chart); null: not counted. */
    counts: KeyCounts | null = null,
  ) {
    this.#baseUrl = baseUrl;
    this.#limiter = limiter;
    this.#now = now;
    this.#lookAgain = lookAgain;
    this.#counts = counts;
  }

  setTable(table: KeyTableData): void {
    this.#byHash = new Map(table.entries);
    this.#revoked = new Set(table.revoked);
    this.#cache.clear();
    this.#cached = [];
    // Limits objects arrive cloned with each table; keep the cache to this table's.
    this.#policyCache = new Map();
  }

  admit(authorization: string): GateDecision | Promise<GateDecision> {
    const entry = this.#lookup(authorization);
    if (typeof entry === 'object') return this.#admitEntry(entry);
    if (entry === undefined || this.#lookAgain === null || this.#revoked.has(entry))
      return this.#unauthorized(authorization);
    const hash = entry;
    return this.#lookAgain().then(() => {
      const found = this.#byHash.get(hash);
      return found === undefined ? this.#unauthorized(authorization) : this.#admitEntry(found);
    });
  }

  #unauthorized(authorization: string): GateDecision {
    return this.#refuse(
      '401 Unauthorized',
      'unauthorized',
      unauthorizedDetail(authorization),
      this.#wwwAuthenticate,
    );
  }

  #admitEntry(entry: KeyEntry): GateDecision | Promise<GateDecision> {
    const nowMs = this.#now();
    if (nowMs >= entry.expiresAt) {
      return this.#refuse(
        '401 Unauthorized',
        'unauthorized',
        'This API key has expired (it was rotated).',
        this.#wwwAuthenticate,
      );
    }
    if (entry.status !== 'active') {
      // Authenticated, so it carries the RateLimit fields (C29); nothing is counted.
      const forbid = (d: LimitDecision) =>
        this.#refuse(
          '403 Forbidden',
          'forbidden',
          `The account has no active subscription (status ${entry.status}).`,
          new RateLimitHeaders(this.#policyLine(entry.limits, nowMs), d),
        );
      const p = this.#limiter.peek({ id: entry.accountId, slot: entry.slot }, entry.limits, nowMs);
      return p instanceof Promise ? p.then(forbid) : forbid(p);
    }
    const d = this.#limiter.admit({ id: entry.accountId, slot: entry.slot }, entry.limits, nowMs);
    if (d instanceof Promise) return d.then((x) => this.#decide(x, entry, nowMs));
    return this.#decide(d, entry, nowMs);
  }

  /** The key's entry; for a well-formed key the table does not list, its hash; else undefined. */
  #lookup(authorization: string): KeyEntry | string | undefined {
    if (authorization === '') return undefined;
    const hit = this.#cache.get(authorization);
    if (hit >= 0) return this.#cached[hit];
    const token = parseBearer(authorization);
    if (token === null || !looksLikeKey(token)) return undefined;
    const hash = createHash('sha256').update(token).digest('hex');
    const entry = this.#byHash.get(hash);
    if (entry === undefined) return hash;
    if (this.#cached.length >= CACHE_MAX) {
      this.#cache.clear();
      this.#cached = [];
    }
    this.#cache.set(authorization, this.#cached.length);
    this.#cached.push(entry);
    return entry;
  }

  #decide(d: LimitDecision, entry: KeyEntry, nowMs: number): GateDecision {
    const limits = entry.limits;
    // Kept as numbers: RateLimitHeaders writes them into the response's header bytes.
    const headers = new RateLimitHeaders(this.#policyLine(limits, nowMs), d);
    if (d.ok) {
      this.#counts?.admitted(entry.keySlot);
      return { ok: true, headers };
    }
    this.#counts?.refused(entry.keySlot);
    const slug = d.refused ?? 'rate-limited';
    const detail =
      slug === 'quota-exceeded'
        ? `Monthly quota of ${limits.monthly} requests used up; it resets at the start of next month (UTC) or on moving to a higher plan.`
        : `Burst limit of ${limits.burst} requests per minute exceeded; retry after ${d.retryAfter} s.`;
    return this.#refuse('429 Too Many Requests', slug, detail, headers);
  }

  /**
   * The C29 RateLimit-Policy line and the start of the RateLimit line, cached per
   * plan limits until the month changes (the policy's `w` is the month's length).
   */
  #policyLine(limits: PlanLimits, nowMs: number): HeaderBlock {
    if (nowMs < this.#policyFrom || nowMs >= this.#policyTo) {
      const d = new Date(nowMs);
      this.#policyFrom = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      this.#policyTo = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      this.#policyMonthSeconds = monthSeconds(nowMs);
      this.#policyCache = new Map();
    }
    let p = this.#policyCache.get(limits);
    if (p === undefined) {
      // The policy line and the fixed start of the RateLimit line, copied as one.
      const policy = headerBlock([
        [
          'RateLimit-Policy',
          `"burst";q=${limits.burst};w=60, "quota";q=${limits.monthly};w=${this.#policyMonthSeconds}`,
        ],
      ]);
      p = new Uint8Array(policy.length + RATE_LIMIT_BURST.length);
      p.set(policy);
      p.set(RATE_LIMIT_BURST, policy.length);
      this.#policyCache.set(limits, p);
    }
    return p;
  }

  #refuse(
    status: string,
    slug: 'unauthorized' | 'forbidden' | 'rate-limited' | 'quota-exceeded',
    detail: string,
    headers: HeaderSource | null,
  ): GateDecision {
    const baseUrl = this.#baseUrl;
    countRefusal(GATE_REASONS.indexOf(slug));
    return { ok: false, status, body: (instance) => problemJson(baseUrl, slug, detail, instance), headers };
  }
}

const RATE_LIMIT_BURST = ascii('\r\nRateLimit: "burst";r=');
const T = ascii(';t=');
const QUOTA = ascii(', "quota";r=');
const RETRY_AFTER = ascii('\r\nRetry-After: ');

/**
 * The C29 RateLimit fields of one response, plus Retry-After on a 429 (C27, C28).
 * Kept as numbers and written as digits straight into the response's header bytes
 * (http/headers.ts): no string is built per request.
 */
class RateLimitHeaders implements HeaderSource {
  readonly #policyAndBurst: HeaderBlock;
  readonly #d: LimitDecision;
  constructor(
    /** The plan's RateLimit-Policy line then `RateLimit: "burst";r=` (AccessGate.policyLine). */
    policyAndBurst: HeaderBlock,
    d: LimitDecision,
  ) {
    this.#policyAndBurst = policyAndBurst;
    this.#d = d;
  }

  writeHeaders(w: HeaderWriter): void {
    const d = this.#d;
    w.bytes(this.#policyAndBurst)
      .uint(d.burstRemaining)
      .bytes(T)
      .uint(d.burstReset)
      .bytes(QUOTA)
      .uint(d.quotaRemaining)
      .bytes(T)
      .uint(d.quotaReset);
    if (!d.ok) w.bytes(RETRY_AFTER).uint(d.retryAfter);
  }
}

/**
 * Why a request has no valid key, as precisely as can be said without telling which
 * keys exist: a header that is missing or not `Bearer <token>` is the client's mistake,
 * not a key to rotate.
 */
export function unauthorizedDetail(authorization: string): string {
  if (authorization === '') return 'Missing Authorization header: send Authorization: Bearer <API key>.';
  const token = parseBearer(authorization);
  if (token === null) return 'Malformed Authorization header: expected Authorization: Bearer <API key>.';
  if (!looksLikeKey(token))
    return `Not an API key: keys are ${KEY_PREFIX} followed by ${KEY_BODY_LENGTH} characters (A-Z, a-z, 0-9, _ and -).`;
  return 'Invalid or revoked API key.';
}
