/**
 * Refresh targets on the full generated universe, each refresh a separate process of
 * the compiled CLI under GNU time (wall seconds, peak RSS), fetching from a local
 * stand-in for EODHD that serves the universe's next days in the provider's formats
 * (bulk prices, dividends, splits, symbol lists, new funds' histories):
 *   one day for 32,000 funds < 15 s with peak RSS < 1.5 GiB; five missed days < 30 s.
 *
 *   npm run build && npx tsx bench/refresh.bench.ts [--funds 32000] [--dir /tmp/fr-bench-refresh]
 *     [--source DIR]   a universe generated to 2026-11-13 (horizon 2026-12-31) to use
 *                      instead of generating one into --dir; it is written to (daily/,
 *                      prices/ of new funds, funds.csv), so pass a copy
 *
 * The universe is generated (to 2026-11-13, planned to 2026-12-31) and built once into
 * --dir; each measurement starts from that built snapshot again. The stand-in notes
 * when each request comes, which splits a refresh's wall time into its phases:
 * start (process, lock), fetch (the days' bulk files), load (the live snapshot,
 * until the symbol lists are asked for), universe (lists, new funds' histories) and
 * append + write + publish (after the last request, until the process ends).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticProvider } from '../builder/refresh/synthetic.js';
import { parseDay } from '../core/dates.js';
import { readCurrent, setCurrent } from '../core/snapshot/directory.js';
import { benchArgs } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'fundreturns.js');
const args = benchArgs();
const funds = Number(args.get('funds') ?? 32000);
const dir = args.get('dir') ?? '/tmp/fr-bench-refresh';
const TO = '2026-11-13';
const DAYS = ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'];
const source = args.get('source') ?? join(dir, `universe-${funds}`);
const snapshots = join(dir, 'snapshots');
const TOKEN = 'bench-token';

/** GNU time over a CLI run, asynchronously: the provider server answers from this process meanwhile. */
function timedAsync(
  cliArgs: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ seconds: number; maxRssMiB: number; stderr: string; started: number; ended: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const c = spawn('/usr/bin/time', ['-f', '__TIME__ %e %M', process.execPath, cli, ...cliArgs], {
      env: { ...process.env, ...env },
    });
    let err = '';
    c.stderr.on('data', (d) => {
      err += d;
    });
    c.on('exit', (code) => {
      const m = /__TIME__ ([\d.]+) (\d+)/.exec(err);
      if (code !== 0 || !m) reject(new Error(`refresh failed:\n${err}`));
      else
        resolve({
          seconds: Number(m[1]),
          maxRssMiB: Number(m[2]) / 1024,
          stderr: err,
          started,
          ended: performance.now(),
        });
    });
  });
}

if (!existsSync(join(source, 'funds.csv'))) {
  mkdirSync(dir, { recursive: true });
  console.error(`generating ${funds} funds into ${source} …`);
  const g = await timedAsync([
    'generate',
    '--out',
    source,
    '--funds',
    String(funds),
    '--seed',
    '1',
    '--from',
    '1970-01-01',
    '--to',
    TO,
    '--horizon',
    '2026-12-31',
  ]);
  console.error(`  ${g.seconds} s`);
}
const base = join(dir, 'base-source');
if (!existsSync(join(snapshots, 'CURRENT'))) {
  console.error('building …');
  const b = await timedAsync(['build', '--source', source, '--snapshots', snapshots, '--keep', '10'], {});
  console.error(`  ${b.seconds} s`);
}
// A pristine copy of the source's records, restored before each measurement.
if (!existsSync(base)) cpSync(join(source, 'funds.csv'), join(base, 'funds.csv'));
const baseId = readCurrent(snapshots) as string;

// The provider's answers for the five days, prepared before any timing.
console.error('preparing the provider’s files …');
const synthetic = syntheticProvider(source);
await synthetic.prepare?.(DAYS.map((d) => parseDay(d) as number));
const files = new Map<string, string>();
const dec = new TextDecoder();
for (const d of DAYS) {
  const day = parseDay(d) as number;
  const rows = dec
    .decode((await synthetic.day(day)) as Uint8Array)
    .trim()
    .split('\n')
    .slice(1);
  let eod = 'Code,Ex,Date,Open,High,Low,Close,Adjusted_close,Volume\n';
  let div = 'Code,Ex,Date,Dividend,Currency\n';
  let spl = 'Code,Ex,Date,Split\n';
  for (const row of rows) {
    const [code, date, close, adj, dividend, split] = row.split(',');
    eod += `${code},US,${date},${close},${close},${close},${close},${adj},0\n`;
    if (dividend !== '') div += `${code},US,${date},${dividend},USD\n`;
    if (split !== '') spl += `${code},US,${date},${split}/1\n`;
  }
  files.set(`bulk-${d}`, eod);
  files.set(`dividends-${d}`, div);
  files.set(`splits-${d}`, spl);
}
const last = parseDay(DAYS[DAYS.length - 1]) as number;
const list = dec
  .decode((await synthetic.fundList(last)) as Uint8Array)
  .trim()
  .split('\n')
  .slice(1);
for (const type of ['FUND', 'ETF']) {
  const keep = list.filter((l) => l.includes(`,${type},`));
  files.set(
    `symbols-${type.toLowerCase()}`,
    `Code,Name,Country,Exchange,Currency,Type,Isin\n${keep.map((l) => l.split(',').slice(0, -2).join(',')).join('\n')}\n`,
  );
}

/** When each kind of request came (ms, performance.now), for the phase split. */
let requests: { kind: 'bulk' | 'list' | 'history'; at: number }[] = [];
const server = createServer(async (req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  requests.push({
    kind: u.pathname.startsWith('/api/eod-bulk')
      ? 'bulk'
      : u.pathname.startsWith('/api/exchange')
        ? 'list'
        : 'history',
    at: performance.now(),
  });
  const q = u.searchParams;
  let body: string | undefined;
  if (u.pathname === '/api/eod-bulk-last-day/US')
    body = files.get(`${q.get('type') ?? 'bulk'}-${q.get('date')}`);
  else if (u.pathname === '/api/exchange-symbol-list/US') body = files.get(`symbols-${q.get('type')}`);
  else {
    const m = /^\/api\/eod\/(.+)\.US$/.exec(u.pathname);
    if (m) body = dec.decode((await synthetic.history(m[1], last)) ?? new Uint8Array());
  }
  res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/csv' }).end(body ?? '');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Back to the built snapshot and source, then one timed refresh at the evening of `day`. */
async function measure(day: string) {
  setCurrent(snapshots, baseId);
  rmSync(join(source, 'daily'), { recursive: true, force: true });
  cpSync(join(base, 'funds.csv'), join(source, 'funds.csv'));
  requests = [];
  const loadBefore = loadavg()[0];
  const r = await timedAsync(
    [
      'refresh',
      '--source',
      source,
      '--snapshots',
      snapshots,
      '--provider',
      'eodhd',
      '--eodhd-url',
      url,
      '--keep',
      '10',
    ],
    { FUNDRETURNS_TEST_CLOCK: `${day}T23:00:00Z`, FUNDRETURNS_EODHD_TOKEN: TOKEN },
  );
  return { ...r, phases: phases(r), load: [loadBefore, loadavg()[0]] };
}

/**
 * Seconds per phase, from when the stand-in saw each kind of request: the provider
 * asks for the symbol lists and the days' bulk files first, then the refresh loads the
 * live snapshot and compares the lists with it, then asks for the new funds' histories.
 */
function phases(r: { started: number; ended: number }): string {
  const times = (kind: string) => requests.filter((q) => q.kind === kind).map((q) => q.at);
  const histories = times('history');
  const fetched = Math.max(...times('bulk'), ...times('list'));
  const marks: [string, number][] = [
    ['start', Math.min(...times('list'), ...times('bulk'))],
    ['fetch', fetched],
    ['load + universe', histories.length > 0 ? Math.min(...histories) : fetched],
    [`${histories.length} histories`, histories.length > 0 ? Math.max(...histories) : fetched],
    ['append + write + publish', r.ended],
  ];
  let t0 = r.started;
  return marks
    .map(([name, t]) => {
      const s = `${name} ${((t - t0) / 1000).toFixed(1)} s`;
      t0 = t;
      return s;
    })
    .join(', ');
}

console.error('refreshing …');
const one = await measure(DAYS[0]);
const five = await measure(DAYS[DAYS.length - 1]);
server.close();
setCurrent(snapshots, baseId);
const line = (r: { stderr: string }) =>
  r.stderr.split('\n').find((l) => l.includes('fundreturns: published')) ?? '';
console.log(
  `| one day (${DAYS[0]}), wall | ${one.seconds.toFixed(1)} s (peak RSS ${(one.maxRssMiB / 1024).toFixed(2)} GiB) | < 15 s, < 1.5 GiB |`,
);
console.log(
  `| five missed days (${DAYS[0]}..${DAYS[4]}), wall | ${five.seconds.toFixed(1)} s (peak RSS ${(five.maxRssMiB / 1024).toFixed(2)} GiB) | < 30 s |`,
);
console.log(line(one));
console.log(line(five));
for (const [label, r] of [
  ['one day', one],
  ['five days', five],
] as const)
  console.log(
    `${label}: ${r.phases}; load average ${r.load.map((l) => l.toFixed(1)).join(' → ')} (1 min, before → after)`,
  );
