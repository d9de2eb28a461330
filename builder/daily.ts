/**
 * The daily append (C37): extend the live snapshot's series with one or more
 * `daily/<YYYY-MM-DD>.csv` files without reading any history. Each row's growth
 * factor, (Close + Dividend) × Split / previous Close, multiplies the fund's last
 * index value; the snapshot keeps each fund's last raw close for the next day.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { now } from '../core/clock.js';
import { formatDay } from '../core/dates.js';
import { nextIndexValue } from '../core/growth.js';
import { readCurrent } from '../core/snapshot/directory.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { BuildError, type BuildResult, checkBound, phaseTimer, writeAndPublish } from './build.js';
import { deriveRows, UNCHANGED } from './derive.js';
import { BuildReport } from './report.js';
import { latestAcceptedDay } from './source/csv.js';
import { parseDailyFile } from './source/daily.js';
import { dailyEntries } from './source/layout.js';

export interface DailyOptions {
  /** A daily CSV file, or a directory whose `daily/*.csv` (or `*.csv`) are applied in date order. */
  daily: string;
  snapshots: string;
  keep: number;
  maxBadShare: number;
  now?: () => Date;
}

interface Appended {
  dates: number[];
  values: number[];
  lastClose: number;
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

  const index = new Map<string, number>();
  for (let i = 0; i < prev.funds.length; i++) index.set(prev.funds.code[i], i);
  const appended = new Map<number, Appended>();
  for (const path of files) {
    const name = basename(path);
    const parsed = parseDailyFile(readFileSync(path), name, latest);
    report.dataRows += parsed.dataRows;
    for (const p of parsed.problems) report.add(p);
    const rows = parsed.rows;
    // Apply a file's rows per fund in date order; the file name only orders files (C37).
    const order = Array.from({ length: rows.length }, (_, i) => i).sort(
      (a, b) => rows.dates[a] - rows.dates[b],
    );
    for (const r of order) {
      const code = rows.codes[r];
      const f = index.get(code);
      const line = rows.lines[r];
      if (f === undefined) {
        report.add({ reason: 'daily_unknown_fund', file: name, line, code });
        continue;
      }
      let a = appended.get(f);
      const lastIdx = prev.funds.seriesOffset[f] + prev.funds.seriesLength[f] - 1;
      const lastDate = a && a.dates.length > 0 ? a.dates[a.dates.length - 1] : prev.series.date[lastIdx];
      const lastValue = a && a.values.length > 0 ? a.values[a.values.length - 1] : prev.series.value[lastIdx];
      const lastClose = a ? a.lastClose : prev.funds.lastClose[f];
      if (rows.dates[r] <= lastDate) {
        report.add({
          reason: 'daily_stale_row',
          file: name,
          line,
          code,
          detail: `${formatDay(rows.dates[r])} is not after the fund's last observation ${formatDay(lastDate)}`,
        });
        continue;
      }
      if (!(lastClose > 0)) {
        report.add({ reason: 'daily_no_previous_close', file: name, line, code });
        continue;
      }
      const value = nextIndexValue(lastValue, rows.close[r], rows.dividend[r], rows.split[r], lastClose);
      if (!Number.isFinite(value) || value <= 0) {
        report.add({
          reason: 'daily_bad_row',
          file: name,
          line,
          code,
          detail: 'growth factor is not finite and positive',
        });
        continue;
      }
      if (!a) {
        a = { dates: [], values: [], lastClose };
        appended.set(f, a);
      }
      a.dates.push(rows.dates[r]);
      a.values.push(value);
      a.lastClose = rows.close[r];
    }
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

  let added = 0;
  for (const a of appended.values()) added += a.dates.length;
  if (added === 0) {
    // Nothing new (a file applied twice, say): publishing a copy would only churn the servers.
    return { id: current, dir: base.dir, manifest: base.manifest, report, timings, unchanged: true };
  }

  // One pass copying each fund's old slice plus its new observations.
  const n = prev.funds.length;
  const total = prev.series.date.length + added;
  // Shared memory lets the writer hash the series in a helper thread while it writes.
  const date = new Int32Array(new SharedArrayBuffer(total * 4));
  const value = new Float64Array(new SharedArrayBuffer(total * 8));
  const seriesOffset = new Int32Array(n);
  const seriesLength = new Int32Array(n);
  const lastClose = Float64Array.from(prev.funds.lastClose);
  const firstNewDay = new Int32Array(n).fill(UNCHANGED);
  let cursor = 0;
  for (let f = 0; f < n; f++) {
    const from = prev.funds.seriesOffset[f];
    const len = prev.funds.seriesLength[f];
    date.set(prev.series.date.subarray(from, from + len), cursor);
    value.set(prev.series.value.subarray(from, from + len), cursor);
    seriesOffset[f] = cursor;
    cursor += len;
    const a = appended.get(f);
    if (a) {
      date.set(a.dates, cursor);
      value.set(a.values, cursor);
      cursor += a.dates.length;
      lastClose[f] = a.lastClose;
      firstNewDay[f] = a.dates[0];
    }
    seriesLength[f] = cursor - seriesOffset[f];
  }
  const series = { date, value };
  const derived = deriveRows(series, seriesOffset, seriesLength, {
    trailing: prev.trailing,
    calendar: prev.calendar,
    firstNewDay,
  });
  lap('derive');

  const funds = { ...prev.funds, seriesOffset, seriesLength, lastClose };
  return await writeAndPublish(
    { funds, series, trailing: derived.trailing, calendar: derived.calendar },
    report,
    { kind: 'daily', base: current, files: files.map((p) => basename(p)), appendedRows: added },
    opts,
    timings,
    lap,
  );
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
