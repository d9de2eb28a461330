/**
 * The first load at full size: `fundreturns refresh --provider eodhd` on empty source and
 * snapshots directories, against the local EODHD stand-in serving a generated universe
 * (builder/refresh/eodhd-server.test-helper.ts, in this process), with the rate limit
 * lifted. Measures the wall time and peak RSS under GNU time, samples the loader's RSS
 * by phase (from its JSON progress lines), and computes what the default rate implies
 * for the real provider.
 *
 * The universe needs its last two sessions in daily/ (`generate --daily-days 2`): the
 * stand-in serves histories up to the day before the last until half of them are
 * fetched, then publishes the last day, so the load also fetches a bulk day, as one
 * that starts before the provider's evening update does.
 *
 *   npm run build && npx tsx bench/first-load.bench.ts --universe DIR [--work /tmp/fr-first-load] [--concurrency 8]
 *
 * DIR is generated when missing: generate --funds 32000 --seed 1 --from 1970-01-01
 * --to 2026-11-13 --horizon 2026-12-31 --daily-days 2.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_RATE } from '../builder/refresh/call-meter.js';
import { EODHD_CALLS, EODHD_DAY_CALLS } from '../builder/refresh/eodhd.js';
import { startFakeEodhd } from '../builder/refresh/eodhd-server.test-helper.js';
import { benchArgs } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = benchArgs();
const universe = args.get('universe') ?? '/tmp/fr-first-load-universe';
const work = args.get('work') ?? '/tmp/fr-first-load';
const concurrency = args.get('concurrency') ?? '8';
const TOKEN = 'bench-token-not-a-secret';

if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) throw new Error('run `npm run build` first');
if (!existsSync(join(universe, 'funds.csv'))) {
  const g = spawnSync(
    process.execPath,
    [
      join(root, 'bin', 'fundreturns.js'),
      'generate',
      '--out',
      universe,
      '--funds',
      '32000',
      '--seed',
      '1',
      '--from',
      '1970-01-01',
      '--to',
      '2026-11-13',
      '--horizon',
      '2026-12-31',
      '--daily-days',
      '2',
    ],
    { stdio: 'inherit' },
  );
  if (g.status !== 0) throw new Error('generate failed');
}
const days = readdirSync(join(universe, 'daily'))
  .map((n) => n.slice(0, 10))
  .sort();
if (days.length < 2)
  throw new Error(`${universe} needs its last two sessions in daily/ (generate --daily-days 2)`);
const last = days[days.length - 1];
// Evening in New York of the universe's last session: the last closed one.
const clock = `${last}T23:00:00Z`;
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
writeFileSync(join(work, 'token'), `${TOKEN}\n`);

const listed = readFileSync(join(universe, 'funds.csv'), 'utf8').split('\n').length - 2;
let histories = 0;
const server = await startFakeEodhd(TOKEN, {
  universe,
  today: days[days.length - 2],
  onRequest: (_n, path) => {
    if (path.startsWith('/api/eod/') && ++histories === Math.floor(listed / 2)) server.today = last;
  },
});
const started = performance.now();
const child = spawn(
  '/usr/bin/time',
  [
    '-f',
    '%e %M',
    process.execPath,
    join(root, 'bin', 'fundreturns.js'),
    'refresh',
    '--provider',
    'eodhd',
    '--eodhd-url',
    server.url,
    '--token-file',
    join(work, 'token'),
    '--source',
    join(work, 'source'),
    '--snapshots',
    join(work, 'snapshots'),
    '--max-rate',
    '1000000',
    '--concurrency',
    concurrency,
  ],
  {
    env: { ...process.env, FUNDRETURNS_TEST_CLOCK: `${clock}@${Date.now()}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);

/** The loader's pid (time's child), its RSS by phase from /proc, sampled every 250 ms. */
let phase = 'lists';
const phaseStart = new Map<string, number>([['lists', 0]]);
const peak = new Map<string, number>();
const rssOf = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) * 1024;
};
const loaderPid = (): number | null => {
  try {
    for (const t of readdirSync(`/proc/${child.pid}/task`)) {
      const kids = readFileSync(`/proc/${child.pid}/task/${t}/children`, 'utf8').trim();
      if (kids !== '') return Number(kids.split(' ')[0]);
    }
  } catch {
    // ended
  }
  return null;
};
const sampler = setInterval(() => {
  const pid = loaderPid();
  if (pid === null) return;
  try {
    const rss = rssOf(pid);
    peak.set(phase, Math.max(peak.get(phase) ?? 0, rss));
  } catch {
    // ended between the two reads
  }
}, 250);

let stderr = '';
let pending = '';
child.stderr.on('data', (d: Buffer) => {
  stderr += d;
  pending += d;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (!line.startsWith('{"event":"first_load_progress"')) continue;
    const p = JSON.parse(line) as { phase: string };
    if (p.phase !== phase) {
      phase = p.phase;
      phaseStart.set(phase, (performance.now() - started) / 1000);
    }
  }
});
const code = await new Promise<number | null>((r) => child.on('exit', r));
clearInterval(sampler);
const wall = (performance.now() - started) / 1000;
await server.close();
const timeLine = stderr.trim().split('\n').at(-1) ?? '';
const [timeWall, maxKb] = timeLine.split(' ').map(Number);
if (code !== 0) {
  console.error(stderr.slice(-4000));
  throw new Error(`the load exited ${code}`);
}

const funds = readFileSync(join(work, 'source', 'funds.csv'), 'utf8').split('\n').length - 2;
const requests = server.requests.length;
const bulk = server.requests.filter((q) => q.startsWith('/api/eod-bulk')).length;
const lists = requests - histories - bulk;
const calls = lists * EODHD_CALLS.list + histories * EODHD_CALLS.history + bulk * EODHD_CALLS.bulk;
const minutes = requests / DEFAULT_MAX_RATE;
const gib = (b: number) => (b / 2 ** 30).toFixed(2);
const phases = [...phaseStart.entries()];
const result = {
  universe,
  funds,
  requests,
  histories,
  bulk,
  lists,
  apiCalls: calls,
  wallSeconds: Number(wall.toFixed(1)),
  gnuTime: { wallSeconds: timeWall, peakRssKb: maxKb, peakRssGiB: Number(gib(maxKb * 1024)) },
  phases: phases.map(([name, at], i) => ({
    phase: name,
    startsAtSeconds: Number(at.toFixed(1)),
    seconds: Number(((phases[i + 1]?.[1] ?? wall) - at).toFixed(1)),
    peakRssGiB: Number(gib(peak.get(name) ?? 0)),
  })),
  atDefaultRate: {
    maxRatePerMinute: DEFAULT_MAX_RATE,
    requestMinutes: Number(minutes.toFixed(1)),
    dayCalls: EODHD_DAY_CALLS,
  },
  loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
  lastLines: stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('{'))
    .slice(-6),
};
console.log(JSON.stringify(result, null, 2));
