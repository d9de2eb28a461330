/**
 * The daily append (C37): extend the live snapshot's series with one or more
 * `daily/<YYYY-MM-DD>.csv` files without reading any history. Each row's growth
 * factor, (Close + Dividend) × Split / previous Close, multiplies the fund's last
 * index value; the snapshot keeps each fund's last raw close for the next day.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { now } from '../core/clock.js';
import { readCurrent } from '../core/snapshot/directory.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { appendRows, type RowBatch } from './append.js';
import { BuildError, type BuildResult, checkBound, phaseTimer, writeAndPublish } from './build.js';
import { BuildReport } from './report/build-report.js';
import { latestAcceptedDay } from './source/csv.js';
import { parseDailyFile } from './source/daily-file.js';
import { dailyEntries } from './source/layout.js';
import { readRates } from './source/rates.js';

export interface DailyOptions {
  /** A daily CSV file, or a directory whose `daily/*.csv` (or `*.csv`) are applied in date order. */
  daily: string;
  snapshots: string;
  keep: number;
  maxBadShare: number;
  now?: () => Date;
}

export async function appendDaily(opts: DailyOptions): Promise<BuildResult> {
  const { timings, lap } = phaseTimer();
  const report = new BuildReport();
  const current = readCurrent(opts.snapshots);
  if (current === null) {
    throw new BuildError(`no snapshot in ${opts.snapshots} to append to: run a full build first`, report);
  }
  const base = await loadSnapshot(join(opts.snapshots, current));
  const prev = base.columns;
  lap('load');

  // Rows dated after today (UTC) plus FUTURE_GRACE_DAYS are bad rows (C36), today from the injected clock.
  const latest = latestAcceptedDay((opts.now ?? (() => new Date(now())))().getTime());
  const { files, ignored } = dailyFiles(opts.daily);
  // Not applied, but said: `2026-11-21.CSV` is a day that would otherwise go missing in silence.
  for (const path of ignored)
    report.add({
      reason: 'ignored_file',
      file: basename(path),
      line: 0,
      detail: 'not applied: daily files are named YYYY-MM-DD.csv',
    });
  if (files.length === 0) throw new BuildError(`no daily files found at ${opts.daily}`, report);

  const batches: RowBatch[] = [];
  for (const path of files) {
    const name = basename(path);
    const parsed = parseDailyFile(readFileSync(path), name, latest);
    report.dataRows += parsed.dataRows;
    for (const p of parsed.problems) report.add(p);
    batches.push({ file: name, rows: parsed.rows });
  }
  report.fundsIn = prev.funds.length;
  // An unreadable daily file (empty, binary, its header gone) is a failed delivery,
  // never "nothing to append": a cron job must see it fail.
  const unreadable = report.reasons.get('missing_header_column');
  if (unreadable !== undefined)
    throw new BuildError(
      `${unreadable.first.file} cannot be read as a daily file (${unreadable.first.detail ?? 'no header'}): nothing published`,
      report,
    );
  checkBound(report, opts.maxBadShare);
  lap('parse');

  const out = appendRows(prev, { batches, rates: readRates(sourceOf(opts.daily), report) }, report);
  if (!out.changed) {
    // Nothing new (a file applied twice, say): publishing a copy would only churn the servers.
    return { id: current, dir: base.dir, manifest: base.manifest, report, timings, unchanged: true };
  }
  lap('derive');

  return await writeAndPublish(
    out.columns,
    report,
    { kind: 'daily', base: current, files: files.map((p) => basename(p)), appendedRows: out.added },
    opts,
    timings,
    lap,
  );
}

/** The source directory a daily path lies in: the directory given, or the one holding its daily/ (C41's rates). */
function sourceOf(path: string): string {
  const folder = statSync(path, { throwIfNoEntry: false })?.isDirectory() ? path : dirname(path);
  return basename(folder) === 'daily' ? dirname(folder) : folder;
}

function dailyFiles(path: string): { files: string[]; ignored: string[] } {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return { files: [], ignored: [] };
  }
  if (!st.isDirectory()) return { files: [path], ignored: [] };
  // Either a source directory holding daily/, or the daily/ folder itself.
  const inSource = dailyEntries(path);
  return inSource.files.length > 0 || basename(path) !== 'daily' ? inSource : dailyEntries(dirname(path));
}
