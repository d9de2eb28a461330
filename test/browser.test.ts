/**
 * The browser test machinery itself (test/browser.ts), on the pages that exist
 * before the dashboard: a real Chromium opens `/` and `/docs` of a real server, the
 * pages raise no console error and no Content-Security-Policy violation, and a
 * screenshot is written. Also that the watcher can see a violation (so "none" means
 * something) and that no browser process outlives its test.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserForTest, launchBrowser, type TestBrowser } from './browser.js';
import { type ServerProcess, startServedUniverse, waitFor } from './harness.js';

/** Throws under CI=true when chromium is missing; false (skip) elsewhere. */
const RUN = browserForTest();

/** Processes of `pgid` still running (not zombies, which hold nothing but a pid). */
function liveInGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces, so read after its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') pids.push(Number(entry));
  }
  return pids;
}

/** The dashboard's policy: everything from the page's own origin, nothing inline. */
const STRICT_CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Answers from `origin` reach the page with `policy` as their CSP (unless they carry one). */
async function enforceCsp(page: Page, origin: string, policy: string): Promise<void> {
  await page.route(`${origin}/**`, async (route) => {
    const response = await route.fetch();
    const headers = response.headers();
    headers['content-security-policy'] ??= policy;
    await route.fulfill({ response, headers });
  });
}

/** PNG width and height from its IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  expect(b.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe.runIf(RUN)('a real browser on the service (Chromium through playwright-core)', () => {
  let dir: string;
  let server: ServerProcess;
  let tb: TestBrowser;

  beforeAll(async () => {
    ({ dir, server } = await startServedUniverse('browser-smoke'));
    tb = await launchBrowser();
  });

  afterAll(async () => {
    await tb?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (tb !== undefined) rmSync(tb.scratch, { recursive: true, force: true });
  });

  it('/ opens with its title, no console error and no CSP violation', async () => {
    const { page, context, problems } = await tb.open();
    const res = await page.goto(`${server.url}/`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('Fund Returns API');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('/docs draws the API reference (Swagger UI) under a strict CSP with no console error or violation, and a screenshot is written', async () => {
    const { page, context, problems } = await tb.open({ viewport: { width: 1200, height: 800 } });
    // /docs sends no CSP of its own yet: the dashboard's (default-src 'self')
    // is added to its answer, so this proves the page keeps to it (no CDN, no inline
    // script or style) but for Swagger UI's icons, which its stylesheet draws as data:
    // images.
    await enforceCsp(page, server.url, `${STRICT_CSP}; img-src 'self' data:`);
    const res = await page.goto(`${server.url}/docs`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('Fund Returns API reference');
    // Swagger UI fetched /openapi.json and rendered it: the document's title is on the page.
    await page.locator('.swagger-ui .info .title').waitFor({ state: 'visible' });
    expect(await page.locator('.swagger-ui .info .title').innerText()).toMatch(/Fund Returns/);
    const shot = join(tb.scratch, 'docs.png');
    await page.screenshot({ path: shot, fullPage: false });
    expect(pngSize(shot)).toEqual({ width: 1200, height: 800 });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the watcher sees a CSP violation and a console error, so an empty list means none happened', async () => {
    const { page, context, problems } = await tb.open();
    await page.route(`${server.url}/csp-probe`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        headers: { 'content-security-policy': STRICT_CSP },
        body: `<title>t</title><script>document.title = 'ran'</script>`,
      }),
    );
    await page.goto(`${server.url}/csp-probe`);
    await waitFor(() => problems.some((p) => p.includes('CSP violation')), 5_000, 'the CSP violation');
    expect(await page.title()).toBe('t'); // the inline script was refused
    expect(problems.join('\n')).toMatch(/CSP violation: enforce script-src(-elem)? blocked inline/);
    await page.evaluate(() => console.error('something broke'));
    await waitFor(
      () => problems.some((p) => p.endsWith('console error: something broke')),
      5_000,
      'the console error',
    );
    await context.close();
  });

  it('two pages opened with open() share no cookie (each has its own context)', async () => {
    const a = await tb.open();
    const b = await tb.open();
    await a.page.goto(`${server.url}/`);
    await a.context.addCookies([{ name: 'session', value: 'a', url: server.url }]);
    await b.page.goto(`${server.url}/`);
    expect(await b.context.cookies(server.url)).toEqual([]);
    await a.context.close();
    await b.context.close();
  });
});

describe.runIf(RUN)('no browser process outlives its test', () => {
  let forgotten = 0;

  it('close() ends Chromium and every process it started', async () => {
    const tb = await launchBrowser();
    const { page } = await tb.open();
    await page.setContent('<title>x</title>');
    const pid = tb.pid;
    expect(liveInGroup(pid).length).toBeGreaterThan(1); // the browser, its zygotes and renderers
    await tb.close();
    await tb.close(); // twice is harmless
    await waitFor(() => liveInGroup(pid).length === 0, 10_000, 'chromium processes to end');
    rmSync(tb.scratch, { recursive: true, force: true });
  });

  it('(a test that forgets close(), for the next test to check)', async () => {
    const tb = await launchBrowser();
    forgotten = tb.pid;
    expect(liveInGroup(forgotten).length).toBeGreaterThan(0);
  });

  it('a browser a test forgot to close was ended after that test (test/processes.ts)', async () => {
    expect(forgotten).toBeGreaterThan(0);
    await waitFor(() => liveInGroup(forgotten).length === 0, 10_000, 'the forgotten chromium to end');
  });
});
