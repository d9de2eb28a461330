/**
 * scripts/screenshots.ts, run as a person runs it (`tsx`), against the real server's
 * public pages and against a stand-in for the dashboard that follows the contract the
 * script is written to: a login form at /account/login with fields `email` and
 * `password` and a submit button, a session cookie, and the pages behind it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserForTest } from './browser.js';
import {
  generateAndBuild,
  ROOT,
  type ServerProcess,
  setupAccess,
  startServe,
  tempDir,
  testEnv,
} from './harness.js';
import { track } from './processes.js';

const RUN = browserForTest();

function runScript(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = track(
      execFile(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'scripts', 'screenshots.ts'), ...args],
        {
          cwd: ROOT,
          env: testEnv({ FUNDRETURNS_DEMO_EMAIL: '', FUNDRETURNS_DEMO_PASSWORD: '', ...env }),
          // SIGTERM, on which Playwright closes its browser (SIGKILL would orphan
          // Chromium); test/setup.ts's SIGKILL follows if even that hangs.
          timeout: 90_000,
          killSignal: 'SIGTERM',
        },
        (_err, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }),
      ),
      'scripts/screenshots.ts',
    );
  });
}

function pngWidth(file: string): number {
  const b = readFileSync(file);
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  return b.readUInt32BE(16);
}

const PAGE = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

/**
 * The dashboard as the script expects it: sign-in sets a cookie, pages behind it send
 * a visitor without one to the form; /admin refuses this person (403).
 */
function standInDashboard(email: string, password: string): { server: Server; logins: string[] } {
  const logins: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const signedIn = (req.headers.cookie ?? '').includes('session=ok');
    const loginForm = (error: string) =>
      PAGE(
        'Sign in',
        `${error === '' ? '' : `<p role="alert">${error}</p>`}<form method="post" action="/account/login">` +
          '<label>Email <input name="email" type="email"></label>' +
          '<label>Password <input name="password" type="password"></label>' +
          '<button type="submit">Sign in</button></form>',
      );
    if (url.pathname === '/account/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        logins.push(`${form.get('email')}:${form.get('password')}`);
        if (form.get('email') === email && form.get('password') === password) {
          res.writeHead(303, {
            location: '/account',
            'set-cookie': 'session=ok; HttpOnly; SameSite=Lax; Path=/',
          });
          return res.end();
        }
        res.writeHead(200, { 'content-type': 'text/html' }).end(loginForm('Wrong email or password.'));
      });
      return;
    }
    if (url.pathname === '/account/login')
      return res.writeHead(200, { 'content-type': 'text/html' }).end(loginForm(''));
    if (!signedIn) return res.writeHead(303, { location: '/account/login' }).end();
    if (url.pathname === '/admin')
      return res.writeHead(403, { 'content-type': 'text/html' }).end(PAGE('No', 'No.'));
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE(url.pathname, `<h1>${url.pathname}</h1>`));
  });
  return { server, logins };
}

describe.runIf(RUN)('scripts/screenshots.ts (issue 22)', () => {
  let dir: string;
  let serve: ServerProcess;
  let standIn: { server: Server; logins: string[] };
  let standInUrl: string;

  beforeAll(async () => {
    dir = tempDir('screenshots');
    const { snapshots } = generateAndBuild(dir, 40);
    serve = await startServe(['--snapshots', snapshots, ...setupAccess(dir).flags, '--threads', '1']);
    standIn = standInDashboard('ada@example.com', 'correct horse battery');
    await new Promise<void>((r) => standIn.server.listen(0, '127.0.0.1', r));
    standInUrl = `http://127.0.0.1:${(standIn.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await serve?.stop();
    await new Promise((r) => standIn?.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('--paths /,/docs against the real server: home.png and docs.png, 1200 px wide, exit 0', async () => {
    const out = join(dir, 'public');
    const r = await runScript(['--base-url', serve.url, '--out', out, '--paths', '/,/docs']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(pngWidth(join(out, 'home.png'))).toBe(1200);
    expect(pngWidth(join(out, 'docs.png'))).toBe(1200);
    expect(r.stdout).not.toMatch(/signed in/); // no credentials, no sign-in
  });

  it('signs in with FUNDRETURNS_DEMO_EMAIL/PASSWORD, takes every default page, and names the one that failed', async () => {
    const out = join(dir, 'dashboard');
    const r = await runScript(['--base-url', standInUrl, '--out', out], {
      FUNDRETURNS_DEMO_EMAIL: 'ada@example.com',
      FUNDRETURNS_DEMO_PASSWORD: 'correct horse battery',
    });
    expect(standIn.logins).toContain('ada@example.com:correct horse battery');
    expect(r.stdout).toContain('signed in as ada@example.com');
    for (const f of ['account', 'account-keys', 'account-usage', 'account-plans'])
      expect(pngWidth(join(out, `${f}.png`)), f).toBe(1200);
    expect(existsSync(join(out, 'admin.png'))).toBe(false);
    expect(r.stderr).toContain('screenshots: /admin failed: answered 403');
    expect(r.stderr).toContain('screenshots: 1 of 5 failed: /admin');
    expect(r.status).toBe(1);
  });

  it('a refused sign-in stops the run with what the form said', async () => {
    const r = await runScript([
      '--base-url',
      standInUrl,
      '--out',
      join(dir, 'refused'),
      '--email',
      'ada@example.com',
      '--password',
      'wrong password',
    ]);
    expect(r.stderr).toContain(
      `screenshots: could not sign in at ${standInUrl}/account/login: still on /account/login after signing in: Wrong email or password.`,
    );
    expect(r.status).toBe(1);
  });

  it('a server with no login page yet: the run says so instead of taking the wrong pages', async () => {
    const r = await runScript([
      '--base-url',
      serve.url,
      '--out',
      join(dir, 'none'),
      '--email',
      'a@b.c',
      '--password',
      'x',
    ]);
    expect(r.stderr).toMatch(
      /could not sign in at http:\/\/127\.0\.0\.1:\d+\/account\/login: \/account\/login answered 40\d/,
    );
    expect(r.status).toBe(1);
  });

  it('bad flags: exit 2 with the usage', async () => {
    const r = await runScript(['--out', join(dir, 'x')]);
    expect(r.stderr).toContain('--base-url must be an http(s) URL');
    expect(r.stderr).toContain('usage: npx tsx scripts/screenshots.ts');
    expect(r.status).toBe(2);
    const half = await runScript(['--base-url', serve.url, '--email', 'a@b.c']);
    expect(half.stderr).toContain('give both an email and a password');
    expect(half.status).toBe(2);
  });
});
