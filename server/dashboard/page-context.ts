/**
 * What the dashboard's pages share: the dependencies a server gives them, the context
 * each handler gets, and the shape of a route. A module of its own so the pages and
 * the route table (dashboard.ts) do not import one another.
 */
import type {
  AccessState,
  AccessStore,
  Limiter,
  Person,
  PlanLimits,
  PlanName,
} from '../../accounts/model.js';
import type { Hasher } from './hash-pool.js';
import type { Mailer } from './mailer.js';
import type { PageRequest, PageResponse } from './page-http.js';
import type { CookieRules, Session, Sessions } from './session.js';

export interface DashboardDeps {
  readonly store: AccessStore;
  readonly mailer: Mailer;
  /** The plan limits this server enforces (C26 and --plans). */
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
  /** Public base URL (links in emails, the Origin forms must come from). */
  readonly baseUrl: string;
  /** Most usable keys one person may hold. */
  readonly maxKeys: number;
  readonly now: () => number;
  /** Where an account stands against its limits, counting nothing (usage page). */
  readonly limiter: Limiter;
  /** The limiter slot of an account this server knows, or undefined. */
  readonly slotOf: (accountId: string) => number | undefined;
  readonly log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Password hashing, bounded (hash-pool.ts): it may refuse with HashBusy, a 503. */
  readonly hasher: Hasher;
}

/** What a handler gets: the request, the store's state of the moment and who asks. */
export interface PageContext {
  readonly req: PageRequest;
  readonly deps: DashboardDeps;
  readonly state: AccessState;
  readonly session: Session | null;
  /** The form token to put in this page's forms. */
  readonly csrf: string;
  readonly sessions: Sessions;
  readonly cookieRules: CookieRules;
  /**
   * Run `task` after this answer is written (sending an email, making an account): work
   * that differs by whether an address has an account stays off the answer's time.
   */
  readonly later: (what: string, task: () => Promise<void>) => void;
  /** One attempt under `key` against throttle `t`: 0 when allowed (and counted), else the ms to wait. */
  readonly throttle: (key: string, t: Throttle) => Promise<number>;
}

/** A throttle: at most `limit` attempts in any `windowMs` (a sliding window, accounts/throttle.ts). */
export interface Throttle {
  readonly limit: number;
  readonly windowMs: number;
}

/** The signed-in person's context (routes that need one get it). */
export interface PersonContext extends PageContext {
  readonly session: Session;
  readonly person: Person;
}

type Who = 'anyone' | 'person' | 'admin';

export interface PageRoute {
  readonly method: 'GET' | 'POST';
  /** Segments; `:name` matches one segment. */
  readonly path: string;
  readonly who: Who;
  /** Its POST hashes a password: refused (503) before anything else while hashing is at its bound. */
  readonly hashes?: true;
  readonly handle: (c: PersonContext) => Promise<PageResponse>;
}

export function redirect(
  location: string,
  extra: ReadonlyArray<readonly [string, string]> = [],
): PageResponse {
  return { status: 303, body: '', headers: [['Location', location], ...extra] };
}
