/**
 * Worker side of the parallel price read: parse a contiguous range of funds' price
 * files (in code order) straight into this worker's region of the shared series
 * buffers, so the main thread never copies rows between threads.
 */
import { readFileSync, statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { ProblemTally } from './report/problem-tally.js';
import { parsePriceFile } from './source/prices.js';

export interface PriceTask {
  code: string;
  path: string;
  /** How the file is named in the report (relative to the source directory). */
  file: string;
}

export interface PriceWorkerInput {
  tasks: PriceTask[];
  dates: SharedArrayBuffer;
  values: SharedArrayBuffer;
  regionStart: number;
  regionCapacity: number;
}

export type PriceWorkerMessage =
  | { type: 'progress'; files: number; bytes: number }
  | {
      type: 'done';
      lengths: Int32Array;
      lastClose: Float64Array;
      dataRows: number;
      tally: ReturnType<ProblemTally['toJSON']>;
    }
  | { type: 'error'; message: string };

function run(input: PriceWorkerInput): void {
  const dates = new Int32Array(input.dates);
  const values = new Float64Array(input.values);
  const n = input.tasks.length;
  const lengths = new Int32Array(n);
  const lastClose = new Float64Array(n);
  const tally = new ProblemTally();
  let cursor = input.regionStart;
  const end = input.regionStart + input.regionCapacity;
  let dataRows = 0;
  let bytesSinceReport = 0;
  let filesSinceReport = 0;
  for (let i = 0; i < n; i++) {
    const t = input.tasks[i];
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(t.path);
    } catch (e) {
      tally.add({
        reason: 'unreadable_file',
        file: t.file,
        line: 0,
        code: t.code,
        detail: (e as Error).message,
      });
      // Its rows are data the build could not read, like those of a file with a bad
      // header (C36): counted, estimated from its size, so a permissions accident or an
      // I/O error fails the --max-bad-share bound instead of publishing without them.
      const rows = estimatedRows(t.path);
      dataRows += rows;
      for (let k = 0; k < rows; k++)
        tally.add({ reason: 'row_in_unreadable_file', file: t.file, line: 0, code: t.code });
      lastClose[i] = Number.NaN;
      continue;
    }
    const r = parsePriceFile(bytes, t.file, t.code);
    const count = r.dates.length;
    if (cursor + count > end) throw new Error(`series region overflow in ${t.file}`);
    dates.set(r.dates, cursor);
    values.set(r.values, cursor);
    cursor += count;
    lengths[i] = count;
    lastClose[i] = r.lastClose;
    dataRows += r.dataRows;
    for (const p of r.problems) tally.add(p);
    bytesSinceReport += bytes.length;
    filesSinceReport++;
    if (filesSinceReport >= 256) {
      parentPort!.postMessage({ type: 'progress', files: filesSinceReport, bytes: bytesSinceReport });
      filesSinceReport = 0;
      bytesSinceReport = 0;
    }
  }
  parentPort!.postMessage({ type: 'progress', files: filesSinceReport, bytes: bytesSinceReport });
  const done: PriceWorkerMessage = { type: 'done', lengths, lastClose, dataRows, tally: tally.toJSON() };
  parentPort!.postMessage(done, [lengths.buffer, lastClose.buffer]);
}

try {
  run(workerData as PriceWorkerInput);
} catch (e) {
  parentPort!.postMessage({ type: 'error', message: (e as Error).stack ?? String(e) });
}

/** Bytes of a short price row (`2024-01-02,1,1,1,16.26,16.26,0` and its line end). */
const ROW_BYTES_ESTIMATE = 32;

/** Rows an unreadable price file holds, judged by its size; 1 when even that is unknown. */
function estimatedRows(path: string): number {
  try {
    const st = statSync(path);
    return st.isFile() ? Math.max(1, Math.ceil(st.size / ROW_BYTES_ESTIMATE)) : 1;
  } catch {
    return 1;
  }
}
