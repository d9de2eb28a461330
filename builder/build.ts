/**
 * The full build: source directory (C35) → verified snapshot → atomic publish.
 * Bad input is skipped and reported (C36); a build over the bad-row bound, or one
 * that fails in any way, publishes nothing and leaves CURRENT as it was.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { now } from '../core/clock.js';
import { compareCodes } from '../core/codes.js';
import { formatDay } from '../core/dates.js';
import { type ColumnsToWrite, type FundColumns, NULL_DAY } from '../core/snapshot/columns.js';
import {
  listSnapshots,
  prune,
  publish,
  readCurrent,
  removeStaleStaging,
  snapshotId,
  stagingDir,
} from '../core/snapshot/directory.js';
import { maxLastDate } from '../core/snapshot/invariants.js';
import type { Manifest } from '../core/snapshot/manifest.js';
import { readManifest } from '../core/snapshot/reader.js';
import { writeSnapshotFiles } from '../core/snapshot/writer.js';
import type { FundRecord } from '../core/types.js';
import { deriveRows } from './derive.js';
import type { PriceTask } from './prices-worker.js';
import { readPrices } from './read-prices.js';
import { BuildReport } from './report/build-report.js';
import { type FundsFileResult, parseFundsFile } from './source/funds.js';
import { sourcePaths } from './source/layout.js';
import { NO_RATES, readRates } from './source/rates.js';

export interface BuildOptions {
  source: string;
  snapshots: string;
  /** Snapshots to keep after publishing (the live one always stays). */
  keep: number;
  /** C36: the build fails when skipped rows ÷ data rows exceeds this. */
  maxBadShare: number;
  /** Publish even when the universe shrank to under half the live snapshot's funds. */
  allowShrink?: boolean;
  threads: number;
  now?: () => Date;
  onProgress?: (phase: string, done: number, total: number) => void;
}

export interface BuildResult {
  id: string;
  dir: string;
  manifest: Manifest;
  report: BuildReport;
  timings: Record<string, number>;
  /** True when a daily append had nothing to add and published nothing. */
  unchanged?: boolean;
}

/** A build that must not publish; carries the report so far for the operator. */
export class BuildError extends Error {
  constructor(
    message: string,
    readonly report: BuildReport,
  ) {
    super(message);
    this.name = 'BuildError';
  }
}

export async function buildFromSource(opts: BuildOptions): Promise<BuildResult> {
  const { timings, lap } = phaseTimer();
  const report = new BuildReport();
  const { listed, tasks, taskFunds } = fundTasks(opts.source, report);
  lap('funds');

  const read = await readPrices(tasks, report, {
    threads: opts.threads,
    onProgress: (done, total) => opts.onProgress?.('read', done, total),
  });
  report.dataRows = read.dataRows;
  const rates = readRates(opts.source, report) ?? NO_RATES;
  lap('read');

  const keep = tasksWithRows(tasks, read.lengths, report);
  report.fundsIn = keep.length;
  report.fundsOut = listed - keep.length;
  checkBound(report, opts.maxBadShare);
  if (keep.length === 0) throw new BuildError('no fund has a valid price row: nothing to publish', report);
  if (!opts.allowShrink) checkShrink(opts.snapshots, keep.length, report);

  const fundCols = fundColumns(
    keep.map((i) => taskFunds[i]),
    keep.map((i) => read.offsets[i]),
    keep.map((i) => read.lengths[i]),
    keep.map((i) => read.lastClose[i]),
  );
  const series = read.parts;
  const derived = deriveRows(series, fundCols.seriesOffset, fundCols.seriesLength, rates);
  lap('derive');

  return await writeAndPublish(
    {
      funds: fundCols,
      series,
      trailing: derived.trailing,
      calendar: derived.calendar,
      risk: derived.risk,
      rates,
    },
    report,
    { kind: 'full', source: opts.source },
    opts,
    timings,
    lap,
  );
}

/**
 * The source's funds.csv paired with its price files: one read task per fund that has
 * a price file, in code order. A fund without one, a price file without a fund and a
 * file in prices/ that is not read are reported (C36).
 */
function fundTasks(
  source: string,
  report: BuildReport,
): {
  /** Funds accepted from funds.csv. */
  listed: number;
  tasks: PriceTask[];
  /** The fund of each task. */
  taskFunds: FundRecord[];
} {
  const paths = sourcePaths(source);
  const parsed = readFundsFile(source, paths.fundsFile, report);

  // Not read, but said: `AOEWX.CSV` or `notes.txt` in prices/ is a fund's data gone missing, or nothing.
  for (const name of paths.ignored)
    report.add({
      reason: 'ignored_file',
      file: relative(source, join(paths.pricesDir, name)),
      line: 0,
      detail: 'not read: price files are named <code>.csv',
    });

  const funds = [...parsed.funds].sort((a, b) => compareCodes(a.code, b.code));
  const tasks: PriceTask[] = [];
  const taskFunds: FundRecord[] = [];
  const withFund = new Set<string>();
  for (const f of funds) {
    const path = paths.priceFiles.get(f.code);
    withFund.add(f.code);
    if (path === undefined) {
      report.add({
        reason: 'fund_without_prices',
        file: parsed.file,
        line: parsed.lines.get(f.code) ?? 0,
        code: f.code,
      });
      continue;
    }
    tasks.push({ code: f.code, path, file: relative(source, path) });
    taskFunds.push(f);
  }
  for (const [code, path] of paths.priceFiles) {
    if (!withFund.has(code)) {
      report.add({ reason: 'prices_without_fund', file: relative(source, path), line: 0, code });
    }
  }
  return { listed: funds.length, tasks, taskFunds };
}

/** funds.csv parsed, its problems and skipped types reported; unreadable, the build fails. */
function readFundsFile(
  source: string,
  fundsFile: string,
  report: BuildReport,
): FundsFileResult & { file: string } {
  let fundsBytes: Uint8Array;
  try {
    fundsBytes = readFileSync(fundsFile);
  } catch (e) {
    throw new BuildError(`cannot read ${fundsFile}: ${(e as Error).message}`, report);
  }
  const file = relative(source, fundsFile);
  const parsed = parseFundsFile(fundsBytes, file);
  for (const p of parsed.problems) report.add(p);
  report.skippedFundTypes = parsed.skippedOtherTypes;
  return { ...parsed, file };
}

/** Indices of the tasks that read at least one valid row; the others are reported. */
function tasksWithRows(
  tasks: readonly PriceTask[],
  lengths: ArrayLike<number>,
  report: BuildReport,
): number[] {
  const keep: number[] = [];
  for (let i = 0; i < tasks.length; i++) {
    if (lengths[i] > 0) keep.push(i);
    else report.add({ reason: 'fund_without_valid_rows', file: tasks[i].file, line: 0, code: tasks[i].code });
  }
  return keep;
}

/** Milliseconds per named phase of a build, for the operator's summary line. */
export function phaseTimer(): { timings: Record<string, number>; lap: (name: string) => void } {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  return {
    timings,
    lap: (name) => {
      const t = performance.now();
      timings[name] = Math.round(t - t0);
      t0 = t;
    },
  };
}

/**
 * A full build whose universe is under half the live one's is refused: a funds.csv
 * cut off mid-upload, or price files whose header went wrong, would otherwise
 * publish and turn most codes into 404s at once. `--allow-shrink` publishes it.
 */
function checkShrink(snapshots: string, funds: number, report: BuildReport): void {
  const live = liveUniverse(snapshots);
  if (live === null) return;
  if (funds * 2 < live.funds)
    throw new BuildError(
      `the new snapshot would have ${funds} funds, the ${live.which} (${live.id}) has ${live.funds}: refusing to publish ` +
        'a universe that lost more than half its funds (a truncated funds.csv, unreadable price files?). ' +
        'Pass --allow-shrink to publish it anyway.',
      report,
    );
}

/**
 * The universe a new build is measured against: CURRENT's snapshot, or, when CURRENT
 * is missing or names nothing readable (a deleted or damaged snapshot: when the guard
 * matters most), the newest published snapshot whose manifest reads. Null: none.
 */
function liveUniverse(snapshots: string): { id: string; funds: number; which: string } | null {
  const current = readCurrent(snapshots);
  const live = current === null ? null : fundsIn(snapshots, current);
  if (current !== null && live !== null) return { id: current, funds: live, which: 'live one' };
  const published = listSnapshots(snapshots);
  for (let i = published.length - 1; i >= 0; i--) {
    const n = fundsIn(snapshots, published[i].id);
    if (n !== null) return { id: published[i].id, funds: n, which: 'newest published one' };
  }
  return null;
}

/** A published snapshot's fund count from its manifest, or null when that does not read. */
function fundsIn(snapshots: string, id: string): number | null {
  try {
    return readManifest(join(snapshots, id)).counts.funds;
  } catch {
    return null;
  }
}

/** A share just over its bound, with the digits that show it is over (1.0002 %, not 1.000 %). */
function percentOver(share: number, bound: number): string {
  for (let digits = 3; digits < 12; digits++) {
    const text = (share * 100).toFixed(digits);
    if (Number(text) > bound * 100) return `${text} %`;
  }
  return `${share * 100} %`;
}

/** C36: too many skipped rows fails the build before anything is written. */
export function checkBound(report: BuildReport, maxBadShare: number): void {
  if (report.skippedShare > maxBadShare) {
    throw new BuildError(
      `skipped ${report.skippedRows} of ${report.dataRows} data rows (${percentOver(report.skippedShare, maxBadShare)}), ` +
        `over the bound of ${(maxBadShare * 100).toFixed(3)} %: nothing published`,
      report,
    );
  }
}

export function fundColumns(
  records: FundRecord[],
  offsets: ArrayLike<number>,
  lengths: ArrayLike<number>,
  lastClose: ArrayLike<number>,
): FundColumns {
  const n = records.length;
  return {
    length: n,
    code: records.map((f) => f.code),
    name: records.map((f) => f.name),
    country: records.map((f) => f.country),
    exchange: records.map((f) => f.exchange),
    currency: records.map((f) => f.currency),
    type: records.map((f) => f.type),
    isin: records.map((f) => f.isin),
    isInactive: Uint8Array.from(records, (f) => (f.isInactive ? 1 : 0)),
    inactiveDate: Int32Array.from(records, (f) => f.inactiveDate ?? NULL_DAY),
    seriesOffset: Int32Array.from({ length: n }, (_, i) => offsets[i]),
    seriesLength: Int32Array.from({ length: n }, (_, i) => lengths[i]),
    lastClose: Float64Array.from({ length: n }, (_, i) => lastClose[i]),
  };
}

/** The newest last observation over all funds: the snapshot's as_of. */
export function snapshotAsOf(cols: ColumnsToWrite): string {
  return formatDay(maxLastDate(cols));
}

export async function writeAndPublish(
  cols: ColumnsToWrite,
  report: BuildReport,
  source: Record<string, unknown>,
  opts: Pick<BuildOptions, 'snapshots' | 'keep' | 'now'>,
  timings: Record<string, number>,
  lap: (name: string) => void,
): Promise<BuildResult> {
  const builtAt = (opts.now ?? (() => new Date(now())))();
  const asOf = snapshotAsOf(cols);
  const id = snapshotId(asOf, builtAt);
  // Staging left by a build that failed or was killed first: on a full disk, keeping
  // it would fail every build after (one build at a time holds the lock).
  removeStaleStaging(opts.snapshots);
  const staging = stagingDir(opts.snapshots, id);
  let manifest: Awaited<ReturnType<typeof writeSnapshotFiles>>;
  let dir: string;
  try {
    manifest = await writeSnapshotFiles(staging, cols, {
      id,
      asOf,
      builtAt: builtAt.toISOString(),
      report: report.toJSON() as unknown as Record<string, unknown>,
      source,
    });
    lap('write');
    dir = publish(opts.snapshots, staging, id);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `cannot write snapshot ${id} into ${opts.snapshots}: ${(e as Error).message}; nothing published, ` +
        'the live snapshot is unchanged',
    );
  }
  prune(opts.snapshots, opts.keep);
  lap('publish');
  return { id, dir, manifest, report, timings };
}
