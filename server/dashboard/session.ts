/**
 * Dashboard sessions. The cookie holds 256 random bits; the store holds
 * only their SHA-256 (a leaked store gives no one a session), under `session` with an
 * idle expiry, and the record carries the absolute one. A new id is issued at sign-in
 * (so an id planted before it — session fixation — is worthless) and when the person's
 * role changed since the session began. A session begun before the password was last
 * set, or of a disabled person, is ended.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AccessState, AccessStore, Person } from '../../accounts/model.js';

/** A session unused this long ends. */
export const IDLE_MS = 2 * 60 * 60 * 1000;
/** A session ends this long after sign-in, however busy. */
export const ABSOLUTE_MS = 24 * 60 * 60 * 1000;
/** `seen_at` is written back at most this often (a page view is not a store write). */
const TOUCH_MS = 60 * 1000;

interface SessionRecord {
  readonly person_id: string;
  readonly created_at: number;
  readonly seen_at: number;
  /** The form token of this session (CSRF). */
  readonly csrf: string;
  /** The role when the session began: a change issues a new id. */
  readonly role: string;
}

export interface Session {
  readonly person: Person;
  readonly csrf: string;
  /** Set-Cookie to send with the answer (a renewed id), if any. */
  readonly setCookie: string | null;
}

export interface CookieRules {
  /** https base URL: cookies are Secure and use the `__Host-` prefix. */
  readonly secure: boolean;
}

export function sessionCookieName(rules: CookieRules): string {
  return rules.secure ? '__Host-fr_session' : 'fr_session';
}

export function csrfCookieName(rules: CookieRules): string {
  return rules.secure ? '__Host-fr_csrf' : 'fr_csrf';
}

export function cookie(
  rules: CookieRules,
  name: string,
  value: string,
  maxAgeSeconds: number | null,
): string {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (rules.secure) parts.push('Secure');
  if (maxAgeSeconds !== null) parts.push(`Max-Age=${maxAgeSeconds}`);
  return parts.join('; ');
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The store's name for a secret: its SHA-256, hex. */
export function secretId(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compare two tokens without stopping at the first difference. */
export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class Sessions {
  readonly #store: AccessStore;
  readonly #rules: CookieRules;
  readonly #now: () => number;
  constructor(store: AccessStore, rules: CookieRules, now: () => number) {
    this.#store = store;
    this.#rules = rules;
    this.#now = now;
  }

  /** Begin a session for `person`, ending `previous` (the id the browser held before sign-in). */
  async begin(person: Person, previous: string | undefined): Promise<{ setCookie: string; csrf: string }> {
    if (previous !== undefined && TOKEN_SHAPE.test(previous))
      await this.#store.deleteSecret('session', secretId(previous));
    const token = randomToken();
    const at = this.#now();
    const record: SessionRecord = {
      person_id: person.id,
      created_at: at,
      seen_at: at,
      csrf: randomToken(),
      role: person.role,
    };
    await this.#store.putSecret('session', secretId(token), JSON.stringify(record), IDLE_MS);
    return {
      setCookie: cookie(this.#rules, sessionCookieName(this.#rules), token, ABSOLUTE_MS / 1000),
      csrf: record.csrf,
    };
  }

  /** The signed-in person of a request, or null (no cookie, expired, ended, disabled). */
  async current(cookies: ReadonlyMap<string, string>, state: AccessState): Promise<Session | null> {
    const token = cookies.get(sessionCookieName(this.#rules));
    if (token === undefined || !TOKEN_SHAPE.test(token)) return null;
    const id = secretId(token);
    const text = await this.#store.getSecret('session', id);
    if (text === null) return null;
    let rec: SessionRecord;
    try {
      rec = JSON.parse(text) as SessionRecord;
    } catch {
      return null;
    }
    const t = this.#now();
    const person = state.people.find((p) => p.id === rec.person_id);
    if (
      person === undefined ||
      person.status !== 'active' ||
      t - rec.created_at >= ABSOLUTE_MS ||
      t - rec.seen_at >= IDLE_MS ||
      rec.created_at < Date.parse(person.password_at)
    ) {
      await this.#store.deleteSecret('session', id);
      return null;
    }
    if (rec.role !== person.role) {
      // A privilege change: the old id is worthless from now on.
      const renewed = await this.begin(person, token);
      return { person, csrf: renewed.csrf, setCookie: renewed.setCookie };
    }
    if (t - rec.seen_at >= TOUCH_MS) {
      const left = Math.min(IDLE_MS, ABSOLUTE_MS - (t - rec.created_at));
      await this.#store.putSecret('session', id, JSON.stringify({ ...rec, seen_at: t }), left);
    }
    return { person, csrf: rec.csrf, setCookie: null };
  }

  /** End the request's session (sign out): the cookie is cleared too. */
  async end(cookies: ReadonlyMap<string, string>): Promise<string> {
    const token = cookies.get(sessionCookieName(this.#rules));
    if (token !== undefined && TOKEN_SHAPE.test(token))
      await this.#store.deleteSecret('session', secretId(token));
    return cookie(this.#rules, sessionCookieName(this.#rules), '', 0);
  }
}
