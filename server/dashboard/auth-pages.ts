/**
 * Signing up, in and out, proving an email address and resetting a password. The
 * answers never tell whether an address has an account: sign-up, sign-in and reset
 * read the same whichever it is, and take the same time, since every branch does the
 * same work in the same order before answering (the same throttles, one password
 * hash, an unknown address's included) and what differs (an account made, an email
 * sent) is done after the answer (`later`). Attempts are throttled in the store over
 * sliding windows, per address, per client and, for sign-in, across all clients, so
 * every server of a Redis deployment counts them together.
 */

import { AccessChangeError } from '../../accounts/changes.js';
import { createPerson, emailKey, emailProblem, findPerson } from '../../accounts/people.js';
import { unsafeCharacter } from '../../core/escape.js';
import { html } from './html.js';
import { resetEmail, verifyEmail } from './mailer.js';
import type { PageContext, PageRoute, PersonContext, Throttle } from './page-context.js';
import { redirect } from './page-context.js';
import type { PageResponse } from './page-http.js';
import { page } from './page-layout.js';
import { hashPassword, passwordProblem, verifyPassword, verifyUnknownAccount } from './password.js';
import { randomToken, secretId, sessionCookieName } from './session.js';

/** An email link proving the address: single use, 24 hours. */
const VERIFY_TTL_MS = 24 * 60 * 60 * 1000;
/** A password-reset link: single use, one hour, and only until the password changes. */
const RESET_TTL_MS = 60 * 60 * 1000;

const MINUTE_MS = 60 * 1000;
const HOUR_MS = 60 * MINUTE_MS;
/** Sign-in attempts per client, per address, and of everyone together (every server of the store). */
const SIGNIN_PER_CLIENT: Throttle = { limit: 50, windowMs: 15 * MINUTE_MS };
const SIGNIN_PER_EMAIL: Throttle = { limit: 10, windowMs: 15 * MINUTE_MS };
const SIGNIN_ALL: Throttle = { limit: 600, windowMs: 15 * MINUTE_MS };
/** Emails one address may be sent (sign-up, reset, resend), and sign-up or reset forms one client may send. */
const MAILS_PER_EMAIL: Throttle = { limit: 5, windowMs: HOUR_MS };
const MAIL_FORMS_PER_CLIENT: Throttle = { limit: 30, windowMs: HOUR_MS };

function tooMany(c: PageContext, title: string, waitMs: number): PageResponse {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const minutes = Math.ceil(seconds / 60);
  return {
    status: 429,
    headers: [['Retry-After', String(seconds)]],
    body: page(
      { title, person: null, csrf: c.csrf },
      html`<p>Too many attempts from here or for this address. Wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.</p>`,
    ),
  };
}

/** 0 when one more attempt under `key` is allowed (and counted), else the ms to wait. */
function throttled(c: PageContext, key: string, t: Throttle): Promise<number> {
  return c.throttle(key, t);
}

/**
 * Whether one more email may go to `email` (counted when it may). Asked only after the
 * answer: whether an address's counter exists (someone asked for mail to it within the
 * hour) changes the time of the check by a file creation in the embedded store, and
 * the answer never says whether an email went out, so it need not wait for it.
 */
async function mailable(c: PageContext, email: string): Promise<boolean> {
  return (await throttled(c, `mail:${secretId(email)}`, MAILS_PER_EMAIL)) === 0;
}

/** A link into the dashboard as sent in an email: always the configured base URL, never the request's Host. */
function linkTo(c: PageContext, path: string, token: string): string {
  return `${c.deps.baseUrl}${path}?token=${encodeURIComponent(token)}`;
}

async function sendVerification(c: PageContext, person: { id: string; email: string }): Promise<void> {
  const token = randomToken();
  await c.deps.store.putSecret(
    'verify',
    secretId(token),
    JSON.stringify({ person_id: person.id }),
    VERIFY_TTL_MS,
  );
  const link = linkTo(c, '/account/verify', token);
  await c.deps.mailer.send({ to: person.email, ...verifyEmail(link), link });
}

async function mail(c: PageContext, send: () => Promise<void>): Promise<void> {
  // A mail server that refuses is the operator's to fix; the person is told the same
  // as when it works, so the answer reveals nothing.
  try {
    await send();
  } catch (e) {
    c.deps.log('error', 'account email not sent', { error: (e as Error).message });
  }
}

// ---- sign up ---------------------------------------------------------------

function signupForm(c: PageContext, email: string, problem: string | null): PageResponse {
  return {
    status: problem === null ? 200 : 422,
    body: page(
      {
        title: 'Create an account',
        person: null,
        csrf: c.csrf,
        notice: problem === null ? null : { kind: 'error', text: problem },
      },
      html`<p>An account starts on the Free plan. You can ask for another plan at any time.</p>
<form method="post" action="/account/signup">
<input type="hidden" name="csrf" value="${c.csrf}">
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="email" required value="${email}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="10" aria-describedby="pw-help">
<p id="pw-help" class="muted">At least 10 characters.</p>
<button type="submit">Create account</button>
</form>
<p>Already have an account? <a href="/account/login">Sign in</a>.</p>`,
    ),
  };
}

function checkEmailPage(c: PageContext, email: string): PageResponse {
  return {
    status: 200,
    body: page(
      { title: 'Check your email', person: null, csrf: c.csrf },
      html`<p>We sent a link to <strong>${email}</strong>. Follow it within 24 hours to verify your address, then <a href="/account/login">sign in</a>.</p>
<p class="muted">No email? Look in your spam folder, or sign in and ask for another link.</p>`,
    ),
  };
}

async function signup(c: PageContext): Promise<PageResponse> {
  if (c.req.method === 'GET') return signupForm(c, '', null);
  const email = emailKey(c.req.form.get('email') ?? '');
  const password = c.req.form.get('password') ?? '';
  const bad = emailProblem(email) ?? passwordProblem(password, email);
  // An address with a hidden character is not put back in the field: shown escaped
  // there, `\u200b` would be sent back as six characters of an address.
  if (bad !== null) return signupForm(c, unsafeCharacter(email) === null ? email : '', bad);
  const wait = await throttled(c, `signup:ip:${c.req.ip}`, MAIL_FORMS_PER_CLIENT);
  if (wait > 0) return tooMany(c, 'Create an account', wait);
  // Known address or not: one hash, then the answer; the rest happens after it.
  const hash = await hashPassword(password, c.deps.hasher);
  const existing = findPerson(c.state, email);
  if (existing !== undefined)
    c.later('sign-up of a known address', async () => {
      if (!(await mailable(c, email))) return;
      await mail(c, () =>
        c.deps.mailer.send({
          to: email,
          subject: 'Your Fund Returns account',
          text: `Someone (you, we hope) tried to create an account with this address, which already has one.\nSign in at ${c.deps.baseUrl}/account/login, or reset your password at ${c.deps.baseUrl}/account/forgot.\n`,
          link: `${c.deps.baseUrl}/account/login`,
        }),
      );
    });
  else
    c.later('sign-up', async () => {
      // Over its mail budget, an address gets neither an account nor an email.
      if (!(await mailable(c, email))) return;
      try {
        const { person } = await createPerson(c.deps.store, { email, passwordHash: hash }, c.deps.now());
        c.deps.log('info', 'person signed up', { person: person.id, account: person.account_id });
        await mail(c, () => sendVerification(c, person));
      } catch (e) {
        // Signed up a moment ago by another request: that one sent the link.
        if (!(e instanceof AccessChangeError)) throw e;
      }
    });
  return checkEmailPage(c, email);
}

// ---- sign in and out -------------------------------------------------------

/** Where to go after sign-in: a dashboard path of ours, never another site. */
function safeNext(next: string | null): string {
  return next !== null && /^\/(account|admin)(\/[A-Za-z0-9/_-]*)?$/.test(next) ? next : '/account';
}

const NOTICES: Record<string, string> = {
  verified: 'Your email address is verified. Sign in to continue.',
  'signed-out': 'You are signed out.',
  'password-changed':
    'Your password is changed, and every other session is signed out. Sign in with the new one.',
};

function loginForm(c: PageContext, email: string, problem: string | null, status = 200): PageResponse {
  const done = NOTICES[c.req.query.get('done') ?? ''];
  const next = safeNext(c.req.query.get('next') ?? c.req.form.get('next'));
  return {
    status: problem === null ? 200 : status,
    body: page(
      {
        title: 'Sign in',
        person: null,
        csrf: c.csrf,
        notice:
          problem !== null ? { kind: 'error', text: problem } : done ? { kind: 'ok', text: done } : null,
      },
      html`<form method="post" action="/account/login">
<input type="hidden" name="csrf" value="${c.csrf}">
<input type="hidden" name="next" value="${next}">
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" required value="${email}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<p><a href="/account/forgot">Forgot your password?</a> · <a href="/account/signup">Create an account</a></p>`,
    ),
  };
}

async function login(c: PageContext): Promise<PageResponse> {
  if (c.req.method === 'GET') {
    if (c.session !== null) return redirect(safeNext(c.req.query.get('next')));
    return loginForm(c, '', null);
  }
  const email = emailKey(c.req.form.get('email') ?? '');
  const password = c.req.form.get('password') ?? '';
  // In this order: a client or an address over its own limit spends nothing of everyone's budget.
  for (const [key, t] of [
    [`signin:ip:${c.req.ip}`, SIGNIN_PER_CLIENT],
    [`signin:${secretId(email)}`, SIGNIN_PER_EMAIL],
    ['signin:all', SIGNIN_ALL],
  ] as const) {
    const wait = await throttled(c, key, t);
    if (wait > 0) return tooMany(c, 'Sign in', wait);
  }
  const person = findPerson(c.state, email);
  // An unknown address costs a hash too, so the time taken does not tell it apart.
  const ok =
    person === undefined
      ? await verifyUnknownAccount(password, c.deps.hasher)
      : await verifyPassword(password, person.password_hash, c.deps.hasher);
  if (person === undefined || !ok || person.status !== 'active' || person.email !== email)
    return loginForm(c, email, 'That email and password do not match an account.', 401);
  const begun = await c.sessions.begin(person, c.req.cookies.get(sessionCookieName(c.cookieRules)));
  c.deps.log('info', 'person signed in', { person: person.id });
  return redirect(safeNext(c.req.form.get('next')), [['Set-Cookie', begun.setCookie]]);
}

async function logout(c: PageContext): Promise<PageResponse> {
  const clear = await c.sessions.end(c.req.cookies);
  return redirect('/account/login?done=signed-out', [['Set-Cookie', clear]]);
}

// ---- email verification ----------------------------------------------------

function badLink(c: PageContext, what: string): PageResponse {
  return {
    status: 400,
    body: page(
      { title: what, person: c.session?.person ?? null, csrf: c.csrf },
      html`<p>This link has expired or was already used.</p>
<p>${
        what === 'Verify your email'
          ? html`<a href="/account">Sign in</a> and ask for a new link from your account page.`
          : html`<a href="/account/forgot">Ask for a new link</a>.`
      }</p>`,
    ),
  };
}

async function verify(c: PageContext): Promise<PageResponse> {
  const token = c.req.query.get('token') ?? '';
  const taken = token === '' ? null : await c.deps.store.takeSecret('verify', secretId(token));
  if (taken === null) return badLink(c, 'Verify your email');
  const { person_id } = JSON.parse(taken) as { person_id: string };
  if (c.state.people.some((p) => p.id === person_id))
    await c.deps.store.change({ op: 'person.verify', person_id, at: new Date(c.deps.now()).toISOString() });
  return redirect(c.session !== null ? '/account?done=verified' : '/account/login?done=verified');
}

async function resendVerification(c: PersonContext): Promise<PageResponse> {
  if (c.person.verified_at !== null) return redirect('/account?done=verified');
  const wait = await throttled(c, `mail:${secretId(c.person.email)}`, MAILS_PER_EMAIL);
  if (wait > 0) return tooMany(c, 'Verify your email', wait);
  await mail(c, () => sendVerification(c, c.person));
  return redirect('/account?done=verification-sent');
}

// ---- forgotten password ----------------------------------------------------

function forgotForm(c: PageContext, sent: string | null): PageResponse {
  return {
    status: 200,
    body: page(
      {
        title: 'Reset your password',
        person: null,
        csrf: c.csrf,
        notice:
          sent === null
            ? null
            : {
                kind: 'ok',
                text: `If ${sent} has an account, we sent it a link to set a new password. The link works for one hour.`,
              },
      },
      html`<form method="post" action="/account/forgot">
<input type="hidden" name="csrf" value="${c.csrf}">
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="email" required>
<button type="submit">Send me a link</button>
</form>`,
    ),
  };
}

async function forgot(c: PageContext): Promise<PageResponse> {
  if (c.req.method === 'GET') return forgotForm(c, null);
  const email = emailKey(c.req.form.get('email') ?? '');
  if (emailProblem(email) !== null) return forgotForm(c, email);
  const wait = await throttled(c, `forgot:ip:${c.req.ip}`, MAIL_FORMS_PER_CLIENT);
  if (wait > 0) return tooMany(c, 'Reset your password', wait);
  const person = findPerson(c.state, email);
  c.later('reset link', async () => {
    if (!(await mailable(c, email)) || person === undefined || person.status !== 'active') return;
    const token = randomToken();
    const record: ResetRecord = { person_id: person.id, password: passwordMark(person.password_hash) };
    await c.deps.store.putSecret('reset', secretId(token), JSON.stringify(record), RESET_TTL_MS);
    const link = linkTo(c, '/account/reset', token);
    await mail(c, () => c.deps.mailer.send({ to: person.email, ...resetEmail(link), link }));
  });
  return forgotForm(c, email);
}

/**
 * A reset link's record: whose, and a mark of the password it was sent for. A link
 * works only while that password is the person's: a reset or any other change of
 * password ends every link sent before it, used or not.
 */
interface ResetRecord {
  readonly person_id: string;
  readonly password: string;
}

/** A short digest of a stored password hash: tells a change, reveals nothing of it. */
function passwordMark(passwordHash: string): string {
  return secretId(`reset-link:${passwordHash}`).slice(0, 32);
}

/** The person a reset link may still set a password for, or undefined (unknown, spent or outdated). */
function resetPerson(c: PageContext, value: string | null) {
  if (value === null) return undefined;
  const r = JSON.parse(value) as Partial<ResetRecord>;
  const person = c.state.people.find((p) => p.id === r.person_id);
  return person !== undefined && r.password === passwordMark(person.password_hash) ? person : undefined;
}

function resetForm(c: PageContext, token: string, problem: string | null): PageResponse {
  return {
    status: problem === null ? 200 : 422,
    body: page(
      {
        title: 'Choose a new password',
        person: null,
        csrf: c.csrf,
        notice: problem === null ? null : { kind: 'error', text: problem },
      },
      html`<form method="post" action="/account/reset">
<input type="hidden" name="csrf" value="${c.csrf}">
<input type="hidden" name="token" value="${token}">
<label for="password">New password</label>
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="10" aria-describedby="pw-help">
<p id="pw-help" class="muted">At least 10 characters. Every session of your account is signed out.</p>
<button type="submit">Set password</button>
</form>`,
    ),
  };
}

async function reset(c: PageContext): Promise<PageResponse> {
  const token = (c.req.method === 'GET' ? c.req.query.get('token') : c.req.form.get('token')) ?? '';
  if (token === '' || token.length > 100) return badLink(c, 'Choose a new password');
  const id = secretId(token);
  if (c.req.method === 'GET') {
    if (resetPerson(c, await c.deps.store.getSecret('reset', id)) === undefined)
      return badLink(c, 'Choose a new password');
    return resetForm(c, token, null);
  }
  const person = resetPerson(c, await c.deps.store.getSecret('reset', id));
  if (person === undefined) return badLink(c, 'Choose a new password');
  const person_id = person.id;
  const password = c.req.form.get('password') ?? '';
  const bad = passwordProblem(password, person.email);
  if (bad !== null) return resetForm(c, token, bad);
  const hash = await hashPassword(password, c.deps.hasher);
  // Single use: of two forms sent with one link, one sets the password.
  if ((await c.deps.store.takeSecret('reset', id)) === null) return badLink(c, 'Choose a new password');
  const at = new Date(c.deps.now()).toISOString();
  await c.deps.store.change({ op: 'person.password', person_id, password_hash: hash, at });
  // The link reached the address: it is proven.
  if (person.verified_at === null) await c.deps.store.change({ op: 'person.verify', person_id, at });
  const clear = await c.sessions.end(c.req.cookies);
  return redirect('/account/login?done=password-changed', [['Set-Cookie', clear]]);
}

export const authRoutes: readonly PageRoute[] = [
  { method: 'GET', path: '/account/signup', who: 'anyone', handle: signup },
  { method: 'POST', path: '/account/signup', who: 'anyone', hashes: true, handle: signup },
  { method: 'GET', path: '/account/login', who: 'anyone', handle: login },
  { method: 'POST', path: '/account/login', who: 'anyone', hashes: true, handle: login },
  { method: 'POST', path: '/account/logout', who: 'anyone', handle: logout },
  { method: 'GET', path: '/account/verify', who: 'anyone', handle: verify },
  { method: 'POST', path: '/account/verify/resend', who: 'person', handle: resendVerification },
  { method: 'GET', path: '/account/forgot', who: 'anyone', handle: forgot },
  { method: 'POST', path: '/account/forgot', who: 'anyone', handle: forgot },
  { method: 'GET', path: '/account/reset', who: 'anyone', handle: reset },
  { method: 'POST', path: '/account/reset', who: 'anyone', hashes: true, handle: reset },
];
