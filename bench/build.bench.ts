/**
 * Builder targets (issue 2) on the full generated universe, each step a separate
 * process of the compiled CLI so wall time and peak RSS are the operator's:
 *   full build < 120 s with peak RSS < 4 GiB, daily append < 10 s,
 *   snapshot load + verify < 3 s; plus bytes on disk and build rows/s.
 *
 *   npm run build && npx tsx bench/build.bench.ts [--funds 32000] [--dir /tmp/fr-bench]
 *
 * The universe is generated once per (funds, seed) into --dir and reused; its last
 * trading day goes to a daily file so the append is measured on real data.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'fundreturns.js');
const args = benchArgs();
const funds = Number(args.get('funds') ?? 32000);
const dir = args.get('dir') ?? '/tmp/fr-bench';
const to = args.get('to') ?? '2026-11-20';
const source = args.get('source') ?? join(dir, `universe-${funds}-${to}`);
const snapshots = join(dir, 'snapshots');

interface Timed {
  seconds: number;
  maxRssMiB: number;
  stderr: string;
  stdout: string;
}

/** Run the CLI under GNU time for wall seconds and peak RSS (worker threads included). */
function timed(cliArgs: string[]): Timed {
  const r = spawnSync('/usr/bin/time', ['-f', '__TIME__ %e %M', process.execPath, cli, ...cliArgs], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const m = /__TIME__ ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`fundreturns ${cliArgs.join(' ')} failed:\n${r.stderr}`);
  return { seconds: Number(m[1]), maxRssMiB: Number(m[2]) / 1024, stderr: r.stderr, stdout: r.stdout };
}

if (!existsSync(join(source, 'funds.csv'))) {
  mkdirSync(dir, { recursive: true });
  console.error(`generating ${funds} funds into ${source} …`);
  const g = timed([
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
rmSync(snapshots, { recursive: true, force: true });

const build = timed(['build', '--source', source, '--snapshots', snapshots]);
const current = readFileSync(join(snapshots, 'CURRENT'), 'utf8').trim();
const manifest = JSON.parse(readFileSync(join(snapshots, current, 'manifest.json'), 'utf8'));
const bytes = Object.values(manifest.files as Record<string, { bytes: number }>).reduce(
  (a, f) => a + f.bytes,
  0,
);
const rows: number = manifest.report.dataRows;

const dailyFile = join(source, 'daily', readdirSync(join(source, 'daily')).sort()[0]);
const daily = timed(['build', '--daily', dailyFile, '--snapshots', snapshots]);

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

const gib = 2 ** 30;
const lines = [
  `# Builder benchmark`,
  '',
  `Run: \`npm run build && npx tsx bench/build.bench.ts --funds ${funds}\` on ${new Date().toISOString().slice(0, 10)}, ` +
    `${process.version}, ${(await import('node:os')).cpus().length} cores.`,
  '',
  '| measure | value | target |',
  '|---|---|---|',
  `| source data rows | ${rows.toLocaleString('en-US')} in ${manifest.counts.funds} funds | ~100 M |`,
  `| full build, wall | ${build.seconds.toFixed(1)} s | < 120 s |`,
  `| full build, peak RSS | ${(build.maxRssMiB / 1024).toFixed(2)} GiB | < 4 GiB |`,
  `| build throughput | ${Math.round(rows / build.seconds).toLocaleString('en-US')} rows/s | |`,
  `| daily append (one day, ${funds} funds), wall | ${daily.seconds.toFixed(1)} s (peak RSS ${(daily.maxRssMiB / 1024).toFixed(2)} GiB) | < 10 s |`,
  `| snapshot load + verify (median of 3) | ${loads[1].toFixed(2)} s | < 3 s |`,
  `| snapshot bytes on disk | ${bytes.toLocaleString('en-US')} (${(bytes / gib).toFixed(2)} GiB) | |`,
  '',
  'Build phases (ms): ' + (/phases (.*)/.exec(build.stderr)?.[1] ?? '?'),
  '',
  'Daily phases (ms): ' + (/phases (.*)/.exec(daily.stderr)?.[1] ?? '?'),
];
const report = lines.join('\n');
console.log(report);
mkdirSync(join(root, 'bench', 'reports'), { recursive: true });
writeFileSync(join(root, 'bench', 'reports', 'build.md'), `${report}\n`);
