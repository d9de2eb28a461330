/**
 * The account dashboard: pages under /account for people and /admin for
 * operators, on the API's own server and port. Every page is rendered here, works
 * without JavaScript, and is sent with a strict Content-Security-Policy and
 * `Cache-Control: no-store`. Every state-changing form carries a token (the session's,
 * or before sign-in a cookie's) and must come from our own origin.
 *
 * The route table below is the one place a dashboard route is declared.
 */
import type { HttpResponse, TemplatedApp } from '../http/uws.js';
import { accountRoutes } from './account-pages.js';
import { adminRoutes } from './admin-pages.js';
import { AfterAnswer } from './after-answer.js';
import { authRoutes } from './auth-pages.js';
import { HashBusy } from './hash-pool.js';
import { html } from './html.js';
import type { DashboardDeps, PageRoute, PersonContext, Throttle } from './page-context.js';
import { redirect } from './page-context.js';
import { type PageRequest, type PageResponse, servePage } from './page-http.js';
import { ASSET_CSS, ASSET_JS, CSS, JS, page } from './page-layout.js';
import {
  type CookieRules,
  cookie,
  csrfCookieName,
  randomToken,
  type Session,
  Sessions,
  sameToken,
} from './session.js';

/** For routes open to anyone, `person`/`session` may be absent: handlers of those check. */
const ROUTES: readonly PageRoute[] = [...authRoutes, ...accountRoutes, ...adminRoutes];

const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  [
    'Content-Security-Policy',
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  ],
  ['X-Frame-Options', 'DENY'],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'same-origin'],
  ['Cache-Control', 'no-store'],
];

function match(route: PageRoute, path: string): Record<string, string> | null {
  const want = route.path.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      if (got[i] === '' || got[i].length > 100) return null;
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i]);
      } catch {
        // A malformed escape (`%E0%A4%A`) names no record: no route.
        return null;
      }
    } else if (want[i] !== got[i]) return null;
  }
  return params;
}

/**
 * Whether a form came from our own origin: the base URL's, or the `Host` it was sent to
 * on the base URL's scheme. Scheme, host and port all count: with an https base URL,
 * a page served over plain http on the same name (anyone on the path can write one)
 * is another origin.
 */
export function sameOrigin(req: PageRequest, baseUrl: string): boolean {
  const from = req.origin !== '' && req.origin !== 'null' ? req.origin : req.referer;
  if (from === '') return false;
  let u: URL;
  try {
    u = new URL(from);
  } catch {
    return false;
  }
  const base = new URL(baseUrl);
  if (u.origin === base.origin) return true;
  // Behind a proxy or on another name of this host: the browser sent the form to `Host`,
  // and an attacker's page cannot make a victim's browser send its own origin here.
  if (req.host === '') return false;
  let sentTo: URL;
  try {
    sentTo = new URL(`${base.protocol}//${req.host}`);
  } catch {
    return false;
  }
  return u.origin === sentTo.origin;
}

export class Dashboard {
  readonly sessions: Sessions;
  readonly cookieRules: CookieRules;
  /** What pages left to do after their answers (emails, new accounts). */
  readonly afterAnswer: AfterAnswer;
  /** Throttle keys refused, and until when (throttle). */
  readonly #refusedUntil = new Map<string, number>();

  constructor(readonly deps: DashboardDeps) {
    this.cookieRules = { secure: deps.baseUrl.startsWith('https:') };
    this.sessions = new Sessions(deps.store, this.cookieRules, deps.now);
    this.afterAnswer = new AfterAnswer((what, e) =>
      deps.log('error', `dashboard ${what} failed after its answer`, {
        error: e instanceof Error ? (e.stack ?? e.message) : String(e),
      }),
    );
  }

  /** Register the pages on `app` (before its catch-all 404). */
  register(app: TemplatedApp): void {
    const onError = (e: unknown) =>
      this.deps.log('error', 'dashboard page failed', {
        error: e instanceof Error ? (e.stack ?? e.message) : String(e),
      });
    const asset = (type: string, body: string) => (res: HttpResponse) => {
      res.cork(() => {
        res.writeStatus('200 OK');
        res.writeHeader('Content-Type', type);
        res.writeHeader('Cache-Control', 'public, max-age=3600');
        res.writeHeader('X-Content-Type-Options', 'nosniff');
        res.end(body);
      });
    };
    app.get(ASSET_CSS, asset('text/css; charset=utf-8', CSS));
    app.get(ASSET_JS, asset('text/javascript; charset=utf-8', JS));
    for (const prefix of ['/account', '/admin']) {
      for (const pattern of [prefix, `${prefix}/*`]) {
        app.any(pattern, (res, req) => {
          servePage(res, req, {}, (r) => this.answer(r), onError);
        });
      }
    }
  }

  /** One page request, from routing to the page with its headers. */
  async answer(req: PageRequest): Promise<PageResponse> {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
    const found = findRoute(method, path);
    if (found === 'other method')
      return this.#finish({ status: 405, body: 'This page does not take that method.', type: TEXT }, []);
    if (found === null) return this.#finish({ status: 404, body: notFoundPage(), headers: [] }, []);
    // Hashing at its bound: a form that would hash is refused before it costs a look at
    // the store, and nothing is counted against anyone (dashboard.md, Security).
    if (found.route.hashes === true) {
      try {
        this.deps.hasher.refuseWhenFull();
      } catch (e) {
        if (!(e instanceof HashBusy)) throw e;
        return this.#finish(busy('', e.retryAfterS), []);
      }
    }
    // HEAD is answered as GET (its handler decides on GET), without the body (page-http.ts).
    const r: PageRequest = { ...req, method, params: found.params };
    const state = await this.deps.store.read();
    const session = await this.sessions.current(req.cookies, state);
    const cookies: string[] = [];
    if (session?.setCookie) cookies.push(session.setCookie);
    const csrf = this.#csrf(req, session, cookies);
    const route = found.route;
    const refused = this.#refusal(r, route, session, csrf, path);
    if (refused !== null) return this.#finish(refused, cookies);
    const c = {
      req: r,
      deps: this.deps,
      state,
      session,
      person: session?.person,
      csrf,
      sessions: this.sessions,
      cookieRules: this.cookieRules,
      later: (what: string, task: () => Promise<void>) => this.afterAnswer.run(what, task),
      throttle: (key: string, t: Throttle) => this.throttle(key, t),
    } as PersonContext;
    try {
      return this.#finish(await route.handle(c), cookies);
    } catch (e) {
      if (!(e instanceof HashBusy)) throw e;
      return this.#finish(busy(csrf, e.retryAfterS), cookies);
    }
  }

  /** The session's CSRF token, or (signed out) the cookie's, or a new one set in `cookies`. */
  #csrf(req: PageRequest, session: Session | null, cookies: string[]): string {
    if (session !== null) return session.csrf;
    const had = req.cookies.get(csrfCookieName(this.cookieRules));
    const csrf = had !== undefined && /^[A-Za-z0-9_-]{43}$/.test(had) ? had : randomToken();
    if (had !== csrf) cookies.push(cookie(this.cookieRules, csrfCookieName(this.cookieRules), csrf, null));
    return csrf;
  }

  /** Why this request may not reach its page (a foreign form, no session, not an operator), or null. */
  #refusal(
    r: PageRequest,
    route: PageRoute,
    session: Session | null,
    csrf: string,
    path: string,
  ): PageResponse | null {
    if (r.method === 'POST') {
      if (!sameOrigin(r, this.deps.baseUrl))
        return forbidden('This form did not come from this site, so it was not acted on.');
      if (!sameToken(r.form.get('csrf') ?? '', csrf))
        return forbidden(
          'This form has expired (or did not come from this site). Go back, reload the page and try again.',
        );
    }
    if (route.who !== 'anyone' && session === null) {
      if (r.method === 'GET') return redirect(`/account/login?next=${encodeURIComponent(path)}`);
      return forbidden('Your session has ended. Sign in again.');
    }
    if (route.who === 'admin' && session?.person.role !== 'admin')
      return forbidden('This page is for operators of this service.');
    return null;
  }

  /**
   * One attempt against a throttle of the store. A refusal is remembered here until it
   * ends, and a key refused is refused again without asking the store: attempts made on
   * other threads or servers can only make a refusal last longer, never end it sooner,
   * so a flood of refused attempts costs no I/O.
   */
  async throttle(key: string, t: Throttle): Promise<number> {
    const now = this.deps.now();
    const known = (this.#refusedUntil.get(key) ?? 0) - now;
    if (known > 0) return known;
    const wait = await this.deps.store.throttle(key, t.limit, t.windowMs, now);
    if (wait > 0) {
      if (this.#refusedUntil.size >= MAX_REFUSALS)
        for (const [k, until] of this.#refusedUntil) if (until <= now) this.#refusedUntil.delete(k);
      // Still full of live refusals: the oldest make room.
      for (const k of this.#refusedUntil.keys()) {
        if (this.#refusedUntil.size < MAX_REFUSALS) break;
        this.#refusedUntil.delete(k);
      }
      this.#refusedUntil.set(key, now + wait);
    }
    return wait;
  }

  #finish(page: PageResponse, cookies: readonly string[]): PageResponse {
    return {
      ...page,
      headers: [
        ...SECURITY_HEADERS,
        ...(page.headers ?? []),
        ...cookies.map((v) => ['Set-Cookie', v] as const),
      ],
    };
  }
}

const TEXT = 'text/plain; charset=utf-8';

/** Refused throttle keys one thread remembers at most (a flood of new addresses cannot grow it without end). */
const MAX_REFUSALS = 100_000;

function forbidden(text: string): PageResponse {
  return { status: 403, body: text, type: TEXT };
}

/** Password hashing at its bound: nothing was decided, so the same form may simply be sent again. */
function busy(csrf: string, retryAfterS: number): PageResponse {
  return {
    status: 503,
    body: page(
      { title: 'Try again shortly', person: null, csrf },
      html`<p>Too many passwords are being checked right now. Wait ${retryAfterS} seconds, then go back and send the form again.</p>`,
    ),
    headers: [['Retry-After', String(retryAfterS)]],
  };
}

function notFoundPage(): string {
  return 'No such page. The dashboard starts at /account.';
}

/** The page route for this method and path; 'other method' when only another method has one. */
function findRoute(
  method: string,
  path: string,
): { route: PageRoute; params: Record<string, string> } | 'other method' | null {
  let otherMethod = false;
  for (const route of ROUTES) {
    const params = match(route, path);
    if (params === null) continue;
    if (route.method === method) return { route, params };
    otherMethod = true;
  }
  return otherMethod ? 'other method' : null;
}
