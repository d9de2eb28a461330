/**
 * Signing up, in and out, proving an email address and resetting a password. The
 * answers never tell whether an address has an account (sign-up, sign-in and reset
 * read the same whichever it is, and an unknown address still costs a password
 * hash), and attempts are counted per address and per client in the store, so every
 * server of a Redis deployment counts them together.
 */
import { AccessChangeError } from '../../access/model.js';
import { createPerson, emailKey, emailProblem, findPerson } from '../../access/people.js';
import type { PageContext, PageRoute, PersonContext } from '../context.js';
import { redirect } from '../context.js';
import { html } from '../html.js';
import { resetEmail, verifyEmail } from '../mailer.js';
import type { PageResponse } from '../page-http.js';
import { hashPassword, passwordProblem, verifyPassword, verifyUnknownAccount } from '../password.js';
import { randomToken, secretId, sessionCookieName } from '../session.js';
import { page } from './layout.js';

/** An email link proving the address: single use, 24 hours (issue 22). */
export const VERIFY_TTL_MS = 24 * 60 * 60 * 1000;
/** A password-reset link: single use, one hour. */
export const RESET_TTL_MS = 60 * 60 * 1000;

const WINDOW_MS = 15 * 60 * 1000;
/** Sign-in attempts per address and per client in WINDOW_MS. */
export const SIGNIN_PER_EMAIL = 10;
export const SIGNIN_PER_CLIENT = 50;
/** Emails one address may be sent (sign-up, reset, resend) and forms one client may send, per hour. */
export const MAILS_PER_EMAIL = 5;
export const MAIL_FORMS_PER_CLIENT = 30;
const HOUR_MS = 60 * 60 * 1000;

function tooMany(c: PageContext, title: string, retryMinutes: number): PageResponse {
  return {
    status: 429,
    headers: [['Retry-After', String(retryMinutes * 60)]],
    body: page(
      { title, person: null, csrf: c.csrf },
      html`<p>Too many attempts from here or for this address. Wait ${retryMinutes} minutes and try again.</p>`,
    ),
  };
}

async function over(c: PageContext, key: string, windowMs: number, max: number): Promise<boolean> {
  return (await c.deps.store.hit(key, windowMs)) > max;
}

/** A link into the dashboard as sent in an email: always the configured base URL, never the request's Host. */
function linkTo(c: PageContext, path: string, token: string): string {
  return `${c.deps.baseUrl}${path}?token=${encodeURIComponent(token)}`;
}

export async function sendVerification(c: PageContext, person: { id: string; email: string }): Promise<void> {
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
  if (bad !== null) return signupForm(c, email, bad);
  if (await over(c, `signup:ip:${c.req.ip}`, HOUR_MS, MAIL_FORMS_PER_CLIENT))
    return tooMany(c, 'Create an account', 60);
  if (await over(c, `mail:${secretId(email)}`, HOUR_MS, MAILS_PER_EMAIL)) return checkEmailPage(c, email);
  const existing = findPerson(c.state, email);
  if (existing !== undefined) {
    await mail(c, () =>
      c.deps.mailer.send({
        to: email,
        subject: 'Your Fund Returns account',
        text: `Someone (you, we hope) tried to create an account with this address, which already has one.\nSign in at ${c.deps.baseUrl}/account/login, or reset your password at ${c.deps.baseUrl}/account/forgot.\n`,
        link: `${c.deps.baseUrl}/account/login`,
      }),
    );
    return checkEmailPage(c, email);
  }
  const hash = await hashPassword(password);
  try {
    const { person } = await createPerson(c.deps.store, { email, passwordHash: hash }, c.deps.now());
    c.deps.log('info', 'person signed up', { person: person.id, account: person.account_id });
    await mail(c, () => sendVerification(c, person));
  } catch (e) {
    // Signed up a moment ago by another request: the same answer.
    if (!(e instanceof AccessChangeError)) throw e;
  }
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
  if (
    (await over(c, `signin:ip:${c.req.ip}`, WINDOW_MS, SIGNIN_PER_CLIENT)) ||
    (await over(c, `signin:${secretId(email)}`, WINDOW_MS, SIGNIN_PER_EMAIL))
  )
    return tooMany(c, 'Sign in', 15);
  const person = findPerson(c.state, email);
  // An unknown address costs a hash too, so the time taken does not tell it apart.
  const ok =
    person === undefined
      ? await verifyUnknownAccount(password)
      : await verifyPassword(password, person.password_hash);
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
  if (await over(c, `mail:${secretId(c.person.email)}`, HOUR_MS, MAILS_PER_EMAIL))
    return tooMany(c, 'Verify your email', 60);
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
  if (await over(c, `forgot:ip:${c.req.ip}`, HOUR_MS, MAIL_FORMS_PER_CLIENT))
    return tooMany(c, 'Reset your password', 60);
  const person = findPerson(c.state, email);
  if (
    person !== undefined &&
    person.status === 'active' &&
    !(await over(c, `mail:${secretId(email)}`, HOUR_MS, MAILS_PER_EMAIL))
  ) {
    const token = randomToken();
    await c.deps.store.putSecret(
      'reset',
      secretId(token),
      JSON.stringify({ person_id: person.id }),
      RESET_TTL_MS,
    );
    const link = linkTo(c, '/account/reset', token);
    await mail(c, () => c.deps.mailer.send({ to: person.email, ...resetEmail(link), link }));
  }
  return forgotForm(c, email);
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
    if ((await c.deps.store.getSecret('reset', id)) === null) return badLink(c, 'Choose a new password');
    return resetForm(c, token, null);
  }
  const pending = await c.deps.store.getSecret('reset', id);
  if (pending === null) return badLink(c, 'Choose a new password');
  const { person_id } = JSON.parse(pending) as { person_id: string };
  const person = c.state.people.find((p) => p.id === person_id);
  if (person === undefined) return badLink(c, 'Choose a new password');
  const password = c.req.form.get('password') ?? '';
  const bad = passwordProblem(password, person.email);
  if (bad !== null) return resetForm(c, token, bad);
  const hash = await hashPassword(password);
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
  { method: 'POST', path: '/account/signup', who: 'anyone', handle: signup },
  { method: 'GET', path: '/account/login', who: 'anyone', handle: login },
  { method: 'POST', path: '/account/login', who: 'anyone', handle: login },
  { method: 'POST', path: '/account/logout', who: 'anyone', handle: logout },
  { method: 'GET', path: '/account/verify', who: 'anyone', handle: verify },
  { method: 'POST', path: '/account/verify/resend', who: 'person', handle: resendVerification },
  { method: 'GET', path: '/account/forgot', who: 'anyone', handle: forgot },
  { method: 'POST', path: '/account/forgot', who: 'anyone', handle: forgot },
  { method: 'GET', path: '/account/reset', who: 'anyone', handle: reset },
  { method: 'POST', path: '/account/reset', who: 'anyone', handle: reset },
];
