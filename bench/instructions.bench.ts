/**
 * Server instructions per request (callgrind, cli/bench/instructions.ts) for each
 * request kind `fundreturns bench` sends, beside the trivial uWS server's
 * instructions for a body of the same size (cli/bench/baseline-server.ts /sized/N).
 * Counts repeat for the same build and input whatever else the machine does, so a
 * change of a few percent shows, where wrk's ratios swing by ±15 %.
 *
 *   npm run build && npx tsx bench/instructions.bench.ts [--snapshots DIR] [--funds 2000]
 *     [--runs 3] [--requests 500] [--warmup 5000] [--cases trailing,as-of,...] [--out FILE.json]
 *     [--cli OTHER_CHECKOUT/bin/fundreturns.js]
 *
 * FUNDRETURNS_KEEP_CALLGRIND=1 keeps each case's dump for `callgrind_annotate`.
 *
 * Without --snapshots it generates and builds a --funds universe (seed 1) into
 * /tmp/fr-bench-instructions. Each run starts both servers afresh under valgrind (one
 * server thread, `node --single-threaded`) and measures every case; the report gives
 * the median of the runs and their spread ((max − min) / median).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type CountCase,
  type CountedCase,
  casesOf,
  countBaseline,
  countServer,
  hasCallgrind,
  INSTRUCTION_CASES,
  instructionCases,
  summarize,
} from '../cli/bench/instructions.js';
import { fetchUniverse, scenarioRequests } from '../cli/bench/workload.js';
import { benchArgs } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
/** --cli: the fundreturns to measure (another checkout's bin/fundreturns.js, for a before/after). */
const args0 = benchArgs();
const cli = args0.get('cli') ?? join(root, 'bin', 'fundreturns.js');
const args = args0;
const runs = Number(args.get('runs') ?? 3);
const requests = Number(args.get('requests') ?? 500);
// V8 is still compiling the hot path after 1,000 lookups (TurboFan shows in the profile);
// after 5,000 the counts settle. A batch runs its inner functions 100 times a request.
const warmup = Number(args.get('warmup') ?? 5000);
const funds = Number(args.get('funds') ?? 2000);
const only = args.get('cases')?.split(',') ?? null;
const CASES = INSTRUCTION_CASES;
const outJson = args.get('out');

if (!hasCallgrind()) {
  console.error('valgrind (with callgrind_control) is not installed: apt-get install -y valgrind');
  process.exit(2);
}

const work = '/tmp/fr-bench-instructions';
let snapshots = args.get('snapshots');
const run = (argv: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...argv], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fundreturns ${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
if (snapshots === undefined) {
  snapshots = join(work, `snapshots-${funds}`);
  if (!existsSync(join(snapshots, 'CURRENT'))) {
    console.error(`generating and building ${funds} funds into ${work} …`);
    const source = join(work, `source-${funds}`);
    rmSync(source, { recursive: true, force: true });
    run(['generate', '--out', source, '--funds', String(funds), '--seed', '1', '--from', '1990-01-01']);
    run(['build', '--source', source, '--snapshots', snapshots]);
  }
}
mkdirSync(work, { recursive: true });
const store = mkdtempSync(join(tmpdir(), 'fr-instr-store-'));
const plans = join(store, 'plans.json');
writeFileSync(plans, JSON.stringify({ business: { burst: 1_000_000_000, monthly: 1_000_000_000 } }));
run(['accounts', 'create', 'bench', '--plan', 'business', '--store', join(store, 's')]);
const key = (
  JSON.parse(run(['keys', 'create', 'bench', '--json', '--store', join(store, 's')])) as { key: string }
).key;
const auth = { authorization: `Bearer ${key}` };

const cases = instructionCases(only ?? CASES.map((c) => c.name));
const rows = new Map(
  cases.map((c) => [c.name, { server: [] as number[][], baseline: [] as number[][], bodyBytes: 0 }]),
);
const dumps = mkdtempSync(join(tmpdir(), 'fr-callgrind-'));
const settings = { warmup, requests };
const serveArgs = (port: number) => [
  cli,
  'serve',
  '--port',
  String(port),
  '--threads',
  '1',
  '--snapshots',
  snapshots,
  '--store',
  join(store, 's'),
  '--plans',
  plans,
  '--access-log-sample',
  '0',
];
let lists: CountCase[] | null = null;
for (let i = 0; i < runs; i++) {
  console.error(`run ${i + 1}/${runs}: starting the server under valgrind …`);
  const counted = await countServer(
    serveArgs,
    /serving on http/,
    async (url) => {
      lists ??= casesOf(cases, scenarioRequests(await fetchUniverse(url, auth)));
      return lists;
    },
    settings,
    dumps,
    auth,
    (c) =>
      console.error(`  ${c.name}: ${c.windows.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')}`),
  );
  const base = await countBaseline(counted, lists ?? [], settings, dumps);
  for (const c of counted) {
    const row = rows.get(c.name) as { server: number[][]; baseline: number[][]; bodyBytes: number };
    row.server.push(c.windows);
    row.bodyBytes = c.bodyBytes;
    row.baseline.push((base.find((b) => b.name === c.name) as CountedCase).windows);
  }
}
if (process.env.FUNDRETURNS_KEEP_CALLGRIND === '1') console.error(`callgrind dumps kept in ${dumps}`);
else rmSync(dumps, { recursive: true, force: true });
rmSync(store, { recursive: true, force: true });

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const result = cases.map((c) => {
  const r = rows.get(c.name) as { server: number[][]; baseline: number[][]; bodyBytes: number };
  const server = summarize(r.server);
  const baseline = summarize(r.baseline);
  return {
    case: c.name,
    label: c.label,
    bodyBytes: r.bodyBytes,
    server,
    baseline,
    ratio: server.least / baseline.least,
    ratioTypical: server.typical / baseline.typical,
    windows: { server: r.server, baseline: r.baseline },
  };
});
console.log(
  '| case | body bytes | server: least window (spread) | server: median window (spread) | baseline: least (spread) | least / baseline | median / baseline |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of result)
  console.log(
    `| ${r.label} | ${int(r.bodyBytes)} | ${int(r.server.least)} (${pct(r.server.leastSpread)}) | ${int(r.server.typical)} (${pct(r.server.typicalSpread)}) | ${int(r.baseline.least)} (${pct(r.baseline.leastSpread)}) | ${r.ratio.toFixed(2)}× | ${r.ratioTypical.toFixed(2)}× |`,
  );
if (outJson !== undefined)
  writeFileSync(outJson, `${JSON.stringify({ runs, requests, warmup, result }, null, 2)}\n`);
