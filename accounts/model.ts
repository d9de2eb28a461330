/**
 * Accounts, keys and plans (SPEC 5, 8; C25, C26): the records every store keeps and
 * every server enforces. Stores (embedded file, Redis) hold these; the gate reads
 * a snapshot of them (AccessState) and never the store on the hot path.
 */

export const PLAN_NAMES = ['free', 'developer', 'pro', 'business'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface PlanLimits {
  /** Requests per 60-second window (C27). */
  readonly burst: number;
  /** Requests per calendar month in UTC (C28). */
  readonly monthly: number;
}

/** C26 defaults; `--plans FILE` overrides them. */
export const DEFAULT_PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: { burst: 100, monthly: 250 },
  developer: { burst: 100, monthly: 1000 },
  pro: { burst: 250, monthly: 2500 },
  business: { burst: 500, monthly: 10000 },
};

export const STATUSES = ['active', 'none', 'canceled', 'past_due'] as const;
export type SubscriptionStatus = (typeof STATUSES)[number];

export interface Account {
  /** Stable, non-secret (`acct_…`); usage counters are keyed by it. */
  readonly id: string;
  /** Unique, chosen by the operator. */
  readonly name: string;
  readonly plan: PlanName;
  readonly status: SubscriptionStatus;
  readonly created_at: string;
}

/**
 * A new account's name: starts with a letter or digit, so that no name reads as a
 * flag (`--`, `-x`) on the command line.
 */
const ACCOUNT_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The shape of an account id (keys.ts newAccountId); commands take an id wherever a name goes. */
const ACCOUNT_ID_SHAPE = /^acct_[0-9a-f]{12}$/;

/** Why `name` cannot name a new account, whatever the state (a phrase after "NAME"), or null. */
export function accountNameProblem(name: string): string | null {
  if (!ACCOUNT_NAME_RULE.test(name))
    return `must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, not ${JSON.stringify(name)}`;
  if (ACCOUNT_ID_SHAPE.test(name))
    return `must not look like an account id (acct_ and 12 hex digits), not ${JSON.stringify(name)}`;
  return null;
}

/**
 * Why account `a` cannot be created in state `s`, or null when it can. Names and ids
 * share one namespace, because every command that takes an account takes either.
 */
export function newAccountProblem(s: AccessState, a: Account): string | null {
  const bad = accountNameProblem(a.name);
  if (bad !== null) return `an account name ${bad}`;
  if (s.accounts.some((x) => x.name === a.name))
    return `an account named ${JSON.stringify(a.name)} already exists`;
  const owner = s.accounts.find((x) => x.id === a.name);
  if (owner !== undefined)
    return `${JSON.stringify(a.name)} is the id of account ${JSON.stringify(owner.name)}: choose another name`;
  if (s.accounts.some((x) => x.id === a.id || x.name === a.id)) return `account id ${a.id} already exists`;
  return null;
}

export interface KeyRecord {
  /** Non-secret id (`key_…`) shown by `keys list`, used to revoke or rotate. */
  readonly id: string;
  /** The owning account's id. */
  readonly account_id: string;
  /** First characters of the key for display (`fr_live_AbCd`), never enough to use it. */
  readonly prefix: string;
  /** Lower-case hex SHA-256 of the whole key: the only form the secret is stored in. */
  readonly hash: string;
  readonly created_at: string;
  /** Set when revoked: the key is refused from then on. */
  readonly revoked_at: string | null;
  /** Set on the old key of a rotation: refused after this instant (grace period). */
  readonly expires_at: string | null;
  /** What its owner calls it (the dashboard's "Label"); absent on keys made before labels. */
  readonly label?: string;
}

const ROLES = ['user', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const PERSON_STATUSES = ['active', 'disabled'] as const;
export type PersonStatus = (typeof PERSON_STATUSES)[number];

/**
 * A person who signs in to the dashboard. Each owns exactly one account
 * (the one the API meters, C25–C30); an account made by the CLI has no person.
 */
export interface Person {
  /** Stable, non-secret (`user_` and 12 hex digits). */
  readonly id: string;
  /** Lower-cased and trimmed (emailKey): unique. */
  readonly email: string;
  readonly account_id: string;
  /** The encoded password hash (dashboard/password.ts); never logged, never shown. */
  readonly password_hash: string;
  /** When the password was last set: sessions begun before it are ended (a reset signs out everywhere). */
  readonly password_at: string;
  readonly role: Role;
  readonly status: PersonStatus;
  /** When the email address was proven (the link was followed); null until then. */
  readonly verified_at: string | null;
  readonly created_at: string;
}

const REQUEST_DECISIONS = ['approved', 'declined'] as const;
export type RequestDecision = (typeof REQUEST_DECISIONS)[number];

/**
 * A request to move an account to another plan. Today an operator decides it (admin
 * view, `accounts approve|decline`); a payment provider would decide it in the same
 * place later (accounts/plan-requests.ts is that seam). Approval changes the plan at
 * once (C28).
 */
export interface PlanRequest {
  /** `req_` and 12 hex digits. */
  readonly id: string;
  readonly account_id: string;
  readonly plan: PlanName;
  /** The person who asked (null: asked another way, e.g. by an operator). */
  readonly person_id: string | null;
  readonly created_at: string;
  /** null while pending. */
  readonly decision: RequestDecision | null;
  /** Who decided: a person id or `cli:<user>`. */
  readonly decided_by: string | null;
  readonly decided_at: string | null;
}

/** Everything a server needs to decide who a key belongs to. */
export interface AccessState {
  /** Increases with every change; servers use it to notice changes cheaply. */
  readonly version: number;
  readonly accounts: readonly Account[];
  readonly keys: readonly KeyRecord[];
  /** Dashboard users; empty in a store no one signed up to (and absent in older logs). */
  readonly people: readonly Person[];
  readonly requests: readonly PlanRequest[];
}

/** One durable change to accounts and keys, as the stores record it. */
export type AccessChange =
  | { readonly op: 'account.create'; readonly account: Account }
  | { readonly op: 'account.plan'; readonly account_id: string; readonly plan: PlanName }
  | { readonly op: 'account.status'; readonly account_id: string; readonly status: SubscriptionStatus }
  | { readonly op: 'key.create'; readonly key: KeyRecord }
  | { readonly op: 'key.revoke'; readonly key_id: string; readonly at: string }
  | { readonly op: 'key.expire'; readonly key_id: string; readonly at: string }
  | { readonly op: 'person.create'; readonly person: Person }
  | { readonly op: 'person.verify'; readonly person_id: string; readonly at: string }
  | {
      readonly op: 'person.password';
      readonly person_id: string;
      readonly password_hash: string;
      readonly at: string;
    }
  | { readonly op: 'person.status'; readonly person_id: string; readonly status: PersonStatus }
  | { readonly op: 'person.role'; readonly person_id: string; readonly role: Role }
  | { readonly op: 'request.create'; readonly request: PlanRequest }
  | {
      readonly op: 'request.decide';
      readonly request_id: string;
      readonly decision: RequestDecision;
      readonly by: string;
      readonly at: string;
    };

// ---- record shapes (a store's records may come from a file an operator edited, so check them) ----

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isInstant(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && !Number.isNaN(Date.parse(v));
}

export function isPlan(v: unknown): v is PlanName {
  return typeof v === 'string' && (PLAN_NAMES as readonly string[]).includes(v);
}

export function isStatus(v: unknown): v is SubscriptionStatus {
  return typeof v === 'string' && (STATUSES as readonly string[]).includes(v);
}

function isId(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 100;
}

export function isAccount(v: unknown): v is Account {
  return (
    isObject(v) &&
    isId(v.id) &&
    typeof v.name === 'string' &&
    isPlan(v.plan) &&
    isStatus(v.status) &&
    isInstant(v.created_at)
  );
}

export function isKeyRecord(v: unknown): v is KeyRecord {
  return (
    isObject(v) &&
    isId(v.id) &&
    isId(v.account_id) &&
    typeof v.prefix === 'string' &&
    typeof v.hash === 'string' &&
    /^[0-9a-f]{64}$/.test(v.hash) &&
    isInstant(v.created_at) &&
    (v.revoked_at === null || isInstant(v.revoked_at)) &&
    (v.expires_at === null || isInstant(v.expires_at)) &&
    (v.label === undefined || (typeof v.label === 'string' && v.label.length <= LABEL_MAX))
  );
}

/** Longest key label a person may give. */
export const LABEL_MAX = 64;

function oneOf<T extends string>(values: readonly T[], v: unknown): v is T {
  return typeof v === 'string' && (values as readonly string[]).includes(v);
}

function isHashText(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 512;
}

export function isPerson(v: unknown): v is Person {
  return (
    isObject(v) &&
    isId(v.id) &&
    typeof v.email === 'string' &&
    v.email.length > 0 &&
    v.email.length <= 254 &&
    isId(v.account_id) &&
    isHashText(v.password_hash) &&
    isInstant(v.password_at) &&
    oneOf(ROLES, v.role) &&
    oneOf(PERSON_STATUSES, v.status) &&
    (v.verified_at === null || isInstant(v.verified_at)) &&
    isInstant(v.created_at)
  );
}

export function isPlanRequest(v: unknown): v is PlanRequest {
  return (
    isObject(v) &&
    isId(v.id) &&
    isId(v.account_id) &&
    isPlan(v.plan) &&
    (v.person_id === null || isId(v.person_id)) &&
    isInstant(v.created_at) &&
    (v.decision === null || oneOf(REQUEST_DECISIONS, v.decision)) &&
    (v.decided_by === null || isId(v.decided_by)) &&
    (v.decided_at === null || isInstant(v.decided_at))
  );
}

export function isChange(v: unknown): v is AccessChange {
  if (!isObject(v)) return false;
  switch (v.op) {
    case 'account.create':
      return isAccount(v.account);
    case 'account.plan':
      return isId(v.account_id) && isPlan(v.plan);
    case 'account.status':
      return isId(v.account_id) && isStatus(v.status);
    case 'key.create':
      return isKeyRecord(v.key);
    case 'key.revoke':
    case 'key.expire':
      return isId(v.key_id) && isInstant(v.at);
    case 'person.create':
      return isPerson(v.person);
    case 'person.verify':
      return isId(v.person_id) && isInstant(v.at);
    case 'person.password':
      return isId(v.person_id) && isHashText(v.password_hash) && isInstant(v.at);
    case 'person.status':
      return isId(v.person_id) && oneOf(PERSON_STATUSES, v.status);
    case 'person.role':
      return isId(v.person_id) && oneOf(ROLES, v.role);
    case 'request.create':
      return isPlanRequest(v.request);
    case 'request.decide':
      return isId(v.request_id) && oneOf(REQUEST_DECISIONS, v.decision) && isId(v.by) && isInstant(v.at);
    default:
      return false;
  }
}

export const EMPTY_STATE: AccessState = { version: 0, accounts: [], keys: [], people: [], requests: [] };

/**
 * A durable home for accounts, keys and monthly usage. The embedded file store
 * serves one machine; the Redis store several. Admin changes are durable when
 * `change` resolves; a server sees them through `subscribe` within a second.
 */
export interface AccessStore {
  /** The current state (re-read from the durable medium). */
  read(): Promise<AccessState>;
  /** Record one change durably and return the new state. */
  change(c: AccessChange): Promise<AccessState>;
  /** Call `onChange` (at most about once a second) when any process changed the state. */
  subscribe(onChange: () => void): () => void;
  /** Monthly counts for a month (all accounts), for a server starting up and for `accounts usage`. */
  readUsage(month: string): Promise<Map<string, number>>;
  /** Persist absolute monthly counts of the given accounts (the server's counters are the truth). */
  writeUsage(month: string, counts: ReadonlyMap<string, number>): Promise<void>;
  /**
   * The plan limits the last server started on this store enforces (its `--plans` over
   * the defaults), so the operator CLI reports those; null when no server has said.
   * Throws, naming where, when what is recorded is not valid plans.
   */
  readPlans(): Promise<Record<PlanName, PlanLimits> | null>;
  writePlans(plans: Readonly<Record<PlanName, PlanLimits>>): Promise<void>;

  // ---- the dashboard's records: shared by every server on the store ----

  /**
   * Expiring secrets by kind: sessions (`session`), email-verification and reset
   * tokens (`verify`, `reset`). `id` is already a hash of the secret (never the secret
   * itself); `value` is the record's JSON. Gone after `ttlMs`.
   */
  putSecret(kind: SecretKind, id: string, value: string, ttlMs: number): Promise<void>;
  /** The value, or null when absent or expired. */
  getSecret(kind: SecretKind, id: string): Promise<string | null>;
  /** Read and delete in one step (a single-use token: of two takers, one gets it). */
  takeSecret(kind: SecretKind, id: string): Promise<string | null>;
  deleteSecret(kind: SecretKind, id: string): Promise<void>;
  /**
   * One attempt under `key` (the dashboard's throttles) against a sliding window:
   * admitted, and counted, when fewer than `limit` attempts under `key` were admitted in
   * the `windowMs` up to `nowMs`; returns 0 then, else the milliseconds until one more
   * would be (a refused attempt is not counted). No window of `windowMs`, wherever it
   * starts, holds more than `limit` admitted attempts, across every instance.
   */
  throttle(key: string, limit: number, windowMs: number, nowMs: number): Promise<number>;
  /** Append one entry to the audit log of admin actions. */
  audit(entry: AuditEntry): Promise<void>;
  /** The newest `limit` audit entries, newest first. */
  readAudit(limit: number): Promise<AuditEntry[]>;

  // ---- requests per key per day (usage chart) ----

  /**
   * Add counts to days (UTC YYYY-MM-DD): key id → [admitted, refused with 429]. Adds,
   * so several servers on one Redis each add their own.
   */
  addDaily(counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>): Promise<void>;
  /** Counts of the days `from`..`to` (inclusive, YYYY-MM-DD): day → key id → counts. Kept ≥ 400 days. */
  readDaily(from: string, to: string): Promise<Map<string, Map<string, DailyCount>>>;
  close(): Promise<void>;
}

export const SECRET_KINDS = ['session', 'verify', 'reset'] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

/** [admitted, refused by a limit (429)] requests of one key on one day. */
export type DailyCount = readonly [number, number];

/** Days of per-key counts a store keeps at least. */
export const DAILY_KEEP_DAYS = 400;

/** One admin action (who, what, when) as the store keeps it. */
export interface AuditEntry {
  readonly at: string;
  /** A person id and email (`user_… <a@b>`) or `cli:<os user>`. */
  readonly actor: string;
  /** e.g. `account.plan`, `request.approve`, `person.disable`. */
  readonly action: string;
  /** What it was done to: an account, person or request id. */
  readonly target: string;
  /** Free text (a plan name, a status), never a secret. */
  readonly detail: string;
}

/** The outcome of counting one request against an account's limits (C27, C28, C29). */
export interface LimitDecision {
  readonly ok: boolean;
  /** Why it was refused: the 429 slug (C22). */
  readonly refused?: 'rate-limited' | 'quota-exceeded';
  /** Whole seconds until a request would be allowed again (Retry-After). */
  readonly retryAfter: number;
  /** Requests left in the burst window and whole seconds until it is full again (C29). */
  readonly burstRemaining: number;
  readonly burstReset: number;
  /** Requests left this month and whole seconds until the month ends (C29). */
  readonly quotaRemaining: number;
  readonly quotaReset: number;
}

/**
 * Counts requests per account. The local limiter (shared memory, one machine)
 * answers synchronously; the Redis limiter (many machines) asynchronously.
 * A refused request must not be counted (C23).
 */
export interface Limiter {
  admit(
    account: { readonly id: string; readonly slot: number },
    limits: PlanLimits,
    nowMs: number,
  ): LimitDecision | Promise<LimitDecision>;
  /**
   * Where the account stands, counting nothing: the C29 fields of an authenticated
   * request refused before the limits (403), as an admitted decision.
   */
  peek(
    account: { readonly id: string; readonly slot: number },
    limits: PlanLimits,
    nowMs: number,
  ): LimitDecision | Promise<LimitDecision>;
}

/** YYYY-MM of an instant (UTC), the quota period (C28). */
export function monthOf(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 7);
}

/** First instant (ms) of the month after the one containing nowMs (UTC). */
export function nextMonthStart(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Seconds in the month containing nowMs (the `w` of the quota policy, C29). */
export function monthSeconds(nowMs: number): number {
  const d = new Date(nowMs);
  return (
    (Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) -
      Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)) /
    1000
  );
}
