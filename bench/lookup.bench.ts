/**
 * Micro-benchmarks of the request hot path below HTTP, on a live snapshot:
 * code → index, the pre-serialized latest row, an on-demand as_of row (binary
 * searches + core maths + C1 formatting; at random dates and, as a floor, on one
 * fund and date whose data stays in cache), an explicit calendar year, and request
 * validation.
 *
 *   npm run build && npx tsx bench/lookup.bench.ts [--snapshots /tmp/fr-bench/snapshots]
 */
import { Bench } from 'tinybench';
import { parseDay } from '../core/dates.js';
import { trailingFigures } from '../core/returns.js';
import { ByteSink, trailingRowJson, writeTrailingRow } from '../core/rows.js';
import { TRAILING_KEYS } from '../core/types.js';
import { trailingRowAt } from '../server/api/answers.js';
import { scanPlainCodes } from '../server/api/batch-scan.js';
import { validateTrailingBatchBody, validateTrailingParams } from '../server/api/validation.js';
import { RowKind } from '../server/snapshot/prepared.js';
import { seededRandom } from '../test/seeded-random.js';
import { benchArgs, servingSnapshot } from './setup.js';

const { snap: serving } = await servingSnapshot(benchArgs());
const { lookup, rows } = serving;
const codes = lookup.cols.funds.code;
const n = codes.length;
const asOf = parseDay('2019-06-14')!;
const scratch = new Float64Array(TRAILING_KEYS.length);
const batchBody = Buffer.from(JSON.stringify({ codes: codes.slice(0, 100) }));
/** Random funds at random dates within each one's history (spread over the whole 1.2 GB series, as the HTTP bench). */
const RANDOM = 1 << 14;
const randomCodes: string[] = [];
const randomDays = new Int32Array(RANDOM);
const rand = seededRandom(12345);
for (let j = 0; j < RANDOM; j++) {
  const i = Math.floor(rand() * n);
  const s = lookup.series(i);
  const first = s.date[s.start];
  randomCodes.push(codes[i]);
  randomDays[j] = first + Math.floor(rand() * (s.date[s.start + s.length - 1] - first + 1));
}
/** 64 batches of 100 random funds, for the join cases. */
const joinFunds = Int32Array.from({ length: 6400 }, () => Math.floor(rand() * n));
let k = 0;
let sink = 0;
/** One as_of row's figures and code, for the row writer alone (no maths, no lookup). */
const rowFigures = trailingFigures(lookup.series(0), lookup.series(0).date[lookup.series(0).start + 300]) ?? {
  asOf: 0,
  values: new Float64Array(TRAILING_KEYS.length),
};
const rowCode = rows.row(RowKind.Code, 0);
const rowSink = new ByteSink();

const bench = new Bench({ time: 1000 });
bench
  .add('find(code)', () => {
    sink += lookup.find(codes[k++ % n]);
  })
  .add('latest trailing row (find + prepared bytes)', () => {
    sink += rows.row(RowKind.Trailing, lookup.find(codes[k++ % n])).byteLength;
  })
  .add('as_of trailing row (find + maths + JSON)', () => {
    const i = lookup.find(codes[k++ % n]);
    const f = trailingFigures(lookup.series(i), asOf, scratch);
    sink += f === null ? 0 : trailingRowJson(codes[i], f).length;
  })
  .add('as_of row at random dates, as served (find + maths + bytes)', () => {
    const j = k++ & (RANDOM - 1);
    sink += trailingRowAt(serving, lookup.find(randomCodes[j]), randomDays[j])?.byteLength ?? 0;
  })
  .add('as_of figures only at random dates (maths, no bytes)', () => {
    const j = k++ & (RANDOM - 1);
    const f = trailingFigures(lookup.series(lookup.find(randomCodes[j])), randomDays[j], scratch);
    sink += f === null ? 0 : f.asOf;
  })
  .add('write one trailing row as bytes (fragments + 20 C1 figures)', () => {
    rowSink.at = 0;
    writeTrailingRow(rowSink, rowCode, rowFigures);
    sink += rowSink.at;
  })
  .add('as_of row, one fund and date again and again (all in cache)', () => {
    sink += trailingRowAt(serving, lookup.find(randomCodes[0]), randomDays[0])?.byteLength ?? 0;
  })
  .add('calendar year 2015 (find + binary search + JSON)', () => {
    sink += lookup.calendarYearJson(lookup.find(codes[k++ % n]), 2015)?.length ?? 0;
  })
  .add('validate trailing params (code, as_of)', () => {
    sink += validateTrailingParams(codes[k++ % n], { as_of: '2019-06-14' }).ok ? 1 : 0;
  })
  .add('join 100 latest rows of random funds (a batch answer)', () => {
    const at = (k++ & 63) * 100;
    sink += rows.join(RowKind.Trailing, joinFunds.subarray(at, at + 100), 100).length;
  })
  .add('join the same 100 latest rows again and again (all in cache)', () => {
    sink += rows.join(RowKind.Trailing, joinFunds.subarray(0, 100), 100).length;
  })
  .add('scan a plain batch body of 100 codes (batch-scan.ts)', () => {
    sink += scanPlainCodes(batchBody);
  })
  .add('validate batch body of 100 codes', () => {
    sink += validateTrailingBatchBody(batchBody, 'application/json').ok ? 1 : 0;
  });
await bench.run();
console.log(`${'case'.padEnd(62)}${'ops/s'.padStart(14)}${'mean µs'.padStart(10)}${'p99 µs'.padStart(10)}`);
for (const task of bench.tasks) {
  const r = task.result;
  if (r.state !== 'completed') {
    console.log(`${task.name.padEnd(62)} ${r.state}`);
    continue;
  }
  const ops = Math.round(r.throughput.mean).toLocaleString('en-US');
  const mean = (r.latency.mean * 1000).toFixed(3);
  const p99 = (r.latency.p99 * 1000).toFixed(3);
  console.log(`${task.name.padEnd(62)}${ops.padStart(14)}${mean.padStart(10)}${p99.padStart(10)}`);
}
if (sink === 42) console.log('');
