/**
 * The first load as an operator runs it: `fundreturns refresh --provider eodhd` processes
 * on empty directories against the local EODHD stand-in serving a generated universe,
 * killed at random points and started again, stopped at its budget, interrupted.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeEodhd, startFakeEodhd } from '../builder/refresh/eodhd-server.test-helper.js';
import {
  buildOfUniverse,
  expectSameSnapshot,
  filesUnder,
  type StandInUniverse,
  standInUniverse,
} from '../builder/refresh/first-load.test-helper.js';
import { fromYmd } from '../core/dates.js';
import { readCurrent } from '../core/snapshot/directory.js';
import { E2E_DATA_END, spawnCli, tempDir, testNow } from './harness.js';
import { seededRandom } from './seeded-random.js';

const TOKEN = 'e2e-L0ad-S3cret-token';
let dir: string;
let universe: StandInUniverse;
let expected: string;
beforeAll(async () => {
  dir = tempDir('first-load');
  const [y, m, d] = E2E_DATA_END.split('-').map(Number);
  // The harness's clock: the last closed session is E2E_DATA_END; the daily files hold it and the one before.
  universe = await standInUniverse(join(dir, 'universe'), {
    funds: 50,
    seed: 23,
    from: fromYmd(2012, 1, 3),
    to: fromYmd(y, m, d),
    dailyDays: 2,
  });
  expected = await buildOfUniverse(universe, join(dir, 'expected'), testNow);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers: FakeEodhd[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function load(root: string, server: FakeEodhd, more: string[] = []) {
  mkdirSync(root, { recursive: true });
  const tokenFile = join(root, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  return spawnCli([
    'refresh',
    '--provider',
    'eodhd',
    '--eodhd-url',
    server.url,
    '--token-file',
    tokenFile,
    '--source',
    join(root, 'source'),
    '--snapshots',
    join(root, 'snapshots'),
    '--concurrency',
    '4',
    ...more,
  ]);
}

describe('fundreturns refresh from nothing', () => {
  it('killed (SIGKILL) at random points and started again, it publishes what an uninterrupted load does: build of the universe’s files', async () => {
    const rand = seededRandom(2611);
    const root = join(dir, 'killed');
    let current: ReturnType<typeof load> | null = null;
    let served = 0;
    let killAt = Number.POSITIVE_INFINITY;
    let histories = 0;
    const server: FakeEodhd = await startFakeEodhd(TOKEN, {
      universe: universe.dir,
      today: universe.dailyDates[0],
      onRequest: (_n, path) => {
        // The provider publishes the last day partway through the load.
        if (path.startsWith('/api/eod/') && ++histories === 25) server.today = universe.to;
        if (++served === killAt) current?.child.kill('SIGKILL');
      },
    });
    servers.push(server);
    const codesAsked = (from: number) =>
      server.requests.slice(from).flatMap((q) => /^\/api\/eod\/([^.?]+)\.US/.exec(q)?.[1] ?? []);
    let kills = 0;
    let published = false;
    for (let attempt = 0; attempt < 20 && !published; attempt++) {
      const whole = new Set(
        (() => {
          try {
            return readdirSync(join(root, 'source', 'prices')).filter((n) => n.endsWith('.csv'));
          } catch {
            return [];
          }
        })().map((n) => n.slice(0, -4)),
      );
      const from = server.requests.length;
      served = 0;
      const killing = kills < 6;
      // Half the kills come at a request (a fetch in flight), half after a time (writing, building).
      const byRequest = killing && rand() < 0.5;
      // A request this run will make: a history still to fetch, or one of the bulk day's three.
      const left = 50 - whole.size + 3;
      killAt = byRequest ? 1 + Math.floor(rand() * left) : Number.POSITIVE_INFINITY;
      // Paced (20 requests a second) so that a kill after a time lands in any phase.
      current = load(root, server, ['--max-rate', '1200']);
      current.child.stdin?.end();
      const timer =
        killing && !byRequest ? setTimeout(() => current?.child.kill('SIGKILL'), 100 + rand() * 2500) : null;
      const [code, signal] = await current.exited;
      if (timer !== null) clearTimeout(timer);
      if (signal === 'SIGKILL') kills++;
      else expect(code, current.stderr()).toBe(0);
      published = code === 0;
      // A history already whole when this run started was never asked for again.
      expect(codesAsked(from).filter((c) => whole.has(c))).toEqual([]);
    }
    expect(published).toBe(true);
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(readCurrent(join(root, 'snapshots'))).not.toBeNull();
    await expectSameSnapshot(join(root, 'snapshots'), expected);
  }, 240_000);

  it('the token appears in nothing it prints or writes, through retries and its report', async () => {
    const server = await startFakeEodhd(TOKEN, { universe: universe.dir });
    servers.push(server);
    server.faults.set('eod', [{ status: 500 }, { status: 429, headers: { 'retry-after': '1' } }]);
    const [html] = universe.dir
      ? readFileSync(join(universe.dir, 'funds.csv'), 'utf8').split('\n').slice(1)
      : [];
    server.codeFaults.set(html.split(',')[0], { body: '<html>nope</html>' });
    const root = join(dir, 'token');
    const p = load(root, server, ['--json']);
    p.child.stdin?.end();
    const [code] = await p.exited;
    expect(code, p.stderr()).toBe(0);
    expect(p.stderr()).toMatch(/retry 1 of 4 .*\n.*/);
    expect(p.stderr()).toContain(`${server.url}/api/eod/`);
    expect(p.output()).not.toContain(TOKEN);
    const written = filesUnder(join(root, 'source')).concat(filesUnder(join(root, 'snapshots')));
    expect(written.length).toBeGreaterThan(50);
    for (const f of written.filter((f) => !f.endsWith('/token')))
      expect(readFileSync(f).includes(TOKEN), f).toBe(false);
    // Off a terminal: JSON progress lines every 5 %, and the result on stdout.
    const progress = p
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{"event":"first_load_progress"'));
    expect(progress.length).toBeGreaterThanOrEqual(21);
    expect(JSON.parse(p.stdout()).load).toMatchObject({ leftOut: 1 });
  }, 120_000);

  it('--estimate prints the cost and exits; --max-calls stops with exit 4 and "tomorrow", and the next run finishes', async () => {
    const server = await startFakeEodhd(TOKEN, { universe: universe.dir });
    servers.push(server);
    const root = join(dir, 'budget');
    const e = load(root, server, ['--estimate']);
    e.child.stdin?.end();
    expect((await e.exited)[0]).toBe(0);
    expect(e.stderr()).toMatch(
      /first load: \d+ funds listed .* to fetch: \d+ histories .*: \d+ API calls; at 800 requests a minute about/,
    );
    expect(readCurrent(join(root, 'snapshots'))).toBeNull();
    const b = load(root, server, ['--max-calls', '20']);
    b.child.stdin?.end();
    expect((await b.exited)[0]).toBe(4);
    expect(b.stderr()).toMatch(
      /refresh stopped: stopped at the --max-calls budget: 20 of 20 .*run the same command again tomorrow/,
    );
    const c = load(root, server, ['--max-rate', '100000']);
    c.child.stdin?.end();
    expect((await c.exited)[0], c.stderr()).toBe(0);
    expect(c.stderr()).toMatch(/first load of \d+ funds/);
    await expectSameSnapshot(join(root, 'snapshots'), expected);
  }, 120_000);

  it('Ctrl-C stops it after the requests in flight (exit 130); the same command continues', async () => {
    let p: ReturnType<typeof load> | null = null;
    let n = 0;
    const server = await startFakeEodhd(TOKEN, {
      universe: universe.dir,
      onRequest: () => {
        if (++n === 15) p?.child.kill('SIGINT');
      },
    });
    servers.push(server);
    const root = join(dir, 'sigint');
    p = load(root, server);
    p.child.stdin?.end();
    expect((await p.exited)[0], p.stderr()).toBe(130);
    expect(p.stderr()).toMatch(/interrupted: \d+ of \d+ histories done, kept; run the same command again/);
    const again = load(root, server);
    again.child.stdin?.end();
    expect((await again.exited)[0], again.stderr()).toBe(0);
    await expectSameSnapshot(join(root, 'snapshots'), expected);
  }, 120_000);
});
