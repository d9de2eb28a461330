/**
 * The dashboard in a real browser: Debian's Chromium driven by
 * playwright-core, a real SMTP server in the test receiving the emails. A person who
 * never met the operator signs up, verifies, makes a key, uses the API, watches the
 * usage page count it, rotates and revokes; asks for Pro, and an operator approves it
 * in the admin view. Every page is watched for console errors, failed loads and CSP
 * violations.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserForTest, launchBrowser, type TestBrowser, type WatchedPage } from './browser.js';
import {
  cli,
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  startServe,
  tempDir,
  waitFor,
} from './harness.js';
import { type SmtpCapture, smtpUrl, startSmtp } from './smtp.js';

const run = browserForTest();
const PASSWORD = 'a long enough password';
const SMTP_AUTH = { user: 'mailer', pass: 's3cret pass' };

describe.skipIf(!run)('the dashboard in a browser', () => {
  let smtp: SmtpCapture;
  let server: ServerProcess;
  let browser: TestBrowser;
  let store: string;
  const adminEmail = 'ops@example.test';
  const pages: WatchedPage[] = [];

  beforeAll(async () => {
    const dir = tempDir('fr-dashboard-browser-');
    const { snapshots } = generateAndBuild(dir, 20);
    const access = setupAccess(dir);
    store = access.store;
    const pw = join(dir, 'admin-password');
    writeFileSync(pw, `${PASSWORD}\n`, { mode: 0o600 });
    const made = cli(['users', 'create', adminEmail, '--admin', '--password-file', pw, '--store', store]);
    if (made.status !== 0) throw new Error(made.stderr);
    smtp = await startSmtp({ auth: SMTP_AUTH });
    server = await startServe([
      ...access.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '2',
      '--smtp-url',
      smtpUrl(smtp, SMTP_AUTH),
      '--mail-from',
      'Fund Returns <no-reply@example.test>',
    ]);
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.close();
  });

  async function open(): Promise<Page> {
    const w = await browser.open({ permissions: ['clipboard-read', 'clipboard-write'] });
    pages.push(w);
    return w.page;
  }

  const v1 = (key: string) =>
    fetch(`${server.url}/v1/funds?limit=1`, { headers: { authorization: `Bearer ${key}` } });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${server.url}/account/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/account$/);
  }

  async function newKey(page: Page, label: string): Promise<string> {
    await page.goto(`${server.url}/account/keys`);
    await page.getByLabel('Label').fill(label);
    await page.getByRole('button', { name: 'Create key' }).click();
    return ((await page.locator('#new-key').textContent()) ?? '').trim();
  }

  it('sign up → email → verify → key → /v1 → usage → rotate → revoke → 401; Pro asked, approved by an admin, applied', async () => {
    const email = 'new.person@example.test';
    const page = await open();
    // Found from the home page, as a newcomer would.
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Your account' }).click();
    await page.getByRole('link', { name: 'Create an account' }).first().click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();

    const mail = await smtp.waitFor(
      (m) => m.to !== undefined && JSON.stringify(m.to).includes(email),
      15_000,
    );
    expect(mail.subject).toMatch(/Confirm your email/);
    expect(smtp.logins).toContain(SMTP_AUTH.user);
    const link = (/https?:\/\/\S+\/account\/verify\?token=[A-Za-z0-9_%-]+/.exec(mail.text ?? '') ?? [''])[0];
    expect(link).not.toBe('');
    await page.goto(link);
    await page.getByText('Your email address is verified').waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();

    // A key, shown once, with a copy button that works where scripts run.
    const key = await newKey(page, 'first key');
    expect(key).toMatch(/^fr_live_[A-Za-z0-9_-]{32}$/);
    await page.getByRole('button', { name: 'Copy to clipboard' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

    for (let i = 0; i < 7; i++) expect((await v1(key)).status).toBe(200);
    // The usage page counts them (flushed within a few seconds), in its chart and table.
    let usage = '';
    await waitFor(
      async () => {
        await page.goto(`${server.url}/account/usage`);
        usage = await page.content();
        // The table's newest row: today, 7 admitted, none refused.
        return /<tr><td>\d{4}-\d{2}-\d{2}<\/td><td>7<\/td><td>0<\/td><\/tr>/.test(usage);
      },
      15_000,
      'the usage page showing 7 requests',
      () => usage,
    );
    expect(await page.locator('figure.chart svg rect').count()).toBeGreaterThan(0);
    await page.getByText(/7 of 250 requests used/).waitFor();

    // Rotate with no grace: the old key stops, the new one works.
    await page.goto(`${server.url}/account/keys`);
    await page.getByLabel('Old key').selectOption('0');
    await page.getByRole('button', { name: 'Rotate' }).click();
    const rotated = ((await page.locator('#new-key').textContent()) ?? '').trim();
    expect(rotated).not.toBe(key);
    await waitFor(async () => (await v1(key)).status === 401, 3000, 'the old key refused');
    expect((await v1(rotated)).status).toBe(200);

    // Ask for Pro; an operator approves it in the admin view; the key at once carries Pro's limits.
    await page.goto(`${server.url}/account/plans`);
    await page.getByRole('button', { name: 'Ask for pro' }).click();
    await page.getByText('Your request is sent').waitFor();
    const admin = await open();
    await signIn(admin, adminEmail);
    await admin.getByRole('link', { name: 'Admin' }).click();
    await admin
      .getByRole('link', { name: /plan request/ })
      .first()
      .click();
    await admin.getByRole('button', { name: /^Approve pro for / }).click();
    await admin.getByText('The request is approved').waitFor();
    await waitFor(
      async () => /"quota";q=2500;/.test((await v1(rotated)).headers.get('ratelimit-policy') ?? ''),
      3000,
      'Pro limits on the key',
    );
    await admin.goto(`${server.url}/admin/audit`);
    await admin.getByText('request.approve').first().waitFor();

    // Revoke: 401 within a second.
    await page.goto(`${server.url}/account/keys`);
    await page
      .getByRole('button', { name: /^Revoke key / })
      .first()
      .click();
    await page.getByText('The key is revoked').waitFor();
    await waitFor(async () => (await v1(rotated)).status === 401, 1500, 'the revoked key refused');

    for (const w of pages) expect(w.problems, 'console errors, failed loads or CSP violations').toEqual([]);
  }, 180_000);

  it('every flow works with JavaScript off', async () => {
    const w = await browser.open({ javaScriptEnabled: false });
    const page = w.page;
    await signIn(page, adminEmail);
    await page.goto(`${server.url}/account/keys`);
    await page.getByLabel('Label').fill('no script');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = ((await page.locator('#new-key').textContent()) ?? '').trim();
    expect((await v1(key)).status).toBe(200);
    // Without scripts the copy button stays hidden; the key is there to select.
    expect(await page.getByRole('button', { name: 'Copy to clipboard' }).isHidden()).toBe(true);
    await page.goto(`${server.url}/account/keys`);
    await page.getByRole('button', { name: 'Revoke key no script' }).click();
    await page.getByText('The key is revoked').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out').waitFor();
    expect(w.problems).toEqual([]);
  }, 120_000);
});
