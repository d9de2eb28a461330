/**
 * What depends on "now", at instants of our choosing (FUNDRETURNS_TEST_CLOCK, core/clock.ts):
 * the last closed session, freshness (C31), the quota's month and its Retry-After (C28),
 * the future-date bound (C36). A holiday, a daylight-saving change, a month and a year
 * end each, through the real processes, so the clock is shown to reach every one of them.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundRow, writeSource } from '../builder/build.test-helper.js';
import { cli, clockAt, generateAndBuild, setupAccess, startServe, tempDir, waitFor } from './harness.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('clock');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `generate` with no --to, on a clock reading `instant`: its last date. */
function generatedLastDate(instant: string): string {
  const out = join(dir, `gen-${instant.replace(/[:]/g, '')}`);
  const r = cli(['generate', '--out', out, '--funds', '2', '--from', '2026-01-01', '--threads', '1'], {
    FUNDRETURNS_TEST_CLOCK: clockAt(instant),
  });
  expect(r.status, r.stderr).toBe(0);
  return /last date (\d{4}-\d{2}-\d{2})/.exec(r.stderr)![1];
}

describe('generate ends on the last session that has closed, by the injected clock', () => {
  it('on Thanksgiving evening (NYSE closed) the last session is the day before', () => {
    expect(generatedLastDate('2026-11-26T22:00:00Z')).toBe('2026-11-25');
  });

  it('on New Year’s Day (a holiday and a year end) the last session is 2026-12-31', () => {
    expect(generatedLastDate('2027-01-01T12:00:00Z')).toBe('2026-12-31');
  });

  it('after daylight saving starts, the close is 16:00 EDT (20:00 UTC), not 21:00', () => {
    // Monday 2026-03-09, the first session on EDT.
    expect(generatedLastDate('2026-03-09T19:59:00Z')).toBe('2026-03-06');
    expect(generatedLastDate('2026-03-09T20:01:00Z')).toBe('2026-03-09');
  });
});

describe('freshness is measured on the injected clock (C31)', () => {
  /** A served snapshot whose data ends on `to`, with the server's clock at `instant`. */
  async function health(to: string, instant: string) {
    const clock = { FUNDRETURNS_TEST_CLOCK: clockAt(instant) };
    const { snapshots } = generateAndBuild(
      join(dir, `fresh-${to}-${instant.replace(/[:]/g, '')}`),
      2,
      ['--to', to],
      clock,
    );
    const server = await startServe(['--snapshots', snapshots, '--threads', '1'], clock);
    try {
      const r = await fetch(`${server.url}/healthz`);
      return { status: r.status, body: (await r.json()) as { status: string; data_age_hours: number } };
    } finally {
      await server.stop();
    }
  }

  it('across the end of daylight saving: 120 hours from Friday 16:00 EDT is Wednesday 20:00 UTC', async () => {
    // Friday 2026-10-30 closed at 20:00 UTC (EDT); clocks went back on Sunday 2026-11-01.
    const before = await health('2026-10-30', '2026-11-04T19:57:00Z');
    expect(before.status).toBe(200);
    expect(before.body.status).toBe('ok');
    expect(before.body.data_age_hours).toBeCloseTo(119.95, 1);
    const after = await health('2026-10-30', '2026-11-04T20:03:00Z');
    expect(after.status).toBe(503);
    expect(after.body.status).toBe('stale');
    expect(after.body.data_age_hours).toBeCloseTo(120.05, 1);
  });

  it('on New Year’s Day the last session of the year is 18 hours old and fresh', async () => {
    // 2026-12-31 closed at 21:00 UTC (EST).
    const h = await health('2026-12-31', '2027-01-01T15:00:00Z');
    expect(h.status).toBe(200);
    expect(h.body.data_age_hours).toBeCloseTo(18, 1);
  });
});

describe('the quota month turns with the injected clock (C28)', () => {
  it('at a year end: the quota runs out, Retry-After counts to midnight UTC, and January starts afresh', async () => {
    const root = join(dir, 'month-end');
    const { snapshots } = generateAndBuild(join(root, 'data'), 2);
    const access = setupAccess(root, 'free', { free: { burst: 100, monthly: 3 } });
    // Every process of this test on one clock, which reaches the new year 20 s from now.
    const anchor = Date.now();
    const midnight = Date.parse('2027-01-01T00:00:00Z');
    const clock = { FUNDRETURNS_TEST_CLOCK: `${new Date(midnight - 20_000).toISOString()}@${anchor}` };
    const clockNow = () => midnight - 20_000 + (Date.now() - anchor);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '1'], clock);
    try {
      const url = `${server.url}/v1/funds?limit=1`;
      const get = () => fetch(url, { headers: access.headers });
      // A server that took more than 17 s to start leaves no December to test in.
      expect(midnight - clockNow(), 'seconds of December left once the server is up').toBeGreaterThan(3_000);
      for (let i = 0; i < 3; i++) expect((await get()).status).toBe(200);
      const over = await get();
      expect(over.status).toBe(429);
      expect(((await over.json()) as { type: string }).type).toMatch(/quota-exceeded$/);
      // Until the quota resets: midnight UTC on the server's clock.
      const retry = Number(over.headers.get('retry-after'));
      expect(Math.abs(retry - (midnight - clockNow()) / 1000)).toBeLessThan(2);
      await new Promise((r) => setTimeout(r, midnight - clockNow() + 250));
      const next = await get();
      expect(next.status).toBe(200);
      // Two of January's three left, resetting in January's 31 days (C29).
      expect(next.headers.get('ratelimit')).toMatch(/"quota";r=2;t=26(78|79)\d\d\d?$/);
      // The operator sees the two months apart, once the server has saved its counts.
      await waitFor(
        () => {
          const u = cli(['accounts', 'usage', 'tester', '--json', '--store', access.store], clock);
          const j = JSON.parse(u.stdout) as {
            month: string;
            count: number;
            history: { month: string; count: number }[];
          };
          return (
            j.month === '2027-01' &&
            j.count === 1 &&
            j.history.some((h) => h.month === '2026-12' && h.count === 3)
          );
        },
        10_000,
        'usage of 2026-12 and 2027-01',
        server.logs,
      );
    } finally {
      await server.stop();
    }
  });
});

describe('the future-date bound follows the injected clock (C36)', () => {
  it('a full build on 2026-11-20 takes a row dated 31 days ahead and refuses one 32 days ahead', () => {
    const root = join(dir, 'future');
    const prices = 'Date,Adjusted_close\n2026-11-18,10\n2026-11-19,10.5\n2026-11-20,11\n';
    const source = writeSource(join(root, 'source'), [fundRow('AAAAX'), fundRow('BBBBX')], {
      AAAAX: `${prices}2026-12-21,12\n`,
      BBBBX: `${prices}2026-12-22,12\n`,
    });
    // One bad row in eight: over the default 1 % bound, which is not what this test is about.
    const r = cli(
      ['build', '--source', source, '--snapshots', join(root, 'snapshots'), '--max-bad-share', '0.5'],
      {
        FUNDRETURNS_TEST_CLOCK: clockAt('2026-11-20T15:00:00Z'),
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toContain('2026-12-22 is after 2026-12-21, today + 31 days of grace');
    const inspect = JSON.parse(cli(['inspect', '--json', '--snapshots', join(root, 'snapshots')]).stdout) as {
      as_of: string;
    };
    expect(inspect.as_of).toBe('2026-12-21');
  });

  it('a clock that cannot be read is refused, not replaced by the real one', () => {
    const r = cli(['inspect', '--snapshots', dir], { FUNDRETURNS_TEST_CLOCK: 'next tuesday' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('FUNDRETURNS_TEST_CLOCK must be an ISO instant with a zone');
  });
});
