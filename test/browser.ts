/**
 * A real browser for the dashboard's tests: Debian's `chromium` (the Makefile's
 * system-deps installs it, as it does redis-server) driven by `playwright-core`, which
 * never downloads a browser of its own. Outside CI a machine without chromium skips
 * the browser tests with a message; under CI=true a missing chromium fails them
 * (`browserForTest`, as test/system-tool.ts does for promtool).
 *
 * The browser is started as a Playwright browser server so that its process is a
 * ChildProcess this file can hand to test/processes.ts: it is ended after the test
 * (or the file) that started it, pass, fail or time-out, even when a test forgets
 * close(), and killed if the test runner itself exits. Every launch starts from a
 * fresh profile (Playwright's own temporary user-data-dir, removed when the browser
 * exits) and every `open()` from a fresh context: no cookie or storage is shared
 * between two launches or two contexts.
 */
import { join } from 'node:path';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type ConsoleMessage,
  chromium,
  type Page,
} from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_ENV, chromiumEnv, chromiumPath } from './chromium.js';
import { tempDir } from './harness.js';
import { track } from './processes.js';
import { toolForTest } from './system-tool.js';

/**
 * Whether the browser tests run here: true with a Chromium ($FUNDRETURNS_TEST_CHROMIUM
 * or Debian's); false (a skip, said on stderr) without one outside CI; throws under
 * CI=true, where they must run.
 */
export function browserForTest(): boolean {
  const own = process.env[CHROMIUM_ENV];
  if (own !== undefined && own !== '') return true;
  return toolForTest('chromium', 'chromium', true);
}

/** A page and what went wrong on it: the test asserts `problems` is empty. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /**
   * Console errors (a CSP refusal as Chrome words it, a script's console.error),
   * uncaught exceptions, every answer of 400 or more and every request that failed
   * (with its URL), and every `securitypolicyviolation` the page saw, enforced or
   * report-only: each as one line naming the page.
   */
  problems: string[];
}

export interface TestBrowser {
  browser: Browser;
  /** The browser's process id, also its process group's (Playwright starts it detached). */
  pid: number;
  /** A directory of this launch's own, for screenshots, downloads and traces. */
  scratch: string;
  /** A new page in a new context (own cookies and storage), watched for problems. */
  open(options?: BrowserContextOptions): Promise<WatchedPage>;
  /** Ends the browser; the process is killed if it does not exit within 10 s. Idempotent. */
  close(): Promise<void>;
}

/** Installed in every page before its own scripts; Playwright's injection is exempt from the page's CSP. */
const CSP_WATCH = `document.addEventListener('securitypolicyviolation', (e) => {
  window.__frCspViolation(e.disposition + ' ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || '(inline)') + ' at ' + e.sourceFile + ':' + e.lineNumber);
});`;

async function watch(context: BrowserContext): Promise<WatchedPage> {
  const problems: string[] = [];
  await context.exposeBinding('__frCspViolation', ({ page }, text: string) => {
    problems.push(`${page.url()}: CSP violation: ${text}`);
  });
  await context.addInitScript(CSP_WATCH);
  const page = await context.newPage();
  page.on('console', (m: ConsoleMessage) => {
    // A failed load is said below with its URL, which Chrome's message leaves out. The
    // browser's own /favicon.ico request (a page with no icon link) is not the page's:
    // it reaches neither the events below nor, so, the problems.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource:'))
      problems.push(`${page.url()}: console error: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400)
      problems.push(`${page.url()}: ${r.status()} for ${r.request().method()} ${r.url()}`);
  });
  page.on('requestfailed', (r) => {
    problems.push(`${page.url()}: ${r.method()} ${r.url()} failed: ${r.failure()?.errorText ?? 'unknown'}`);
  });
  page.on('pageerror', (e) => problems.push(`${page.url()}: uncaught ${e.name}: ${e.message}`));
  return { page, context, problems };
}

/** Starts Chromium for a test (call `browserForTest()` first to skip where there is none). */
export async function launchBrowser(): Promise<TestBrowser> {
  const scratch = tempDir('browser');
  const server = await chromium.launchServer({
    executablePath: chromiumPath(),
    headless: true,
    args: [...CHROMIUM_ARGS],
    env: chromiumEnv(),
    // Loopback only: the socket drives a browser that can read local files.
    host: '127.0.0.1',
    artifactsDir: join(scratch, 'artifacts'),
    downloadsPath: join(scratch, 'downloads'),
    timeout: 60_000,
  });
  const child = track(server.process(), 'chromium');
  let browser: Browser;
  try {
    browser = await chromium.connect(server.wsEndpoint(), { timeout: 30_000 });
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  let closing: Promise<void> | null = null;
  return {
    browser,
    pid: child.pid!,
    scratch,
    async open(options = {}) {
      const context = await browser.newContext(options);
      // A missing element fails the test in seconds, not Playwright's 30 s.
      context.setDefaultTimeout(15_000);
      return watch(context);
    },
    close() {
      closing ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await browser.close().catch(() => {});
        await server.close().catch(() => {});
        await exited;
        clearTimeout(killer);
      })();
      return closing;
    },
  };
}
