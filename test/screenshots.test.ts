/**
 * scripts/screenshots.ts, run as a person runs it (`tsx`), against the real server: its
 * public pages, and the dashboard behind a sign-in as a person an operator made.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserForTest } from './browser.js';
import {
  cli,
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

describe.runIf(RUN)('scripts/screenshots.ts', () => {
  let dir: string;
  let serve: ServerProcess;
  let noDashboard: ServerProcess;
  let standInUrl: string;

  beforeAll(async () => {
    dir = tempDir('screenshots');
    const { snapshots } = generateAndBuild(dir, 40);
    const access = setupAccess(dir);
    // A person (not an admin: /admin is refused) made by the operator, verified.
    const pw = join(dir, 'password');
    writeFileSync(pw, 'correct horse battery\n', { mode: 0o600 });
    const made = cli(['users', 'create', 'ada@example.com', '--password-file', pw, '--store', access.store]);
    if (made.status !== 0) throw new Error(made.stderr);
    serve = await startServe(['--snapshots', snapshots, ...access.flags, '--threads', '1']);
    standInUrl = serve.url;
    // One server per embedded store: the second has its own.
    const other = setupAccess(join(dir, 'other'));
    noDashboard = await startServe([
      '--snapshots',
      snapshots,
      ...other.flags,
      '--threads',
      '1',
      '--dashboard',
      'off',
    ]);
  });

  afterAll(async () => {
    await serve?.stop();
    await noDashboard?.stop();
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
      `screenshots: could not sign in at ${standInUrl}/account/login: still on /account/login after signing in: That email and password do not match an account.`,
    );
    expect(r.status).toBe(1);
  });

  it('a server with no login page (--dashboard off): the run says so instead of taking the wrong pages', async () => {
    const r = await runScript([
      '--base-url',
      noDashboard.url,
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
