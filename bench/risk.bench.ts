/**
 * Micro-benchmarks of the risk answers below HTTP, on a live snapshot (C38–C46): a
 * risk row at a random past date (the month-end walk, every window's figures, the
 * drawdown scans and the bytes), the same against a benchmark, the latest row from
 * the stored columns, and a batch of 100 at the latest date; then the memory the
 * risk data adds to the snapshot and to this process.
 *
 *   npm run build && npx tsx bench/risk.bench.ts [--snapshots /tmp/fr-bench/snapshots]
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { formatDay, parseDay } from '../core/dates.js';
import { RISK_SLOTS, RISK_WINDOWS, riskAnchor, riskFigures } from '../core/risk.js';
import { ARROW_FILES, RATES_FILE, RISK_FILE } from '../core/snapshot/schema.js';
import { getRisk, riskBatch } from '../server/api/risk-answers.js';
import { seededRandom } from '../test/seeded-random.js';
import { benchArgs, DEFAULT_SNAPSHOTS, servingSnapshot } from './setup.js';

const args = benchArgs();
const rssBefore = process.memoryUsage().rss;
const { snap, id } = await servingSnapshot(args);
const { lookup } = snap;
const codes = lookup.cols.funds.code;
const n = codes.length;
const RANDOM = 1 << 14;
const rand = seededRandom(4242);
const randomCodes: string[] = [];
const randomDates: string[] = [];
for (let j = 0; j < RANDOM; j++) {
  const i = Math.floor(rand() * n);
  const s = lookup.series(i);
  const first = s.date[s.start];
  randomCodes.push(codes[i]);
  randomDates.push(formatDay(first + Math.floor(rand() * (s.date[s.start + s.length - 1] - first + 1))));
}
const benchmark = codes[0];
const out = new Float64Array(RISK_WINDOWS.length * RISK_SLOTS);
const batchBodies = Array.from({ length: 64 }, () =>
  Buffer.from(JSON.stringify({ codes: Array.from({ length: 100 }, () => codes[Math.floor(rand() * n)]) })),
);
let k = 0;
let sink = 0;

const bench = new Bench({ time: 2000 });
bench
  .add('as_of risk row at a random date, as served (validate + find + maths + bytes)', () => {
    const j = k++ & (RANDOM - 1);
    const a = getRisk(snap, randomCodes[j], { as_of: randomDates[j] });
    sink += a.status === 200 ? a.body.length : 0;
  })
  .add(`as_of risk row at a random date against benchmark ${benchmark}`, () => {
    const j = k++ & (RANDOM - 1);
    const a = getRisk(snap, randomCodes[j], { as_of: randomDates[j], benchmark });
    sink += a.status === 200 ? a.body.length : 0;
  })
  .add('as_of risk figures only (maths, no bytes)', () => {
    const j = k++ & (RANDOM - 1);
    const s = lookup.series(lookup.find(randomCodes[j]));
    const anchor = riskAnchor(s, parseDay(randomDates[j]) ?? 0);
    if (anchor !== null) riskFigures(s, anchor, snap.rates, null, out);
    sink += Number.isNaN(out[0]) ? 0 : 1;
  })
  .add('latest risk row (stored columns + bytes)', () => {
    const a = getRisk(snap, codes[k++ % n], {});
    sink += a.status === 200 ? a.body.length : 0;
  })
  .add('latest risk row against a benchmark (stored + beta walk)', () => {
    const a = getRisk(snap, codes[k++ % n], { benchmark });
    sink += a.status === 200 ? a.body.length : 0;
  })
  .add('batch of 100 random funds, latest (POST /v1/risk/batch body)', () => {
    const a = riskBatch(snap, batchBodies[k++ & 63], 'application/json');
    sink += a.status === 200 ? a.body.length : 0;
  });

await bench.run();
const rows = bench.tasks.map((t) => {
  const r = t.result as { latency?: { mean: number; p50?: number; p99: number } } | undefined;
  const us = (x: number | undefined) => ((x ?? Number.NaN) * 1000).toFixed(2);
  return {
    case: t.name,
    'p50 µs': us(r?.latency?.p50),
    'mean µs': us(r?.latency?.mean),
    'p99 µs': us(r?.latency?.p99),
  };
});
console.table(rows);

/**
 * CPU time per answer (user + system, process.cpuUsage): what the "µs of
 * server CPU per fund" means, and less disturbed than wall time by other processes
 * on a shared machine (they take turns on the cores; they do not add to this one's CPU).
 */
function cpuPerCall(label: string, calls: number, f: (j: number) => void): void {
  for (let j = 0; j < 1000; j++) f(j);
  const c0 = process.cpuUsage();
  for (let j = 0; j < calls; j++) f(j);
  const c = process.cpuUsage(c0);
  console.log(`${label}: ${((c.user + c.system) / calls).toFixed(2)} µs of CPU per call (${calls} calls)`);
}
cpuPerCall('as_of risk row at a random date, as served', 20_000, (j) => {
  const a = getRisk(snap, randomCodes[j & (RANDOM - 1)], { as_of: randomDates[j & (RANDOM - 1)] });
  sink += a.status;
});
cpuPerCall('as_of risk row at a random date against a benchmark', 20_000, (j) => {
  const a = getRisk(snap, randomCodes[j & (RANDOM - 1)], { as_of: randomDates[j & (RANDOM - 1)], benchmark });
  sink += a.status;
});
cpuPerCall('latest risk row', 50_000, (j) => {
  sink += getRisk(snap, codes[j % n], {}).status;
});
cpuPerCall('batch of 100 random funds, latest', 500, (j) => {
  sink += riskBatch(snap, batchBodies[j & 63], 'application/json').status;
});

const dir = join(args.get('snapshots') ?? DEFAULT_SNAPSHOTS, id);
const bytes = (f: string) => statSync(join(dir, f)).size;
const total = ARROW_FILES.reduce((t, f) => t + bytes(f), 0);
const added = bytes(RISK_FILE) + bytes(RATES_FILE);
console.log(
  `snapshot ${id}: ${n} funds, ${(total / 2 ** 20).toFixed(1)} MiB of Arrow files, of which risk.arrow + rates.arrow ` +
    `${(added / 2 ** 20).toFixed(2)} MiB: +${((added / (total - added)) * 100).toFixed(2)} % over the files without them`,
);
console.log(
  `this process: RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB after loading (${(rssBefore / 2 ** 20).toFixed(0)} MiB before); ` +
    `the risk columns are views onto the shared buffer (${snap.riskColumns.size} screening columns), sink ${sink > 0}`,
);
