/**
 * The daily refresh as an operator runs it: `refresh` and `serve --refresh-cron`
 * processes on a moved clock (FUNDRETURNS_TEST_CLOCK), over generated universes
 * planned past their last day, and against a local stand-in for EODHD.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEodhd } from '../builder/refresh/eodhd-server.test-helper.js';
import { tenFunds } from '../builder/refresh/refresh.test-helper.js';
import { readRefreshStats } from '../core/refresh-stats.js';
import { listSnapshots, readCurrent } from '../core/snapshot/directory.js';
import {
  cli,
  cliAsync,
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  spawnCli,
  startServe,
  tempDir,
  waitFor,
} from './harness.js';

let dir: string;
const servers: ServerProcess[] = [];
beforeAll(() => {
  dir = tempDir('refresh');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI run to its end without blocking this process (the fake provider answers from here). */
async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const p = spawnCli(args, env);
  p.child.stdin?.end();
  const [status] = await p.exited;
  return { status, stdout: p.stdout(), stderr: p.stderr() };
}

/** The clock of every process of a test: `iso` now, running on from there. */
const clockAt = (iso: string) => ({ FUNDRETURNS_TEST_CLOCK: `${iso}@${Date.now()}` });

describe('serve --refresh-cron', () => {
  it('a running server refreshes itself at start (missed days), swaps to the new as_of, and a new fund answers', async () => {
    const { source, snapshots } = generateAndBuild(join(dir, 'serve'), 150, ['--horizon', '2027-12-31']);
    const access = setupAccess(join(dir, 'serve-access'));
    const before = readCurrent(snapshots);
    // Monday 2027-03-01, 18:00 New York: 66 trading days after the universe's last.
    const server = await startServe(
      [
        ...access.flags,
        '--snapshots',
        snapshots,
        '--poll-ms',
        '200',
        '--refresh-cron',
        '30 18 * * 1-5',
        '--refresh-provider',
        'synthetic',
        '--refresh-source',
        source,
      ],
      clockAt('2027-03-01T23:00:00Z'),
    );
    servers.push(server);
    await waitFor(() => readCurrent(snapshots) !== before, 60_000, 'the refresh to publish');
    const health = async () =>
      (await (await fetch(`${server.url}/healthz`)).json()) as Record<string, unknown>;
    await waitFor(async () => (await health()).data_as_of === '2027-03-01', 20_000, 'the swap');
    expect((await health()).status).toBe('ok');
    expect(server.logs()).toMatch(
      /refresh at start \(catching up\): published, 66 days \(2026-11-23\.\.2027-03-01\)/,
    );
    const manifest = JSON.parse(
      readFileSync(join(snapshots, readCurrent(snapshots) as string, 'manifest.json'), 'utf8'),
    );
    const fresh: string[] = manifest.report.universe.newFunds;
    expect(fresh.length).toBeGreaterThan(0);
    const r = await fetch(`${server.url}/v1/funds/${fresh[0]}/trailing-returns`, { headers: access.headers });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { as_of_date: string }).as_of_date).toBe('2027-03-01');
  }, 120_000);

  it('a refresh flag without --refresh-cron is a usage error', () => {
    const r = cli(['serve', '--refresh-provider', 'synthetic', '--snapshots', join(dir, 'none')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--refresh-provider needs --refresh-cron EXPR');
  });
});

describe('fundreturns refresh', () => {
  it('two refreshes in two processes never overlap: one publishes, the other waits for the lock and is up to date', async () => {
    const { source, snapshots } = generateAndBuild(join(dir, 'two'), 80, ['--horizon', '2027-12-31']);
    const run = async () => {
      const r = await cliAsync(
        ['refresh', '--source', source, '--snapshots', snapshots, '--provider', 'synthetic'],
        clockAt('2026-11-25T23:00:00Z'),
      );
      return { code: r.status, err: r.stderr };
    };
    const [a, b] = await Promise.all([run(), run()]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const lines = [a.err, b.err].map((e) => (/fundreturns: (published|up to date)/.exec(e) ?? [])[1]).sort();
    expect(lines).toEqual(['published', 'up to date']);
    expect(listSnapshots(snapshots)).toHaveLength(2);
    // Both runs are there for the server's /metrics (core/refresh-stats.ts).
    const stats = readRefreshStats(snapshots);
    expect(stats?.runs).toEqual({ ok: 1, unchanged: 1 });
    expect(stats?.last?.outcome).toMatch(/^(ok|unchanged)$/);
  }, 120_000);

  it('eodhd: the token from FUNDRETURNS_EODHD_TOKEN is used and appears in no output', async () => {
    const token = 'e2e-Secret-Token-123';
    const server = await startFakeEodhd(token);
    try {
      const t = await tenFunds(join(dir, 'eodhd'));
      const eodhd = (more: string[], env: NodeJS.ProcessEnv) =>
        runCli(
          [
            'refresh',
            '--source',
            t.source,
            '--snapshots',
            t.snapshots,
            '--provider',
            'eodhd',
            '--eodhd-url',
            server.url,
            ...more,
          ],
          { ...clockAt('2026-11-23T23:00:00Z'), ...env },
        );
      const r = await eodhd([], { FUNDRETURNS_EODHD_TOKEN: token });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/published .* 1 days 2026-11-23\.\.2026-11-23/);
      expect(`${r.stdout}${r.stderr}`).not.toContain(token);
      // From a token file, and a wrong one: refused, the file's content never shown.
      writeFileSync(join(dir, 'token'), 'not-the-token-either\n');
      const bad = await eodhd(['--token-file', join(dir, 'token'), '--date', '2026-11-23'], {});
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain('eodhd refused the token (401)');
      expect(bad.stderr).not.toContain('not-the-token-either');
    } finally {
      await server.close();
    }
  });

  it('eodhd without a usable token is a usage error at start (exit 2) for refresh, schedule and serve --refresh-cron', () => {
    const empty = join(dir, 'empty-token');
    writeFileSync(empty, '\n');
    const cases: [string[], RegExp][] = [
      [[], /needs a token: --token-file FILE or FUNDRETURNS_EODHD_TOKEN/],
      [
        ['--token-file', join(dir, 'no-such-token')],
        /--token-file .*no-such-token cannot be read \(ENOENT\)/,
      ],
      [['--token-file', empty], /--token-file .*empty-token is empty/],
    ];
    for (const [more, message] of cases) {
      const common = ['--source', dir, '--provider', 'eodhd', ...more];
      const env = { FUNDRETURNS_EODHD_TOKEN: '' };
      for (const argv of [
        ['refresh', ...common],
        ['schedule', ...common],
        [
          'serve',
          '--snapshots',
          join(dir, 'nothing'),
          '--refresh-cron',
          '30 18 * * 1-5',
          ...common.map((a) => (a.startsWith('--') ? `--refresh-${a.slice(2)}` : a)),
        ],
      ]) {
        const r = cli(argv, env);
        expect(r.status, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr, argv.join(' ')).toMatch(message);
      }
    }
  });

  it('without --source, or with an unknown provider, is a usage error (exit 2)', () => {
    expect(cli(['refresh', '--provider', 'synthetic']).status).toBe(2);
    const r = cli(['refresh', '--source', dir, '--provider', 'yahoo']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--provider must be inbox, eodhd or synthetic');
  });
});
