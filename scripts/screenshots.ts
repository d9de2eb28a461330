/**
 * Screenshots of the dashboard's main pages for docs/ and the README, taken from a
 * running server by the same Chromium the browser tests drive (test/chromium.ts):
 *
 *   npx tsx scripts/screenshots.ts --base-url http://127.0.0.1:8080 --out docs/screenshots
 *
 * It signs in at /account/login (fields `email` and `password`, a submit button) with
 * --email/--password or FUNDRETURNS_DEMO_EMAIL/FUNDRETURNS_DEMO_PASSWORD (`make run`
 * prints the demo person), then saves one PNG per page, 1200 px wide and as tall as
 * the page, named after the path (`/account/keys` → account-keys.png, `/` →
 * home.png). A page that fails (an error status, a time-out, a redirect back to the
 * login form) is named on stderr and the others are still taken; the exit status is
 * then 1. Without credentials it does not sign in (for public pages: `--paths /,/docs`).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumEnv, chromiumPath } from '../test/chromium.js';

/** The pages taken by default, in this order (edit freely). */
const PAGES: readonly string[] = ['/account', '/account/keys', '/account/usage', '/account/plans', '/admin'];

const LOGIN_PATH = '/account/login';
const WIDTH = 1200;
const HEIGHT = 800;
const TIMEOUT_MS = 20_000;

const USAGE = `usage: npx tsx scripts/screenshots.ts --base-url URL [--out DIR] [--email E --password P] [--paths /a,/b]
  --base-url URL   the running server (http://127.0.0.1:8080)
  --out DIR        where the PNGs go (docs/screenshots)
  --email, --password
                   who signs in (or FUNDRETURNS_DEMO_EMAIL, FUNDRETURNS_DEMO_PASSWORD);
                   without them, no sign-in
  --paths LIST     comma-separated paths instead of ${PAGES.join(',')}`;

interface Options {
  baseUrl: string;
  out: string;
  email: string | null;
  password: string | null;
  paths: string[];
}

function options(argv: string[], env: NodeJS.ProcessEnv): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      'base-url': { type: 'string' },
      out: { type: 'string', default: 'docs/screenshots' },
      email: { type: 'string' },
      password: { type: 'string' },
      paths: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const baseUrl = values['base-url'];
  if (baseUrl === undefined || !/^https?:\/\//.test(baseUrl))
    throw new Error('--base-url must be an http(s) URL');
  // An empty variable counts as unset (`FUNDRETURNS_DEMO_EMAIL= npx tsx …`).
  const email = values.email ?? (env.FUNDRETURNS_DEMO_EMAIL || null);
  const password = values.password ?? (env.FUNDRETURNS_DEMO_PASSWORD || null);
  if ((email === null) !== (password === null))
    throw new Error(
      'give both an email and a password (flags or FUNDRETURNS_DEMO_EMAIL/PASSWORD), or neither',
    );
  const paths = values.paths === undefined ? [...PAGES] : values.paths.split(',').map((p) => p.trim());
  for (const p of paths)
    if (!p.startsWith('/')) throw new Error(`--paths: ${JSON.stringify(p)} must start with /`);
  return { baseUrl: baseUrl.replace(/\/+$/, ''), out: resolve(values.out), email, password, paths };
}

/** The file a path is saved as: `/account/keys` → account-keys.png, `/` → home.png. */
function fileFor(path: string): string {
  const name = path
    .replace(/[?#].*$/, '')
    .replace(/^\/+|\/+$/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-');
  return `${name === '' ? 'home' : name}.png`;
}

async function signIn(page: Page, o: Options): Promise<void> {
  const url = `${o.baseUrl}${LOGIN_PATH}`;
  const res = await page.goto(url);
  if (res === null || res.status() >= 400)
    throw new Error(`${LOGIN_PATH} answered ${res?.status() ?? 'nothing'}`);
  const form = page.locator('form').filter({ has: page.locator('input[name="password"]') });
  await form.locator('input[name="email"]').fill(o.email!);
  await form.locator('input[name="password"]').fill(o.password!);
  // The answer to the form is a new page either way: the dashboard after a redirect,
  // or the form again with what went wrong.
  await Promise.all([
    page.waitForEvent('load', { timeout: TIMEOUT_MS }),
    form.locator('button[type="submit"], input[type="submit"], button:not([type])').first().click(),
  ]);
  if (new URL(page.url()).pathname === LOGIN_PATH) {
    const said = (await page.locator('[role="alert"], .error, .problem').allInnerTexts()).join(' ').trim();
    throw new Error(`still on ${LOGIN_PATH} after signing in${said === '' ? '' : `: ${said}`}`);
  }
}

/** Takes one page; returns the reason it failed, or null. */
async function shoot(page: Page, o: Options, path: string): Promise<string | null> {
  try {
    const res = await page.goto(`${o.baseUrl}${path}`, { waitUntil: 'load' });
    if (res === null) return 'no answer';
    if (res.status() >= 400) return `answered ${res.status()}`;
    const landed = new URL(page.url()).pathname;
    if (o.email !== null && landed === LOGIN_PATH && path !== LOGIN_PATH) return `sent to ${LOGIN_PATH}`;
    // Charts and the copy button are drawn by scripts after load: let them settle.
    await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => {});
    await page.screenshot({ path: join(o.out, fileFor(path)), fullPage: true });
    return null;
  } catch (e) {
    return (e as Error).message.split('\n')[0];
  }
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = options(process.argv.slice(2), process.env);
  } catch (e) {
    process.stderr.write(`screenshots: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  mkdirSync(o.out, { recursive: true });
  let browser: Browser | null = null;
  try {
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: [...CHROMIUM_ARGS],
      env: chromiumEnv(),
    });
    const context = await browser.newContext({
      viewport: { width: WIDTH, height: HEIGHT },
      deviceScaleFactor: 1,
      colorScheme: 'light',
    });
    context.setDefaultTimeout(TIMEOUT_MS);
    const page = await context.newPage();
    if (o.email !== null) {
      try {
        await signIn(page, o);
        process.stdout.write(`signed in as ${o.email}\n`);
      } catch (e) {
        process.stderr.write(
          `screenshots: could not sign in at ${o.baseUrl}${LOGIN_PATH}: ${(e as Error).message}\n`,
        );
        return 1;
      }
    }
    const failed: string[] = [];
    for (const path of o.paths) {
      const why = await shoot(page, o, path);
      if (why === null) process.stdout.write(`${path} -> ${join(o.out, fileFor(path))}\n`);
      else {
        failed.push(path);
        process.stderr.write(`screenshots: ${path} failed: ${why}\n`);
      }
    }
    if (failed.length > 0) {
      process.stderr.write(
        `screenshots: ${failed.length} of ${o.paths.length} failed: ${failed.join(', ')}\n`,
      );
      return 1;
    }
    return 0;
  } finally {
    await browser?.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: Error) => {
    process.stderr.write(`screenshots: ${e.message}\n`);
    process.exitCode = 1;
  },
);
