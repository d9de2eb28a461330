/**
 * The synthetic universe generator: a deterministic C35 source directory that looks
 * like a data provider's (EODHD) dump of US mutual funds and ETFs. It is the demo's
 * default data, the test-fixture generator and the benchmark dataset.
 *
 * Output depends only on (seed, funds, from, to): not on `threads`, and `dailyDays`
 * only moves the last rows from price files into daily files.
 */

import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { type Day, formatDay } from '../../core/dates.js';
import { startWorker } from '../../core/start-thread.js';
import { DAILY_HEADER } from '../source/daily-file.js';
import { RATES_PATH } from '../source/rates.js';
import type { WorkerMessage } from './generate-thread.js';
import { ratesFileText } from './rates.js';
import { writeGeneratorRecord } from './record.js';
import { runShard, type ShardResult, type ShardTask } from './shard.js';
import { dayIndexOnOrBefore, fundsCsv, planUniverse, type Universe } from './universe.js';

export interface GenerateOptions {
  out: string;
  /** Funds with prices (ETF + FUND); about 0.5 % more funds.csv rows of other types are added. */
  funds: number;
  seed: number;
  from: Day;
  to: Day;
  /**
   * Plan the universe to this later day (default `to`) and write it as it stands on
   * `to`: funds launched later are not listed yet, and the rows after `to` are what
   * `refresh --provider synthetic` delivers day by day.
   */
  horizon?: Day;
  /** The last K trading days on or before `to` go to daily files instead of price files. Default 0. */
  dailyDays?: number;
  /** Default os.availableParallelism(); 1 runs in-process. */
  threads?: number;
  /** Called about every 1 % of funds, and once at the end. */
  onProgress?: (done: number, total: number) => void;
}

export interface GenerateSummary {
  /** Funds with a price file. */
  funds: number;
  priceRows: number;
  dailyFiles: number;
  dailyRows: number;
  /** Every byte written: funds.csv, price files and daily files. */
  bytes: number;
  /** The latest date in the universe (YYYY-MM-DD), whether in a price or a daily file. */
  lastDate: string;
}

export async function generateUniverse(opts: GenerateOptions): Promise<GenerateSummary> {
  const dailyDays = opts.dailyDays ?? 0;
  if (!Number.isInteger(dailyDays) || dailyDays < 0)
    throw new Error(`dailyDays must be an integer ≥ 0: ${dailyDays}`);
  if (!Number.isInteger(opts.seed)) throw new Error(`seed must be an integer: ${opts.seed}`);
  const horizon = opts.horizon ?? opts.to;
  if (horizon < opts.to)
    throw new Error(`the horizon ${formatDay(horizon)} is before --to ${formatDay(opts.to)}`);
  const universe = planUniverse(opts.seed, opts.funds, opts.from, horizon);
  const endIdx = dayIndexOnOrBefore(universe, opts.to);
  const n = endIdx + 1;
  if (dailyDays >= n)
    throw new Error(`dailyDays (${dailyDays}) must be below the ${n} trading days in range`);
  const total = universe.priced.length;
  const threads = Math.max(1, Math.min(opts.threads ?? availableParallelism(), total));

  prepareOutput(opts.out, dailyDays > 0);
  const funds = fundsCsv(universe, endIdx);
  writeFileSync(join(opts.out, 'funds.csv'), funds);
  const rates = ratesFileText(universe, endIdx);
  mkdirSync(join(opts.out, 'rates'), { recursive: true });
  writeFileSync(join(opts.out, RATES_PATH), rates);
  const recordBytes = writeGeneratorRecord(opts.out, {
    seed: opts.seed,
    funds: opts.funds,
    from: opts.from,
    horizon,
  });

  const progress = progressReporter(total, opts.onProgress);
  const task: Omit<ShardTask, 'shard' | 'shards'> = {
    out: opts.out,
    funds: opts.funds,
    seed: opts.seed,
    from: opts.from,
    to: opts.to,
    horizon,
    dailyDays,
  };
  const results =
    threads === 1
      ? [runShard({ ...task, shard: 0, shards: 1 }, () => progress(1), universe)]
      : await runWorkers(task, threads, progress);

  let priceRows = 0;
  let bytes = Buffer.byteLength(funds) + recordBytes + rates.length;
  for (const r of results) {
    priceRows += r.priceRows;
    bytes += r.bytes;
  }
  let dailyRows = 0;
  for (let j = 0; j < dailyDays; j++) {
    const text = dailyFileText(universe, results, j);
    dailyRows += text.rows;
    writeFileSync(join(opts.out, 'daily', `${universe.dates[n - dailyDays + j]}.csv`), text.text);
    bytes += text.text.length;
  }

  let last = 0;
  let listed = 0;
  for (const p of universe.priced) {
    if (p.firstIdx > endIdx) continue;
    listed++;
    last = Math.max(last, Math.min(p.lastIdx, endIdx));
  }
  return {
    funds: listed,
    priceRows,
    dailyFiles: dailyDays,
    dailyRows,
    bytes,
    lastDate: formatDay(universe.days[last]),
  };
}

/** Daily rows in funds.csv (code) order, whichever shard produced them. */
function dailyFileText(
  universe: Universe,
  results: readonly ShardResult[],
  j: number,
): { text: string; rows: number } {
  const byPosition: (string | undefined)[] = new Array(universe.priced.length);
  let rows = 0;
  for (const r of results) {
    const day = r.daily[j];
    for (let i = 0; i < day.positions.length; i++) byPosition[day.positions[i]] = day.rows[i];
    rows += day.rows.length;
  }
  let text = DAILY_HEADER;
  for (const row of byPosition) if (row !== undefined) text += row;
  return { text, rows };
}

/**
 * Creates `out`, `out/prices` and (when needed) `out/daily`. Stale CSVs there from an
 * earlier generation are removed, since a leftover price or daily file would join the
 * new universe; but only when `out` already looks like a source directory (has a
 * funds.csv), so a mistyped `--out` never deletes someone else's files.
 */
function prepareOutput(out: string, daily: boolean): void {
  const isSource = existsSync(join(out, 'funds.csv'));
  for (const sub of ['prices', 'daily']) {
    const dir = join(out, sub);
    if (!existsSync(dir)) continue;
    const csvs = readdirSync(dir).filter((f) => f.endsWith('.csv'));
    if (csvs.length === 0) continue;
    if (!isSource)
      throw new Error(`${dir} holds CSV files but ${out} has no funds.csv: refusing to overwrite`);
    for (const f of csvs) rmSync(join(dir, f));
  }
  mkdirSync(join(out, 'prices'), { recursive: true });
  if (daily) mkdirSync(join(out, 'daily'), { recursive: true });
}

function progressReporter(total: number, cb: GenerateOptions['onProgress']): (k: number) => void {
  if (cb === undefined) return () => {};
  const step = Math.max(1, Math.floor(total / 100));
  let done = 0;
  let next = step;
  return (k: number) => {
    done += k;
    if (done >= next || done === total) {
      cb(done, total);
      next = (Math.floor(done / step) + 1) * step;
    }
  };
}

function spawnWorker(task: ShardTask): Worker {
  return startWorker(import.meta.url, 'generate-thread', { workerData: task });
}

function runWorkers(
  task: Omit<ShardTask, 'shard' | 'shards'>,
  threads: number,
  progress: (k: number) => void,
): Promise<ShardResult[]> {
  const workers: Worker[] = [];
  const runs = Array.from(
    { length: threads },
    (_, shard) =>
      new Promise<ShardResult>((resolve, reject) => {
        const worker = spawnWorker({ ...task, shard, shards: threads });
        workers.push(worker);
        let result: ShardResult | null = null;
        worker.on('message', (msg: WorkerMessage) => {
          if (msg.kind === 'progress') progress(msg.done);
          else result = msg.result;
        });
        worker.on('error', reject);
        worker.on('exit', (code) => {
          if (result !== null) resolve(result);
          else reject(new Error(`generator worker ${shard} exited with code ${code} before finishing`));
        });
      }),
  );
  return Promise.all(runs).catch(async (err: unknown) => {
    await Promise.all(workers.map((w) => w.terminate()));
    throw err;
  });
}
