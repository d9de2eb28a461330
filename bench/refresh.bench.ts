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
 *     [--baseline DIR] another checkout (built) whose CLI is measured in alternating
 *                      pairs with this one; the snapshots both publish are compared
 *     [--pairs 1]
 *
 * The universe is generated (to 2026-11-13, planned to 2026-12-31) and built once into
 * --dir; each measurement starts from that built snapshot again. The stand-in notes
 * when each request comes, which splits a refresh's wall time into its phases:
 * start (process, lock), fetch (the days' bulk files), load (the live snapshot,
 * until the symbol lists are asked for), universe (lists, new funds' histories) and
 * append + write + publish (after the last request, until the process ends).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticProvider } from '../builder/refresh/synthetic.js';
import { parseDay } from '../core/dates.js';
import { readCurrent, setCurrent } from '../core/snapshot/directory.js';
import { ARROW_FILES } from '../core/snapshot/schema.js';
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
const baseline = args.get('baseline');
const pairs = Number(args.get('pairs') ?? 1);

/** GNU time over a CLI run, asynchronously: the provider server answers from this process meanwhile. */
function timedAsync(
  cliArgs: string[],
  env: NodeJS.ProcessEnv = {},
  bin = cli,
): Promise<{
  seconds: number;
  cpuSeconds: number;
  maxRssMiB: number;
  stderr: string;
  started: number;
  ended: number;
}> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const c = spawn('/usr/bin/time', ['-f', '__TIME__ %e %M %U %S', process.execPath, bin, ...cliArgs], {
      env: { ...process.env, ...env },
    });
    let err = '';
    c.stderr.on('data', (d) => {
      err += d;
    });
    c.on('exit', (code) => {
      const m = /__TIME__ ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(err);
      if (code !== 0 || !m) reject(new Error(`refresh failed:\n${err}`));
      else
        resolve({
          seconds: Number(m[1]),
          maxRssMiB: Number(m[2]) / 1024,
          cpuSeconds: Number(m[3]) + Number(m[4]),
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
async function measure(day: string, bin = cli) {
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
    bin,
  );
  return { ...r, phases: phases(r), load: [loadBefore, loadavg()[0]], files: publishedFiles() };
}

/** SHA-256 of each Arrow file of the snapshot just published. */
function publishedFiles(): string {
  const id = readCurrent(snapshots) as string;
  return ARROW_FILES.map((f) =>
    createHash('sha256')
      .update(readFileSync(join(snapshots, id, f)))
      .digest('hex')
      .slice(0, 16),
  ).join(' ');
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

type Measured = Awaited<ReturnType<typeof measure>>;
const runs: Record<'ours' | 'baseline', { one: Measured; five: Measured }[]> = { ours: [], baseline: [] };
for (let p = 0; p < pairs; p++) {
  for (const who of baseline === undefined ? (['ours'] as const) : (['baseline', 'ours'] as const)) {
    console.error(`refreshing (${who}, pair ${p + 1}) …`);
    const bin = who === 'ours' ? cli : join(baseline as string, 'bin', 'fundreturns.js');
    runs[who].push({ one: await measure(DAYS[0], bin), five: await measure(DAYS[DAYS.length - 1], bin) });
  }
}
server.close();
setCurrent(snapshots, baseId);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const row = (label: string, ms: Measured[], target: string) =>
  `| ${label}, wall | ${median(ms.map((m) => m.seconds)).toFixed(1)} s (CPU ${median(ms.map((m) => m.cpuSeconds)).toFixed(1)} s, peak RSS ${(median(ms.map((m) => m.maxRssMiB)) / 1024).toFixed(2)} GiB) | ${target} |`;
const line = (r: { stderr: string }) =>
  r.stderr.split('\n').find((l) => l.includes('fundreturns: published')) ?? '';
for (const who of ['ours', 'baseline'] as const) {
  if (runs[who].length === 0) continue;
  const tag = who === 'ours' ? '' : ' (baseline)';
  console.log(
    row(
      `one day (${DAYS[0]})${tag}`,
      runs[who].map((r) => r.one),
      '< 15 s, < 1.5 GiB',
    ),
  );
  console.log(
    row(
      `five missed days (${DAYS[0]}..${DAYS[4]})${tag}`,
      runs[who].map((r) => r.five),
      '< 30 s',
    ),
  );
}
if (baseline !== undefined) {
  const ratio = (pick: (r: { one: Measured; five: Measured }) => Measured) =>
    median(runs.ours.map((o, k) => pick(o).seconds / pick(runs.baseline[k]).seconds)).toFixed(2);
  console.log(
    `ours ÷ baseline wall time, median of ${pairs} alternating pairs: one day ${ratio((r) => r.one)}, five days ${ratio((r) => r.five)}`,
  );
  const same = (pick: (r: { one: Measured; five: Measured }) => Measured) =>
    [...runs.ours, ...runs.baseline].every((r) => pick(r).files === pick(runs.ours[0]).files)
      ? 'identical'
      : 'DIFFERENT';
  console.log(
    `published Arrow files (SHA-256), ours vs baseline: one day ${same((r) => r.one)}, five days ${same((r) => r.five)}`,
  );
}
for (const who of ['ours', 'baseline'] as const)
  runs[who].forEach((r, k) => {
    for (const [label, m] of [
      ['one day', r.one],
      ['five days', r.five],
    ] as const) {
      console.log(`${who} ${k + 1}, ${label}: ${line(m)}`);
      console.log(
        `  ${m.phases}; load average ${m.load.map((l) => l.toFixed(1)).join(' → ')} (1 min, before → after)`,
      );
    }
  });
