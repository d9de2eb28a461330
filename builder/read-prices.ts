/**
 * The parallel price read (C35, C36): funds split into contiguous ranges of about
 * equal bytes, one worker each, every worker parsing into its own region of two
 * shared buffers sized by an upper bound. The regions, in fund order, are the
 * series' parts (the writer takes a series in parts): untouched pages of the
 * over-sized buffers are never committed, and nothing is moved, so memory follows
 * the data, not the bound. (Compacting them into one array would commit a second copy
 * of every region after the first: 0.6 GB at 32,000 funds.)
 */
import { statSync } from 'node:fs';
import type { SeriesColumns } from '../core/snapshot/columns.js';
import { startWorker } from '../core/start-thread.js';
import type { PriceTask, PriceWorkerInput, PriceWorkerMessage } from './prices-worker.js';
import type { BuildReport } from './report/build-report.js';
import { mergeTally } from './report/problem-tally.js';

/** The shortest valid data row, `YYYY-MM-DD,1` plus a newline, bounds the row count of a file. */
const MIN_ROW_BYTES = 13;

export interface ReadPricesResult {
  /** Per task (input order): valid observations, 0 when the file had none. */
  lengths: Int32Array;
  /** Per task: offset into the series, its parts joined (meaningful when length > 0). */
  offsets: Int32Array;
  lastClose: Float64Array;
  /** The series in parts, one per reader thread, in fund order; a fund lies within one part. */
  parts: SeriesColumns[];
  dataRows: number;
}

export interface ReadPricesOptions {
  threads: number;
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}

type ReaderDone = Extract<PriceWorkerMessage, { type: 'done' }>;

/** The shared buffers and each reader's region of them. */
interface Regions {
  dates: SharedArrayBuffer;
  values: SharedArrayBuffer;
  /** Per range: first row of its region, and the region's rows. */
  starts: number[];
  capacities: number[];
}

export async function readPrices(
  tasks: PriceTask[],
  report: BuildReport,
  opts: ReadPricesOptions,
): Promise<ReadPricesResult> {
  const sizes = tasks.map((t) => {
    try {
      return statSync(t.path).size;
    } catch {
      return 0;
    }
  });
  const totalBytes = sizes.reduce((a, b) => a + b, 0);
  const ranges = splitByBytes(sizes, Math.max(1, Math.min(opts.threads, tasks.length)));
  const regions = regionsFor(sizes, ranges);
  let bytesDone = 0;
  const onBytes = (bytes: number): void => {
    bytesDone += bytes;
    opts.onProgress?.(bytesDone, totalBytes);
  };
  const results = await Promise.all(
    ranges.map(([from, to], j) =>
      runReader(
        {
          tasks: tasks.slice(from, to),
          dates: regions.dates,
          values: regions.values,
          regionStart: regions.starts[j],
          regionCapacity: regions.capacities[j],
        },
        onBytes,
      ),
    ),
  );
  return joinResults(tasks.length, ranges, regions, results, report);
}

/**
 * One region per range, sized by the most rows its files could hold, in two shared
 * buffers whose untouched pages are never committed.
 */
function regionsFor(sizes: number[], ranges: Array<[number, number]>): Regions {
  const capacities = ranges.map(([from, to]) => {
    let cap = 0;
    for (let i = from; i < to; i++) cap += Math.floor((sizes[i] + 1) / MIN_ROW_BYTES) + 1;
    return cap;
  });
  const totalCapacity = capacities.reduce((a, b) => a + b, 0);
  if (totalCapacity > 2 ** 31 - 1) throw new Error('source too large for one snapshot (over 2^31 rows)');
  const starts: number[] = [];
  let start = 0;
  for (const c of capacities) {
    starts.push(start);
    start += c;
  }
  return {
    dates: new SharedArrayBuffer(totalCapacity * 4),
    values: new SharedArrayBuffer(totalCapacity * 8),
    starts,
    capacities,
  };
}

/** One reader thread over `input`, its progress passed to `onBytes`. */
function runReader(input: PriceWorkerInput, onBytes: (bytes: number) => void): Promise<ReaderDone> {
  return new Promise<ReaderDone>((resolve, reject) => {
    const w = startWorker(import.meta.url, 'prices-worker', { workerData: input });
    let settled = false;
    w.on('message', (m: PriceWorkerMessage) => {
      if (m.type === 'progress') {
        onBytes(m.bytes);
      } else if (m.type === 'done') {
        settled = true;
        resolve(m);
      } else {
        settled = true;
        reject(new Error(`price reader failed: ${m.message}`));
      }
    });
    w.on('error', (e) => {
      settled = true;
      reject(e);
    });
    w.on('exit', (code) => {
      if (!settled) reject(new Error(`price reader exited with code ${code}`));
    });
  });
}

/** The readers' results laid out per task, in input order, and their problems in the report. */
function joinResults(
  taskCount: number,
  ranges: Array<[number, number]>,
  regions: Regions,
  results: ReaderDone[],
  report: BuildReport,
): ReadPricesResult {
  const lengths = new Int32Array(taskCount);
  const offsets = new Int32Array(taskCount);
  const lastClose = new Float64Array(taskCount);
  const parts: SeriesColumns[] = [];
  let dataRows = 0;
  let cursor = 0;
  ranges.forEach(([from], j) => {
    const r = results[j];
    let used = 0;
    for (let k = 0; k < r.lengths.length; k++) used += r.lengths[k];
    parts.push({
      date: new Int32Array(regions.dates, regions.starts[j] * 4, used),
      value: new Float64Array(regions.values, regions.starts[j] * 8, used),
    });
    for (let k = 0; k < r.lengths.length; k++) {
      lengths[from + k] = r.lengths[k];
      offsets[from + k] = cursor;
      lastClose[from + k] = r.lastClose[k];
      cursor += r.lengths[k];
    }
    dataRows += r.dataRows;
    mergeTally(report, r.tally);
  });
  return { lengths, offsets, lastClose, parts, dataRows };
}

/** Contiguous [from, to) ranges with roughly equal byte totals. */
function splitByBytes(sizes: number[], parts: number): Array<[number, number]> {
  const total = sizes.reduce((a, b) => a + b, 0);
  const ranges: Array<[number, number]> = [];
  let from = 0;
  let acc = 0;
  for (let p = 1; p < parts; p++) {
    const target = (total * p) / parts;
    let to = from;
    while (to < sizes.length && acc + sizes[to] <= target) acc += sizes[to++];
    ranges.push([from, to]);
    from = to;
  }
  ranges.push([from, sizes.length]);
  return ranges.filter(([a, b]) => b > a || sizes.length === 0).slice(0, Math.max(1, parts));
}
