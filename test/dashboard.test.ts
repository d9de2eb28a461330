/**
 * The account dashboard over HTTP: every flow a person or an operator
 * goes through, and every security rule, checked on a running server with an
 * embedded store, its emails read from the log mailer's JSON lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../accounts/key-actions.js';
import { openStore } from '../accounts/open-store.js';
import { createPerson } from '../accounts/people.js';
import { requestPlan } from '../accounts/plan-requests.js';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { hashPassword, threadPoolHasher } from '../server/dashboard/password.js';
import { mailedLinks, PageClient } from './dashboard-client.js';
import {
  cli,
  E2E_START,
  generateAndBuild,
  rawConnection,
  type ServerProcess,
  setupAccess,
  startServe,
  type TestAccess,
  tempDir,
  testNow,
  waitFor,
} from './harness.js';

const PASSWORD = 'correct horse battery';
let server: ServerProcess;
let access: TestAccess;
let n = 0;
/** A fresh address per test: tests share one server and the throttles count per address. */
const freshEmail = () => `person${n++}.${process.pid}@example.test`;

beforeAll(async () => {
  const dir = tempDir('fr-dashboard-');
  const { snapshots } = generateAndBuild(dir, 20);
  access = setupAccess(dir);
  server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '2']);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function lastLink(email: string, path: string): Promise<string> {
  let link = '';
  await waitFor(
    () => {
      const links = mailedLinks(server.logs(), email).filter((l) => new URL(l).pathname === path);
      link = links[links.length - 1] ?? '';
      return link !== '';
    },
    10_000,
    `an email to ${email} with a link to ${path}`,
    server.logs,
  );
  const u = new URL(link);
  return u.pathname + u.search;
}

/** Sign up, follow the verification link and sign in: a person ready to make keys. */
async function signedIn(email = freshEmail()): Promise<PageClient> {
  const c = new PageClient(server.url);
  await c.get('/account/signup');
  const s = await c.post('/account/signup', { email, password: PASSWORD });
  expect(s.status, s.body).toBe(200);
  expect((await c.get(await lastLink(email, '/account/verify'))).status).toBe(303);
  await c.get('/account/login');
  const l = await c.post('/account/login', { email, password: PASSWORD });
  expect(l.status, l.body).toBe(303);
  return c;
}

async function createKey(c: PageClient, label: string): Promise<string> {
  await c.get('/account/keys');
  const r = await c.post('/account/keys', { label });
  expect(r.status, r.body).toBe(200);
  const m = /<code class="secret" id="new-key">([^<]+)<\/code>/.exec(r.body);
  expect(m, r.body).not.toBeNull();
  return (m as RegExpExecArray)[1];
}

const v1 = (key: string) =>
  fetch(`${server.url}/v1/funds?limit=1`, { headers: { authorization: `Bearer ${key}` } });

describe('a person from sign-up to a working key', () => {
  it('signs up, gets the link by email (logged as one JSON line), verifies, signs in, makes a key that /v1 takes', async () => {
    const email = freshEmail();
    const c = await signedIn(email);
    // The log mailer's line names the address and the link, nothing else secret.
    const line = server
      .logs()
      .split('\n')
      .find((l) => l.includes('"account email"') && l.includes(email)) as string;
    const logged = JSON.parse(line) as Record<string, unknown>;
    expect(logged.msg).toBe('account email');
    expect(logged.to).toBe(email);
    expect(String(logged.link)).toMatch(/\/account\/verify\?token=/);
    expect(line).not.toContain(PASSWORD);

    const overview = await c.get('/account');
    expect(overview.status).toBe(200);
    expect(overview.body).toContain('free');
    const key = await createKey(c, 'laptop');
    expect(key).toMatch(/^fr_live_/);
    const r = await v1(key);
    expect(r.status).toBe(200);
    for (let i = 0; i < 4; i++) await v1(key);
    // The usage page counts them within a few seconds (the daily counts' flush), per day.
    let usage = await c.get('/account/usage');
    await waitFor(
      async () => {
        usage = await c.get('/account/usage');
        return /<tr><td>\d{4}-\d{2}-\d{2}<\/td><td>5<\/td><td>0<\/td><\/tr>/.test(usage.body);
      },
      10_000,
      'the usage page showing 5 requests',
      () => usage.body,
    );
    expect(usage.body).toContain('5 of 250 requests used');
    const keys = await c.get('/account/keys');
    expect(keys.body).toContain('laptop');
    expect(keys.body).toContain(key.slice(0, 12));
    // Shown once: the list has the prefix only.
    expect(keys.body).not.toContain(key);
  });

  it('a new account starts on Free, active, owned by the person (accounts list shows the owner)', async () => {
    const email = freshEmail();
    await signedIn(email);
    const r = cli(['accounts', 'list', '--json', '--store', access.store]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(email);
  });

  it('no key before the email is verified', async () => {
    const email = freshEmail();
    const c = new PageClient(server.url);
    await c.get('/account/signup');
    await c.post('/account/signup', { email, password: PASSWORD });
    // The account is made just after the answer, with its link: as a person would, wait for the email.
    await lastLink(email, '/account/verify');
    await c.get('/account/login');
    expect((await c.post('/account/login', { email, password: PASSWORD })).status).toBe(303);
    const page = await c.get('/account/keys');
    expect(page.body).toContain('Verify your email address first');
    expect((await c.post('/account/keys', { label: 'x' })).status).toBe(403);
  });

  it('the verification link works once', async () => {
    const email = freshEmail();
    const c = new PageClient(server.url);
    await c.get('/account/signup');
    await c.post('/account/signup', { email, password: PASSWORD });
    const link = await lastLink(email, '/account/verify');
    expect((await c.get(link)).status).toBe(303);
    expect((await c.get(link)).status).toBe(400);
  });

  it('rotate gives a new key and the old one stops at once with no grace; revoke makes a key 401 within a second', async () => {
    const c = await signedIn();
    const key = await createKey(c, 'rotating');
    expect((await v1(key)).status).toBe(200);
    const list = await c.get('/account/keys');
    const id = (/action="\/account\/keys\/(key_[0-9a-f]{12})\/rotate"/.exec(list.body) as RegExpExecArray)[1];
    const rotated = await c.post(`/account/keys/${id}/rotate`, { grace: '0' });
    expect(rotated.status, rotated.body).toBe(200);
    const fresh = (
      /<code class="secret" id="new-key">([^<]+)<\/code>/.exec(rotated.body) as RegExpExecArray
    )[1];
    expect(fresh).not.toBe(key);
    await waitFor(async () => (await v1(key)).status === 401, 3000, 'the rotated key refused');
    expect((await v1(fresh)).status).toBe(200);

    const again = await c.get('/account/keys');
    const freshId = (
      /action="\/account\/keys\/(key_[0-9a-f]{12})\/revoke"/.exec(again.body) as RegExpExecArray
    )[1];
    const started = Date.now();
    expect((await c.post(`/account/keys/${freshId}/revoke`, {})).status).toBe(303);
    await waitFor(async () => (await v1(fresh)).status === 401, 3000, 'the revoked key refused');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('holds at most --max-keys keys (default 10)', async () => {
    const c = await signedIn();
    for (let i = 0; i < 10; i++) await createKey(c, `k${i}`);
    const page = await c.get('/account/keys');
    expect(page.body).toContain('the most an account may hold (10)');
    const refused = await c.post('/account/keys', { label: 'eleventh' });
    expect(refused.status).toBe(409);
  });

  it('a password reset by email sets the new password and signs out every session', async () => {
    const email = freshEmail();
    const a = await signedIn(email);
    const b = new PageClient(server.url);
    await b.get('/account/forgot');
    const asked = await b.post('/account/forgot', { email });
    expect(asked.status).toBe(200);
    const link = await lastLink(email, '/account/reset');
    const form = await b.get(link);
    expect(form.status).toBe(200);
    const token = new URL(server.url + link).searchParams.get('token') as string;
    expect((await b.post('/account/reset', { token, password: 'a whole new password' })).status).toBe(303);
    // The session begun before the change is over.
    expect((await a.get('/account')).status).toBe(303);
    expect((await b.post('/account/reset', { token, password: 'yet another password' })).status).toBe(400);
    await b.get('/account/login');
    expect((await b.post('/account/login', { email, password: PASSWORD })).status).toBe(401);
    expect((await b.post('/account/login', { email, password: 'a whole new password' })).status).toBe(303);
  });
});

describe('security rules', () => {
  it('one address is sent at most 5 emails an hour, whoever asks: the 6th reset answers the same page and sends nothing', async () => {
    const email = freshEmail();
    await signedIn(email); // its verification link is the 1st email
    for (let i = 0; i < 6; i++) {
      // A new client each time: the budget is the address's, not the client's.
      const c = new PageClient(server.url, `127.0.1.${10 + i}`);
      await c.get('/account/forgot');
      const r = await c.post('/account/forgot', { email });
      expect(r.status).toBe(200);
      expect(r.body).toContain('we sent it a link to set a new password');
    }
    await waitFor(
      () =>
        mailedLinks(server.logs(), email).filter((l) => new URL(l).pathname === '/account/reset').length >= 4,
      10_000,
      `four reset emails to ${email}`,
      server.logs,
    );
    // Whatever the sixth would have sent is sent by now, two turns after its answer.
    await new Promise((r) => setTimeout(r, 500));
    const resets = mailedLinks(server.logs(), email).filter((l) => new URL(l).pathname === '/account/reset');
    expect(resets).toHaveLength(4);
  });

  it('every page is sent with a strict CSP, X-Frame-Options DENY, nosniff and Cache-Control no-store', async () => {
    const c = await signedIn();
    const anonymous = new PageClient(server.url);
    for (const [who, path] of [
      [anonymous, '/account/login'],
      [anonymous, '/account/signup'],
      [anonymous, '/account/forgot'],
      [c, '/account'],
      [c, '/account/keys'],
      [c, '/account/usage'],
      [c, '/account/plans'],
    ] as const) {
      const r = await who.get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-security-policy'), path).toMatch(/^default-src 'self';/);
      expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(r.headers.get('x-frame-options'), path).toBe('DENY');
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(r.headers.get('cache-control'), path).toBe('no-store');
    }
    const key = await c.post('/account/keys', { label: 'secret page' });
    expect(key.headers.get('cache-control')).toBe('no-store');
  });

  it('a malformed path, an unknown page or another method gets a plain answer, never a 500', async () => {
    const c = await signedIn();
    await c.get('/account/keys');
    expect((await c.post('/account/keys/%E0%A4%A/revoke', {})).status).toBe(404);
    expect((await c.get('/account/nowhere')).status).toBe(404);
    expect((await c.get('/account/keys/key_000000000000/revoke')).status).toBe(405);
    expect((await fetch(`${server.url}/account/login`, { method: 'HEAD' })).status).toBe(200);
    const json = await fetch(`${server.url}/account/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: '{}',
    });
    expect(json.status).toBe(415);
  });

  it('cookies are HttpOnly and SameSite=Lax, not Secure on an http base URL', async () => {
    const c = new PageClient(server.url);
    const page = await c.get('/account/login');
    const csrf = page.setCookies.find((l) => l.startsWith('fr_csrf=')) as string;
    expect(csrf).toMatch(/; HttpOnly/);
    expect(csrf).toMatch(/; SameSite=Lax/);
    expect(csrf).not.toMatch(/Secure/);
    const email = freshEmail();
    await c.get('/account/signup');
    await c.post('/account/signup', { email, password: PASSWORD });
    await lastLink(email, '/account/verify');
    await c.get('/account/login');
    const l = await c.post('/account/login', { email, password: PASSWORD });
    const session = l.setCookies.find((x) => x.startsWith('fr_session=')) as string;
    expect(session).toMatch(/^fr_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax/);
  });

  it('a form without the token, with a wrong one, or from another origin is refused (403) and changes nothing', async () => {
    const c = await signedIn();
    await c.get('/account/keys');
    const before = (await c.get('/account/keys')).body.match(/<tr>/g)?.length ?? 0;
    expect((await c.post('/account/keys', { label: 'a' }, { csrf: null })).status).toBe(403);
    expect((await c.post('/account/keys', { label: 'b' }, { csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await c.post('/account/keys', { label: 'c' }, { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect((await c.post('/account/keys', { label: 'd' }, { origin: null })).status).toBe(403);
    const after = (await c.get('/account/keys')).body.match(/<tr>/g)?.length ?? 0;
    expect(after).toBe(before);
    // The sign-in form too: no token, no sign-in.
    const d = new PageClient(server.url);
    expect(
      (await d.post('/account/login', { email: freshEmail(), password: PASSWORD }, { csrf: null })).status,
    ).toBe(403);
  });

  it('a session id planted before sign-in is not the one after it, and is worthless (session fixation)', async () => {
    const email = freshEmail();
    const c = new PageClient(server.url);
    await c.get('/account/signup');
    await c.post('/account/signup', { email, password: PASSWORD });
    await c.get(await lastLink(email, '/account/verify'));
    const planted = 'A'.repeat(43);
    c.cookies.set('fr_session', planted);
    await c.get('/account/login');
    await c.post('/account/login', { email, password: PASSWORD });
    expect(c.cookies.get('fr_session')).not.toBe(planted);
    expect((await c.get('/account')).status).toBe(200);
    const attacker = new PageClient(server.url);
    attacker.cookies.set('fr_session', planted);
    expect((await attacker.get('/account')).status).toBe(303);
  });

  it('sign-out ends the session on the server, not only in the browser', async () => {
    const c = await signedIn();
    const id = c.cookies.get('fr_session') as string;
    await c.get('/account');
    expect((await c.post('/account/logout', {})).status).toBe(303);
    const replay = new PageClient(server.url);
    replay.cookies.set('fr_session', id);
    expect((await replay.get('/account')).status).toBe(303);
  });

  it('sign-in is throttled per address: the 11th attempt in 15 minutes is a 429, even with the right password', async () => {
    const email = freshEmail();
    await signedIn(email);
    const c = new PageClient(server.url);
    await c.get('/account/login');
    for (let i = 0; i < 9; i++)
      expect((await c.post('/account/login', { email, password: 'wrong password!' })).status).toBe(401);
    const r = await c.post('/account/login', { email, password: PASSWORD });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('sign-up, sign-in and reset answer the same whether the address has an account or not', async () => {
    const known = freshEmail();
    await signedIn(known);
    const unknown = freshEmail();
    const c = new PageClient(server.url);
    await c.get('/account/signup');
    const a = await c.post('/account/signup', { email: known, password: PASSWORD });
    const b = await c.post('/account/signup', { email: unknown, password: PASSWORD });
    expect(a.status).toBe(b.status);
    expect(a.body.replace(known, 'X')).toBe(b.body.replace(unknown, 'X'));
    await c.get('/account/login');
    const wrong = await c.post('/account/login', { email: known, password: 'not the password' });
    const nobody = await c.post('/account/login', { email: freshEmail(), password: 'not the password' });
    expect(wrong.status).toBe(nobody.status);
    expect(wrong.body.replace(/value="[^"]*@example\.test"/, '')).toBe(
      nobody.body.replace(/value="[^"]*@example\.test"/, ''),
    );
    await c.get('/account/forgot');
    const f1 = await c.post('/account/forgot', { email: known });
    const f2 = await c.post('/account/forgot', { email: freshEmail() });
    expect(f1.status).toBe(f2.status);
    expect(f1.body.replace(/[^\s>]+@example\.test/g, 'X')).toBe(
      f2.body.replace(/[^\s>]+@example\.test/g, 'X'),
    );
  });

  it('what a person types is shown as text: a label or an address of <script> runs nothing', async () => {
    const c = await signedIn();
    await createKey(c, '<script>alert(1)</script>');
    const page = await c.get('/account/keys');
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const s = new PageClient(server.url);
    await s.get('/account/signup');
    const bad = await s.post('/account/signup', { email: '"><script>x()</script>', password: PASSWORD });
    expect(bad.status).toBe(422);
    expect(bad.body).not.toContain('<script>x()</script>');
  });

  it('a disabled person is signed out at once and cannot sign in', async () => {
    const email = freshEmail();
    const c = await signedIn(email);
    const r = cli(['users', 'disable', email, '--store', access.store]);
    expect(r.status, r.stderr).toBe(0);
    await waitFor(async () => (await c.get('/account')).status === 303, 3000, 'the session ended');
    await c.get('/account/login');
    expect((await c.post('/account/login', { email, password: PASSWORD })).status).toBe(401);
  });

  it('the admin view is for admins: 403 for a person, and a new session id when the role changes', async () => {
    const email = freshEmail();
    const c = await signedIn(email);
    expect((await c.get('/admin')).status).toBe(403);
    const before = c.cookies.get('fr_session');
    expect(cli(['users', 'admin', email, '--store', access.store]).status).toBe(0);
    await waitFor(async () => (await c.get('/admin')).status === 200, 3000, 'the admin view open');
    expect(c.cookies.get('fr_session')).not.toBe(before);
  });
});

describe('plans', () => {
  it('a person asks for Pro, an admin approves in the admin view, and the key at once carries Pro limits', async () => {
    const c = await signedIn();
    const key = await createKey(c, 'plan test');
    const policy = async () => (await v1(key)).headers.get('ratelimit-policy') ?? '';
    expect(await policy()).toMatch(/^"burst";q=100;w=60, "quota";q=250;/);
    await c.get('/account/plans');
    expect((await c.post('/account/plans', { plan: 'pro' })).status).toBe(303);
    expect((await c.get('/account/plans')).body).toContain('Requested');

    const adminEmail = freshEmail();
    const admin = await signedIn(adminEmail);
    expect(cli(['users', 'admin', adminEmail, '--store', access.store]).status).toBe(0);
    let queue = await admin.get('/admin/requests');
    await waitFor(
      async () => {
        queue = await admin.get('/admin/requests');
        return queue.status === 200;
      },
      3000,
      'the admin view',
    );
    const id = (
      /action="\/admin\/requests\/(req_[0-9a-f]{12})\/approve"/.exec(queue.body) as RegExpExecArray
    )[1];
    expect((await admin.post(`/admin/requests/${id}/approve`, {})).status).toBe(303);
    await waitFor(
      async () => /^"burst";q=250;w=60, "quota";q=2500;/.test(await policy()),
      3000,
      'Pro limits on the key',
    );
    const audit = await admin.get('/admin/audit');
    expect(audit.body).toContain(adminEmail);
    expect(audit.body).toContain(id);
  });
});

describe('the admin view', () => {
  it('finds an account by its owner, changes its plan and status, disables its owner: each at once and in the audit log', async () => {
    const email = freshEmail();
    const person = await signedIn(email);
    const key = await createKey(person, 'watched');
    const adminEmail = freshEmail();
    const admin = await signedIn(adminEmail);
    expect(cli(['users', 'admin', adminEmail, '--store', access.store]).status).toBe(0);
    let found = await admin.get(`/admin?q=${encodeURIComponent(email)}`);
    await waitFor(
      async () => {
        found = await admin.get(`/admin?q=${encodeURIComponent(email)}`);
        return found.status === 200;
      },
      3000,
      'the admin view',
    );
    expect(found.body).toContain('1 account');
    const id = (/href="\/admin\/accounts\/(acct_[0-9a-f]{12})"/.exec(found.body) as RegExpExecArray)[1];
    const page = await admin.get(`/admin/accounts/${id}`);
    expect(page.body).toContain(email);

    expect((await admin.post(`/admin/accounts/${id}/plan`, { plan: 'developer' })).status).toBe(303);
    await waitFor(
      async () => /"quota";q=1000;/.test((await v1(key)).headers.get('ratelimit-policy') ?? ''),
      3000,
      'Developer limits on the key',
    );
    expect((await admin.post(`/admin/accounts/${id}/status`, { status: 'canceled' })).status).toBe(303);
    await waitFor(async () => (await v1(key)).status === 403, 3000, 'the canceled account refused (403)');
    expect((await admin.post(`/admin/accounts/${id}/plan`, { plan: 'platinum' })).status).toBe(422);

    const owner = (
      /action="\/admin\/people\/(user_[0-9a-f]{12})\/status"/.exec(page.body) as RegExpExecArray
    )[1];
    expect((await admin.post(`/admin/people/${owner}/status`, { status: 'disabled' })).status).toBe(303);
    await waitFor(
      async () => (await person.get('/account')).status === 303,
      3000,
      "the owner's session ended",
    );

    const audit = await admin.get('/admin/audit');
    for (const action of ['account.plan', 'account.status', 'person.disable'])
      expect(audit.body).toContain(action);
    expect(audit.body).toContain(adminEmail);
    // A person cannot reach any of it.
    const other = await signedIn();
    expect((await other.get(`/admin/accounts/${id}`)).status).toBe(403);
  });
});

/** A signed-in person made an admin by the command line, once the server has seen the change. */
async function signedInAdmin(): Promise<PageClient> {
  const email = freshEmail();
  const admin = await signedIn(email);
  expect(cli(['users', 'admin', email, '--store', access.store]).status).toBe(0);
  await waitFor(async () => (await admin.get('/admin')).status === 200, 3000, 'the admin view');
  return admin;
}

describe('what an outside security audit found', () => {
  it('a flood of wrong sign-ins past what the hashing threads take is answered 503 with Retry-After at once; pages and /v1 answer meanwhile', async () => {
    const c = await signedIn();
    // Eight clients (127.0.0.2-9), five sign-ins each, all at once: within every per-client limit.
    const flooders = Array.from({ length: 8 }, (_, i) => new PageClient(server.url, `127.0.0.${2 + i}`));
    for (const f of flooders) await f.get('/account/login');
    const attempts = flooders.flatMap((f, i) =>
      Array.from({ length: 5 }, (_, j) =>
        f.post('/account/login', {
          email: `flood${i}-${j}.${process.pid}@example.test`,
          password: 'wrong password',
        }),
      ),
    );
    const [page, data] = [
      await c.get('/account/keys'),
      await fetch(`${server.url}/v1/funds?limit=1`, { headers: access.headers }),
    ];
    const answers = await Promise.all(attempts);
    expect(page.status).toBe(200);
    expect(data.status).toBe(200);
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.every((x) => x === 401 || x === 503),
      statuses.join(' '),
    ).toBe(true);
    // Two serving threads, each one hash at a time and eight waiting: most of forty are told to come back.
    expect(statuses.filter((x) => x === 503).length).toBeGreaterThanOrEqual(40 - 2 * 9);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(a.body).toContain('send the form again');
    }
  });

  it('a password reset ends every other reset link of the person: the second of two links fails once the first set a password', async () => {
    const email = freshEmail();
    await signedIn(email);
    const b = new PageClient(server.url);
    await b.get('/account/forgot');
    const resets = () =>
      mailedLinks(server.logs(), email).filter((l) => new URL(l).pathname === '/account/reset');
    await b.post('/account/forgot', { email });
    await waitFor(() => resets().length === 1, 10_000, 'the first link');
    await b.post('/account/forgot', { email });
    await waitFor(() => resets().length === 2, 10_000, 'the second link');
    const [first, second] = resets().map((l) => new URL(l).searchParams.get('token') as string);
    expect((await b.get(`/account/reset?token=${encodeURIComponent(second)}`)).status).toBe(200);
    expect((await b.get(`/account/reset?token=${encodeURIComponent(first)}`)).status).toBe(200);
    expect(
      (await b.post('/account/reset', { token: first, password: 'the first new password' })).status,
    ).toBe(303);
    expect((await b.get(`/account/reset?token=${encodeURIComponent(second)}`)).status).toBe(400);
    await b.get('/account/forgot');
    expect((await b.post('/account/reset', { token: second, password: 'a password set later' })).status).toBe(
      400,
    );
    await b.get('/account/login');
    expect((await b.post('/account/login', { email, password: 'the first new password' })).status).toBe(303);
  });

  it('sign-up refuses an address with an invisible, bidi or control character, saying which, after Unicode normalization', async () => {
    const c = new PageClient(server.url);
    await c.get('/account/signup');
    for (const [typed, named] of [
      [`admin\u200b.${process.pid}@example.test`, 'U+200B ZERO WIDTH SPACE'],
      [`ad\u202emin.${process.pid}@example.test`, 'U+202E RIGHT-TO-LEFT OVERRIDE'],
      [`ad\u00admin.${process.pid}@example.test`, 'U+00AD SOFT HYPHEN'],
      [`ad\u2066min.${process.pid}@example.test`, 'U+2066 LEFT-TO-RIGHT ISOLATE'],
      [`admin\u0007.${process.pid}@example.test`, 'U+0007 (a control character)'],
    ]) {
      const r = await c.post('/account/signup', { email: typed, password: PASSWORD });
      expect(r.status, typed).toBe(422);
      expect(r.body, typed).toContain(named);
      expect(r.body, typed).not.toContain(typed);
    }
    // Normalized first: full-width letters are the address they look like.
    const wide = `\uff41\uff44min.${process.pid}@example.test`;
    expect((await c.post('/account/signup', { email: wide, password: PASSWORD })).status).toBe(200);
    await lastLink(`admin.${process.pid}@example.test`, '/account/verify');
  });

  it('admin pages, the person’s pages and CLI listings show invisible and bidi characters escaped, by one rule (core/escape.ts)', async () => {
    // An address stored before sign-up refused them, its key labelled with a zero-width
    // space and a right-to-left override, and a plan request.
    const email = `eve\u200b.${process.pid}@example.test`;
    const label = 'pay\u202egpj.exe\u200b';
    const store = await openStore(access.store);
    const { person, account } = await createPerson(
      store,
      { email, passwordHash: await hashPassword(PASSWORD, threadPoolHasher) },
      testNow(),
    );
    await issueKey(store, account, label, testNow());
    await requestPlan(store, { account_id: account.id, plan: 'pro', person_id: person.id }, testNow());
    await store.close();
    const shownEmail = `eve\\u200b.${process.pid}@example.test`;
    const shownLabel = 'pay\\u202egpj.exe\\u200b';
    const admin = await signedInAdmin();
    for (const path of ['/admin', `/admin?q=eve`, `/admin/accounts/${account.id}`, '/admin/requests']) {
      let page = await admin.get(path);
      await waitFor(
        async () => {
          page = await admin.get(path);
          return page.body.includes(shownEmail);
        },
        3000,
        path,
        () => page.body,
      );
      expect(page.body, path).not.toMatch(/[\u200b\u202e]/);
    }
    const eve = new PageClient(server.url);
    await eve.get('/account/login');
    expect((await eve.post('/account/login', { email, password: PASSWORD })).status).toBe(303);
    const keys = await eve.get('/account/keys');
    expect(keys.body).toContain(shownLabel);
    expect(keys.body).not.toMatch(/[\u200b\u202e]/);
    for (const args of [
      ['users', 'list'],
      ['users', 'show', person.id],
      ['accounts', 'list'],
      ['accounts', 'requests'],
      ['keys', 'list', account.name],
    ]) {
      const r = cli([...args, '--store', access.store]);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toContain(args[0] === 'keys' ? shownLabel : shownEmail);
      expect(r.stdout, args.join(' ')).not.toMatch(/[\u200b\u202e]/);
    }
  });

  it('a form with two Content-Length values or a Transfer-Encoding not ending in chunked is refused 400 and its connection closed; with Content-Length and Transfer-Encoding it is closed unanswered (docs/api.md)', async () => {
    const form = 'email=a%40b.c&password=x';
    const head = (framing: string) =>
      `POST /account/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n${framing}\r\n`;
    const hidden = 'GET /account/login HTTP/1.1\r\nHost: x\r\n\r\n';
    const chunked = `${form.length.toString(16)}\r\n${form}\r\n0\r\n\r\n`;
    const exchange = async (text: string) => {
      const conn = await rawConnection(server.port);
      conn.write(text);
      await waitFor(() => conn.closed(), 3000, 'the close');
      conn.close();
      return conn.received().match(/HTTP\/1\.1 \d{3}/g) ?? [];
    };
    expect(await exchange(`${head('Content-Length: 5\r\nContent-Length: 7\r\n')}email`)).toEqual([
      'HTTP/1.1 400',
    ]);
    expect(await exchange(`${head('Transfer-Encoding: xchunked\r\n')}${chunked}`)).toEqual(['HTTP/1.1 400']);
    expect(await exchange(`${head('Transfer-Encoding: gzip, chunked\r\n')}${chunked}`)).toEqual([
      'HTTP/1.1 501',
    ]);
    // The smuggling shapes: nothing answered, nothing behind them run.
    expect(
      await exchange(
        `${head(`Content-Length: ${form.length}\r\nTransfer-Encoding: chunked\r\n`)}${chunked}${hidden}`,
      ),
    ).toEqual([]);
    expect(
      await exchange(
        `${head(`Content-Length: 5\r\nContent-Length: ${5 + hidden.length}\r\n`)}email${hidden}`,
      ),
    ).toEqual([]);
  });
});

describe('several servers on one Redis', () => {
  let redis: RedisServer | undefined;
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await redis?.stop();
  });

  it('a person signed in on one server is signed in on the other; a sign-out on either ends it on both', async () => {
    redis = await startRedis();
    const dir = tempDir('fr-dashboard-redis-');
    const { snapshots } = generateAndBuild(dir, 10);
    for (let i = 0; i < 2; i++)
      servers.push(await startServe(['--store', redis.url, '--snapshots', snapshots, '--threads', '1']));
    const [a, b] = servers;
    const email = freshEmail();
    const c = new PageClient(a.url);
    await c.get('/account/signup');
    expect((await c.post('/account/signup', { email, password: PASSWORD })).status).toBe(200);
    let link = '';
    await waitFor(() => {
      link = mailedLinks(a.logs(), email)[0] ?? '';
      return link !== '';
    });
    // The link is followed on the other server: tokens live in Redis too.
    const onB = new PageClient(b.url);
    const u = new URL(link);
    expect((await onB.get(u.pathname + u.search)).status).toBe(303);
    await c.get('/account/login');
    expect((await c.post('/account/login', { email, password: PASSWORD })).status).toBe(303);
    for (const [k, v] of c.cookies) onB.cookies.set(k, v);
    const page = await onB.get('/account');
    expect(page.status).toBe(200);
    expect(page.body).toContain(email);
    expect((await onB.post('/account/logout', {})).status).toBe(303);
    expect((await c.get('/account')).status).toBe(303);
  });
});

describe('throttles over a sliding window: a boundary does not double a budget', () => {
  const WINDOW_MS = 15 * 60_000;
  /** A 15-minute boundary of the clocked server's clock, 30 s after it starts. */
  const boundary = Date.parse(E2E_START) + WINDOW_MS;
  let anchor = 0;
  let clocked: ServerProcess;
  const clockNow = () => boundary - 30_000 + (Date.now() - anchor);
  const until = async (t: number) => {
    while (clockNow() < t) await new Promise((r) => setTimeout(r, Math.min(500, t - clockNow())));
  };

  beforeAll(async () => {
    const dir = tempDir('fr-dashboard-window-');
    const { snapshots } = generateAndBuild(dir, 10);
    const a = setupAccess(dir);
    anchor = Date.now();
    clocked = await startServe([...a.flags, '--snapshots', snapshots, '--threads', '1'], {
      FUNDRETURNS_TEST_CLOCK: `${new Date(boundary - 30_000).toISOString()}@${anchor}`,
    });
  }, 120_000);

  afterAll(async () => {
    await clocked?.stop();
  });

  it('ten wrong passwords for one address just before a 15-minute boundary and ten just after: the ten after are refused (429) with the wait until the first leaves the window', async () => {
    if (clockNow() > boundary - 12_000)
      throw new Error('the server took over 18 s to start: the boundary is too near');
    await until(boundary - 10_000);
    const email = freshEmail();
    const c = new PageClient(clocked.url);
    await c.get('/account/login');
    for (let i = 0; i < 10; i++)
      expect((await c.post('/account/login', { email, password: 'wrong password' })).status).toBe(401);
    if (clockNow() >= boundary)
      throw new Error('ten sign-ins took over 10 s: they did not all fall before the boundary');
    await until(boundary + 500);
    for (let i = 0; i < 10; i++) {
      const r = await c.post('/account/login', { email, password: 'wrong password' });
      expect(r.status, `attempt ${11 + i}, after the boundary`).toBe(429);
      // The first of the ten leaves the window 15 minutes after it was made: 14 and a bit from now.
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    }
  }, 60_000);
});
