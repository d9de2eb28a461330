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
import { countRequests, hasCallgrind, startCounted } from '../cli/bench/instructions.js';
import type { BenchRequest } from '../cli/bench/load.js';
import { baselineCommand, freePort } from '../cli/bench/processes.js';
import { fetchUniverse, type ScenarioName, scenarioRequests } from '../cli/bench/workload.js';
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

/** What is counted: each kind `fundreturns bench` sends, and MCP's tools/list. */
const CASES: Array<{ name: string; label: string; from: ScenarioName | 'mcp-list' }> = [
  { name: 'trailing', label: 'latest trailing', from: 'trailing' },
  { name: 'as-of', label: 'trailing as_of a random date', from: 'as-of' },
  { name: 'fund', label: 'fund metadata', from: 'fund' },
  { name: 'calendar', label: 'calendar returns', from: 'calendar' },
  { name: 'search', label: 'search q, 10 rows', from: 'search' },
  { name: 'batch-trailing', label: 'batch of 100 trailing', from: 'batch-trailing' },
  { name: 'batch-calendar', label: 'batch of 100 calendar', from: 'batch-calendar' },
  { name: 'mcp', label: 'MCP tools/call (a lookup)', from: 'mcp' },
  { name: 'screen', label: 'screen, 2 bounds and a sort, 20 rows', from: 'screen' },
  { name: 'compare', label: 'compare 10 funds × 6 figures', from: 'compare' },
  { name: 'mcp-list', label: 'MCP tools/list', from: 'mcp-list' },
];
const cases = CASES.filter((c) => only === null || only.includes(c.name));

/** Per run, each measured window's instructions per request. */
interface Row {
  server: number[][];
  baseline: number[][];
  bodyBytes: number;
}
const rows = new Map<string, Row>(cases.map((c) => [c.name, { server: [], baseline: [], bodyBytes: 0 }]));
const live: Array<{ stop(): Promise<void>; child: { kill(s: NodeJS.Signals): boolean } }> = [];
// A bench stopped half-way (Ctrl-C, an error) leaves no valgrind behind.
process.on('exit', () => {
  for (const p of live) p.child.kill('SIGKILL');
});
const dumps = mkdtempSync(join(tmpdir(), 'fr-callgrind-'));

for (let i = 0; i < runs; i++) {
  const port = await freePort();
  console.error(`run ${i + 1}/${runs}: starting the server under valgrind …`);
  const server = await startCounted(
    [
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
    ],
    dumps,
    /serving on http/,
  );
  live.push(server);
  const url = `http://127.0.0.1:${port}`;
  const lists = scenarioRequests(await fetchUniverse(url, auth));
  const mcpList: BenchRequest[] = [
    { method: 'POST', path: '/mcp', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
  ];
  const sizes = new Map<string, { method: 'GET' | 'POST'; bytes: number; body?: string }>();
  try {
    for (const c of cases) {
      const list = c.from === 'mcp-list' ? mcpList : lists[c.from];
      const batch = c.name.startsWith('batch');
      const n = batch ? Math.max(50, Math.round(requests / 4)) : requests;
      const counted = await countRequests(server, dumps, url, list, {
        warmup: batch ? Math.round(warmup / 10) : warmup,
        requests: n,
        headers: auth,
        label: `server-${c.name}-${i + 1}`,
      });
      const row = rows.get(c.name) as Row;
      row.server.push(counted.windows);
      row.bodyBytes = Math.round(counted.bodyBytes);
      sizes.set(c.name, { method: list[0].method, bytes: row.bodyBytes, body: list[0].body });
      console.error(
        `  ${c.label}: ${counted.windows.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')}`,
      );
    }
  } finally {
    await server.stop();
  }
  const bport = await freePort();
  const baseline = await startCounted(
    [...baselineCommand(), String(bport), '1', '0'],
    dumps,
    /baseline listening/,
  );
  live.push(baseline);
  try {
    for (const c of cases) {
      const s = sizes.get(c.name);
      if (s === undefined) continue;
      const list: BenchRequest[] = [{ method: s.method, path: `/sized/${s.bytes}`, body: s.body }];
      const batch = c.name.startsWith('batch');
      const n = batch ? Math.max(50, Math.round(requests / 4)) : requests;
      const counted = await countRequests(baseline, dumps, `http://127.0.0.1:${bport}`, list, {
        warmup: batch ? Math.round(warmup / 10) : warmup,
        requests: n,
      });
      (rows.get(c.name) as Row).baseline.push(counted.windows);
    }
  } finally {
    await baseline.stop();
  }
}
if (process.env.FUNDRETURNS_KEEP_CALLGRIND === '1') console.error(`callgrind dumps kept in ${dumps}`);
else rmSync(dumps, { recursive: true, force: true });
rmSync(store, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
const int = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
// Per run: its smallest window (the request's own path: no collection fell into it) and
// its median window (with the share of GC a request brings). Across runs: the median,
// and the spread of the runs' figures.
const summary = (runsOf: number[][]) => {
  const least = runsOf.map((w) => Math.min(...w));
  const typical = runsOf.map(median);
  return {
    least: median(least),
    leastSpread: spread(least),
    typical: median(typical),
    typicalSpread: spread(typical),
  };
};
const result = cases.map((c) => {
  const r = rows.get(c.name) as Row;
  const server = summary(r.server);
  const baseline = summary(r.baseline);
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
