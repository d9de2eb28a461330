/**
 * Builder targets on the full generated universe, each step a separate process of the
 * compiled CLI so wall time and peak RSS are the operator's:
 *   full build < 120 s, daily append < 10 s, each ≤ 1.5 GiB peak RSS;
 *   snapshot load + verify < 3 s; plus bytes on disk and build rows/s.
 *
 *   npm run build && npx tsx bench/build.bench.ts [--funds 32000] [--dir /tmp/fr-bench]
 *     [--source DIR]      a generated universe to build (default: generated into --dir)
 *     [--daily FILE]      the daily file to append (default: the source's first daily/
 *                         file, else the synthetic provider's next trading day of it)
 *     [--baseline DIR]    another checkout (built) measured in alternating pairs with
 *                         this one: medians, ratios, and its snapshots compared byte for byte
 *     [--pairs 1]
 *
 * Each process's RSS is sampled every 100 ms (/proc) and its build phases (the CLI's
 * `phases …` line) are laid back from its end, which gives the peak RSS of each phase.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tradingDaysInRange } from '../core/calendar.js';
import { formatDay, parseDay } from '../core/dates.js';
import { ARROW_FILES } from '../core/snapshot/schema.js';
import { benchArgs } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = benchArgs();
const funds = Number(args.get('funds') ?? 32000);
const dir = args.get('dir') ?? '/tmp/fr-bench';
const to = args.get('to') ?? '2026-11-20';
const source = args.get('source') ?? join(dir, `universe-${funds}-${to}`);
const baseline = args.get('baseline');
const pairs = Number(args.get('pairs') ?? 1);
const cliOf = (checkout: string) => join(checkout, 'bin', 'fundreturns.js');
const ours = cliOf(root);

interface Timed {
  seconds: number;
  /** User + system CPU seconds, all threads: less at the mercy of a shared machine than wall time. */
  cpuSeconds: number;
  maxRssMiB: number;
  stderr: string;
  /** Peak sampled RSS (MiB) per build phase, phases laid back from the process end. */
  phasePeaks: Record<string, number>;
  load: [number, number];
}

/** The RSS of a process in MiB, from /proc (0 once it is gone). */
function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The CLI under GNU time (wall, peak RSS with worker threads), its RSS sampled meanwhile. */
function timed(cli: string, cliArgs: string[]): Promise<Timed> {
  const loadBefore = loadavg()[0];
  return new Promise((resolve, reject) => {
    const c = spawn('/usr/bin/time', ['-f', '__TIME__ %e %M %U %S', process.execPath, cli, ...cliArgs]);
    const t0 = performance.now();
    const samples: [number, number][] = [];
    const tick = setInterval(() => {
      // GNU time's child is the node process.
      const kids = (() => {
        try {
          return readFileSync(`/proc/${c.pid}/task/${c.pid}/children`, 'utf8').trim();
        } catch {
          return '';
        }
      })();
      if (kids !== '') samples.push([performance.now() - t0, rssMiB(Number(kids.split(' ')[0]))]);
    }, 100);
    let err = '';
    c.stderr.on('data', (d) => {
      err += d;
    });
    c.on('exit', (code) => {
      clearInterval(tick);
      const end = performance.now() - t0;
      const m = /__TIME__ ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(err);
      if (code !== 0 || !m) return reject(new Error(`fundreturns ${cliArgs.join(' ')} failed:\n${err}`));
      resolve({
        seconds: Number(m[1]),
        maxRssMiB: Number(m[2]) / 1024,
        cpuSeconds: Number(m[3]) + Number(m[4]),
        stderr: err,
        phasePeaks: phasePeaks(err, samples, end),
        load: [loadBefore, loadavg()[0]],
      });
    });
  });
}

/** `phases funds 285 ms, read 29063 ms, …` laid back from the end of the process. */
function phasePeaks(stderr: string, samples: [number, number][], end: number): Record<string, number> {
  const line = /phases (.*)/.exec(stderr)?.[1] ?? '';
  const phases = [...line.matchAll(/(\w+) (\d+) ms/g)].map((p) => [p[1], Number(p[2])] as const);
  let t = end - phases.reduce((a, [, ms]) => a + ms, 0);
  const peaks: Record<string, number> = {};
  for (const [name, ms] of phases) {
    const inPhase = samples.filter(([at]) => at >= t && at < t + ms).map(([, r]) => r);
    peaks[name] = inPhase.length > 0 ? Math.max(...inPhase) : Number.NaN;
    t += ms;
  }
  return peaks;
}

function liveManifest(snapshots: string) {
  const current = readFileSync(join(snapshots, 'CURRENT'), 'utf8').trim();
  return JSON.parse(readFileSync(join(snapshots, current, 'manifest.json'), 'utf8')) as {
    as_of: string;
    counts: { funds: number };
    files: Record<string, { bytes: number }>;
  };
}

/** The Arrow files of the snapshot CURRENT names, as SHA-256 per file. */
function liveFiles(snapshots: string): Record<string, string> {
  const current = readFileSync(join(snapshots, 'CURRENT'), 'utf8').trim();
  return Object.fromEntries(
    ARROW_FILES.map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(snapshots, current, f)))
        .digest('hex'),
    ]),
  );
}

if (!existsSync(join(source, 'funds.csv'))) {
  mkdirSync(dir, { recursive: true });
  console.error(`generating ${funds} funds into ${source} …`);
  const g = await timed(ours, [
    'generate',
    '--out',
    source,
    '--funds',
    String(funds),
    '--seed',
    '1',
    '--to',
    to,
    '--daily-days',
    '1',
  ]);
  console.error(`generated in ${g.seconds} s`);
}

/** The day to append: given, the source's own first daily file, or the synthetic provider's day after `asOf`. */
async function dailyFile(asOf: string): Promise<string> {
  const given = args.get('daily');
  if (given !== undefined) return given;
  const own = join(source, 'daily');
  if (existsSync(own) && readdirSync(own).length > 0) return join(own, readdirSync(own).sort()[0]);
  const last = parseDay(asOf) as number;
  const next = tradingDaysInRange(last + 1, last + 10)[0];
  const out = join(dir, 'daily', `${formatDay(next)}.csv`);
  if (!existsSync(out)) {
    console.error(`writing the synthetic provider's ${formatDay(next)} into ${out} …`);
    const { syntheticProvider } = await import('../builder/refresh/synthetic.js');
    mkdirSync(join(dir, 'daily'), { recursive: true });
    writeFileSync(out, (await syntheticProvider(source).day(next)) as Uint8Array);
  }
  return out;
}
let daily = '';

interface Run {
  build: Timed;
  daily: Timed;
  files: { build: Record<string, string>; daily: Record<string, string> };
}

async function run(cli: string, name: string): Promise<Run> {
  const snapshots = join(dir, `snapshots-${name}`);
  rmSync(snapshots, { recursive: true, force: true });
  const build = await timed(cli, ['build', '--source', source, '--snapshots', snapshots]);
  const built = liveFiles(snapshots);
  if (daily === '') daily = await dailyFile(liveManifest(snapshots).as_of);
  const append = await timed(cli, ['build', '--daily', daily, '--snapshots', snapshots]);
  return { build, daily: append, files: { build: built, daily: liveFiles(snapshots) } };
}

const runs: { ours: Run[]; baseline: Run[] } = { ours: [], baseline: [] };
for (let p = 0; p < pairs; p++) {
  if (baseline !== undefined) {
    console.error(`pair ${p + 1}: baseline …`);
    runs.baseline.push(await run(cliOf(baseline), 'baseline'));
  }
  console.error(`pair ${p + 1}: ours …`);
  runs.ours.push(await run(ours, 'ours'));
}
// The snapshot ours left (the daily one) is the one the load step reads.
const snapshots = join(dir, 'snapshots-ours');
const manifest = liveManifest(snapshots);
const bytes = Object.values(manifest.files).reduce((a, f) => a + f.bytes, 0);
const rows = Number(/build report: (\d+) data rows/.exec(runs.ours[0].build.stderr)?.[1]);

const loadScript = `
  const { loadSnapshot } = await import(${JSON.stringify(join(root, 'dist/core/snapshot/reader.js'))});
  const fs = await import('node:fs');
  const dir = ${JSON.stringify(snapshots)} + '/' + fs.readFileSync(${JSON.stringify(join(snapshots, 'CURRENT'))}, 'utf8').trim();
  const t = performance.now();
  const s = await loadSnapshot(dir);
  console.log(JSON.stringify({ ms: performance.now() - t, funds: s.columns.funds.length, rss: process.memoryUsage().rss }));
`;
const loads: number[] = [];
for (let k = 0; k < 3; k++) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', loadScript], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  loads.push(JSON.parse(r.stdout).ms / 1000);
}
loads.sort((a, b) => a - b);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const gib = (mib: number) => `${(mib / 1024).toFixed(2)} GiB`;
const loadText = (rs: Timed[]) => rs.map((r) => `${r.load[0].toFixed(1)}→${r.load[1].toFixed(1)}`).join(', ');
const step = (label: string, pick: (r: Run) => Timed, target: string): string[] => {
  const o = runs.ours.map(pick);
  const out = [
    `| ${label}, wall | ${median(o.map((r) => r.seconds)).toFixed(1)} s (CPU ${median(o.map((r) => r.cpuSeconds)).toFixed(1)} s) | ${target} |`,
    `| ${label}, peak RSS | ${gib(median(o.map((r) => r.maxRssMiB)))} | ≤ 1.5 GiB |`,
  ];
  if (runs.baseline.length > 0) {
    const b = runs.baseline.map(pick);
    const ratio = median(o.map((r, k) => r.seconds / b[k].seconds));
    out.push(
      `| ${label}, wall, baseline | ${median(b.map((r) => r.seconds)).toFixed(1)} s (CPU ${median(b.map((r) => r.cpuSeconds)).toFixed(1)} s; ours ÷ baseline, median of pairs: ${ratio.toFixed(2)}) | |`,
      `| ${label}, peak RSS, baseline | ${gib(median(b.map((r) => r.maxRssMiB)))} | |`,
    );
  }
  return out;
};
const phasesOf = (label: string, r: Timed) =>
  `${label}: ${/phases (.*)/.exec(r.stderr)?.[1] ?? '?'}; peak RSS by phase: ${Object.entries(r.phasePeaks)
    .map(([k, v]) => `${k} ${Number.isNaN(v) ? '–' : `${Math.round(v)} MiB`}`)
    .join(', ')}; load average ${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)}`;

const same = (pick: (r: Run) => Record<string, string>) =>
  runs.baseline.length === 0
    ? ''
    : runs.baseline.every((b) => JSON.stringify(pick(b)) === JSON.stringify(pick(runs.ours[0]))) &&
        runs.ours.every((o) => JSON.stringify(pick(o)) === JSON.stringify(pick(runs.ours[0])))
      ? 'identical'
      : 'DIFFERENT';

const command =
  `npm run build && npx tsx bench/build.bench.ts --funds ${funds}` +
  (args.has('source') ? ` --source ${source}` : '') +
  (args.has('daily') ? ` --daily ${daily}` : '') +
  (baseline !== undefined ? ` --baseline ${baseline} --pairs ${pairs}` : '');
const lines = [
  `# Builder benchmark`,
  '',
  `Run: \`${command}\` on ${new Date().toISOString().slice(0, 10)}, ${process.version}, ${cpus().length} cores ` +
    `(load average, 1 min, before→after each step: build ${loadText(runs.ours.map((r) => r.build))}; ` +
    `daily ${loadText(runs.ours.map((r) => r.daily))}).`,
  '',
  '| measure | value | target |',
  '|---|---|---|',
  `| source data rows | ${rows.toLocaleString('en-US')} in ${manifest.counts.funds} funds | ~100 M |`,
  ...step('full build', (r) => r.build, '< 120 s'),
  `| build throughput | ${Math.round(rows / median(runs.ours.map((r) => r.build.seconds))).toLocaleString('en-US')} rows/s | |`,
  ...step(`daily append (one day, ${daily.split('/').pop()})`, (r) => r.daily, '< 10 s'),
  `| snapshot load + verify (median of 3) | ${loads[1].toFixed(2)} s | < 3 s |`,
  `| snapshot bytes on disk | ${bytes.toLocaleString('en-US')} (${(bytes / 2 ** 30).toFixed(2)} GiB) | |`,
  ...(runs.baseline.length > 0
    ? [
        `| Arrow files (SHA-256), full build: ours vs baseline | ${same((r) => r.files.build)} | identical |`,
        `| Arrow files (SHA-256), daily append: ours vs baseline | ${same((r) => r.files.daily)} | identical |`,
      ]
    : []),
  '',
  ...runs.ours.flatMap((r, k) => [
    phasesOf(`Build ${k + 1}, ms`, r.build),
    '',
    phasesOf(`Daily ${k + 1}, ms`, r.daily),
    '',
  ]),
  ...runs.baseline.flatMap((r, k) => [
    phasesOf(`Baseline build ${k + 1}, ms`, r.build),
    '',
    phasesOf(`Baseline daily ${k + 1}, ms`, r.daily),
    '',
  ]),
];
const report = lines.join('\n');
console.log(report);
mkdirSync(join(root, 'bench', 'reports'), { recursive: true });
writeFileSync(join(root, 'bench', 'reports', 'build.md'), `${report}\n`);
