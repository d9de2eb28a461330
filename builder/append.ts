/**
 * The append step shared by `build --daily` and `refresh` (C37): extend a snapshot's
 * columns with days of rows, and (for a refresh) with the universe's changes, without
 * reading any history. New funds are merged into code order with their own history;
 * the old funds' trailing and calendar rows are reused where their series did not grow.
 * The new series is handed to the writer in parts (runs of the old series, new funds'
 * histories, the new rows), never assembled: the live snapshot is the only full copy.
 */
import { isTradingDay } from '../core/calendar.js';
import { compareCodes } from '../core/codes.js';
import { type Day, formatDay } from '../core/dates.js';
import { dailyGrowth, nextIndexValue } from '../core/growth.js';
import {
  type CalendarColumns,
  type ColumnsToWrite,
  type FundColumns,
  fundRecordAt,
  type RateColumns,
  type SeriesColumns,
  type SnapshotColumns,
} from '../core/snapshot/columns.js';
import type { FundRecord } from '../core/types.js';
import { fundColumns } from './build.js';
import { deriveRows, UNCHANGED } from './derive.js';
import type { BuildReport, ProblemReason } from './report/build-report.js';
import type { DailyRows } from './source/daily-file.js';

/** One day's (or one file's) rows, in the order they are applied. */
export interface RowBatch {
  /** The file name the rows are reported under. */
  file: string;
  rows: DailyRows;
}

/** A fund that enters the universe with its own history (a price file's rows). */
export interface NewFund {
  record: FundRecord;
  dates: Int32Array;
  values: Float64Array;
  /** Raw close of the last history row (C37); NaN when unknown. */
  lastClose: number;
}

/** Checks a refresh applies to each row before it enters a series (the refresh's quality gates). */
interface RowGates {
  /** A row dated on a day the NYSE was closed (C0) is reported `non_trading_day`, not applied. */
  tradingDaysOnly: boolean;
  /**
   * A day whose growth factor moves a fund by more than this share (0.5 = ±50 %) with
   * no split on the row is held back (`suspicious_move`), with that fund's later rows.
   */
  maxMove: number;
}

const NO_GATES: RowGates = { tradingDaysOnly: false, maxMove: Number.POSITIVE_INFINITY };

export interface AppendInput {
  batches: readonly RowBatch[];
  newFunds?: readonly NewFund[];
  /** New metadata for funds already in the snapshot, by code (name, exchange, ISIN, inactive). */
  updates?: ReadonlyMap<string, FundRecord>;
  gates?: RowGates;
  /** The source's rates file as read now (C41); left out: the snapshot's rates stay. */
  rates?: RateColumns | null;
}

export interface AppendOutput {
  columns: ColumnsToWrite;
  /** Observations added to funds already in the snapshot. */
  added: number;
  /** Per batch, 1 for each row that was applied. */
  applied: Uint8Array[];
  /** Funds with a row applied, per date. */
  fundsPerDay: Map<Day, number>;
  /** Whether anything changes (rows, new funds or metadata). */
  changed: boolean;
}

interface Appended {
  dates: number[];
  values: number[];
  lastClose: number;
}

/** Where a fund of the merged universe comes from: old index ≥ 0, or -(new index) - 1. */
function mergeCodes(old: readonly string[], added: readonly NewFund[]): Int32Array {
  const order = Int32Array.from({ length: added.length }, (_, j) => j).sort((a, b) =>
    compareCodes(added[a].record.code, added[b].record.code),
  );
  const src = new Int32Array(old.length + added.length);
  let i = 0;
  let j = 0;
  for (let f = 0; f < src.length; f++) {
    if (j < order.length && (i >= old.length || compareCodes(added[order[j]].record.code, old[i]) < 0))
      src[f] = -order[j++] - 1;
    else src[f] = i++;
  }
  return src;
}

export function appendRows(prev: SnapshotColumns, input: AppendInput, report: BuildReport): AppendOutput {
  const newFunds = input.newFunds ?? [];
  const updates = input.updates ?? new Map<string, FundRecord>();
  const pf = prev.funds;
  const src = mergeCodes(pf.code, newFunds);
  const { appended, applied, fundsPerDay } = applyBatches(prev, src, newFunds, input, report);

  let added = 0;
  for (const a of appended.values()) added += a.dates.length;
  const rates = input.rates ?? prev.rates;
  const changed = added > 0 || newFunds.length > 0 || updates.size > 0 || !sameRates(rates, prev.rates);
  if (!changed) return { columns: prev, added, applied, fundsPerDay, changed };

  const merged = mergedSeries(prev, src, newFunds, appended, added);
  const { parts, seriesOffset, seriesLength, lastClose, firstNewDay } = merged;
  const reuse = remapRows(prev, src);
  const derived = deriveRows(parts, seriesOffset, seriesLength, rates, { ...reuse, firstNewDay });
  const funds = mergedFunds(pf, src, newFunds, updates, { seriesOffset, seriesLength, lastClose });
  return {
    columns: {
      funds,
      series: parts,
      trailing: derived.trailing,
      calendar: derived.calendar,
      risk: derived.risk,
      rates,
    },
    added,
    applied,
    fundsPerDay,
    changed,
  };
}

/** What applying the batches reads and grows, shared by every batch. */
interface Applying {
  readonly prev: SnapshotColumns;
  /** Where each fund of the merged universe comes from (mergeCodes). */
  readonly src: Int32Array;
  readonly newFunds: readonly NewFund[];
  /** Code → merged fund index. */
  readonly index: ReadonlyMap<string, number>;
  readonly gates: RowGates;
  readonly report: BuildReport;
  /** Per merged fund, the rows applied so far. */
  readonly appended: Map<number, Appended>;
  /** Funds with a day held back: their later rows wait too. */
  readonly held: Set<number>;
  readonly fundsPerDay: Map<Day, number>;
}

/** Every batch applied in order, each row checked against its fund's series so far. */
function applyBatches(
  prev: SnapshotColumns,
  src: Int32Array,
  newFunds: readonly NewFund[],
  input: AppendInput,
  report: BuildReport,
): Pick<AppendOutput, 'applied' | 'fundsPerDay'> & { appended: Map<number, Appended> } {
  const index = new Map<string, number>();
  for (let f = 0; f < src.length; f++)
    index.set(src[f] >= 0 ? prev.funds.code[src[f]] : newFunds[-src[f] - 1].record.code, f);
  const st: Applying = {
    prev,
    src,
    newFunds,
    index,
    gates: input.gates ?? NO_GATES,
    report,
    appended: new Map<number, Appended>(),
    held: new Set<number>(),
    fundsPerDay: new Map<Day, number>(),
  };
  const applied: Uint8Array[] = [];
  for (const { file, rows } of input.batches) {
    const mark = new Uint8Array(rows.length);
    applied.push(mark);
    applyBatch(st, file, rows, mark);
  }
  return { appended: st.appended, applied, fundsPerDay: st.fundsPerDay };
}

/** One batch's rows; `mark[r]` is set to 1 for each row applied, the others are reported. */
function applyBatch(st: Applying, file: string, rows: DailyRows, mark: Uint8Array): void {
  const { prev, src, newFunds, index, gates, report, appended, held, fundsPerDay } = st;
  const pf = prev.funds;
  // A batch's rows apply per fund in date order; the file name only orders files (C37).
  const order = Array.from({ length: rows.length }, (_, i) => i).sort(
    (a, b) => rows.dates[a] - rows.dates[b],
  );
  for (const r of order) {
    const code = rows.codes[r];
    const f = index.get(code);
    const line = rows.lines[r];
    const day = rows.dates[r];
    if (f === undefined) {
      report.add({ reason: 'daily_unknown_fund', file, line, code });
      continue;
    }
    if (gates.tradingDaysOnly && !isTradingDay(day)) {
      refuse(report, file, line, code, 'non_trading_day', `${formatDay(day)}: the NYSE was closed`);
      continue;
    }
    const s = src[f];
    const nf = s < 0 ? newFunds[-s - 1] : null;
    let a = appended.get(f);
    let lastDate: number;
    let lastValue: number;
    if (a && a.dates.length > 0) {
      lastDate = a.dates[a.dates.length - 1];
      lastValue = a.values[a.values.length - 1];
    } else if (nf) {
      lastDate = nf.dates[nf.dates.length - 1];
      lastValue = nf.values[nf.values.length - 1];
    } else {
      const lastIdx = pf.seriesOffset[s] + pf.seriesLength[s] - 1;
      lastDate = prev.series.date[lastIdx];
      lastValue = prev.series.value[lastIdx];
    }
    const lastClose = a ? a.lastClose : nf ? nf.lastClose : pf.lastClose[s];
    // A new fund's history already covers the days it was fetched with: not news, not stale.
    if (nf && day <= nf.dates[nf.dates.length - 1]) continue;
    if (day <= lastDate) {
      refuse(report, file, line, code, 'daily_stale_row', staleDetail(day, lastDate));
      continue;
    }
    if (!(lastClose > 0)) {
      report.add({ reason: 'daily_no_previous_close', file, line, code });
      continue;
    }
    if (held.has(f)) {
      refuse(report, file, line, code, 'suspicious_move', 'after a held-back day of this fund');
      continue;
    }
    const close = rows.close[r];
    const dividend = rows.dividend[r];
    const split = rows.split[r];
    const growth = dailyGrowth(close, dividend, split, lastClose);
    if (split === 1 && Math.abs(growth - 1) > gates.maxMove) {
      // A missing split or a wrong distribution is the usual cause: better a day late than wrong.
      held.add(f);
      refuse(report, file, line, code, 'suspicious_move', moveDetail(day, growth, gates.maxMove));
      continue;
    }
    const value = nextIndexValue(lastValue, close, dividend, split, lastClose);
    if (!Number.isFinite(value) || value <= 0) {
      refuse(report, file, line, code, 'daily_bad_row', 'growth factor is not finite and positive');
      continue;
    }
    if (!a) {
      a = { dates: [], values: [], lastClose };
      appended.set(f, a);
    }
    a.dates.push(day);
    a.values.push(value);
    a.lastClose = close;
    mark[r] = 1;
    fundsPerDay.set(day, (fundsPerDay.get(day) ?? 0) + 1);
  }
}

/** A row refused with a reason and its detail (only refused rows come here). */
function refuse(
  report: BuildReport,
  file: string,
  line: number,
  code: string,
  reason: ProblemReason,
  detail: string,
): void {
  report.add({ reason, file, line, code, detail });
}

function staleDetail(day: Day, lastDate: Day): string {
  return `${formatDay(day)} is not after the fund's last observation ${formatDay(lastDate)}`;
}

function moveDetail(day: Day, growth: number, maxMove: number): string {
  return `${formatDay(day)}: ${((growth - 1) * 100).toFixed(1)} % with no split (bound ±${(maxMove * 100).toFixed(0)} %)`;
}

/** The merged universe's series layout and its parts (see the module comment). */
interface MergedSeries extends Pick<FundColumns, 'seriesOffset' | 'seriesLength' | 'lastClose'> {
  parts: SeriesColumns[];
  /** Per fund, the first day whose rows are new (UNCHANGED: none), for deriveRows' reuse. */
  firstNewDay: Int32Array;
}

/**
 * The new series in parts: runs of old funds' slices that gained nothing stay one
 * view onto the live snapshot; each fund's new rows follow its slice.
 */
function mergedSeries(
  prev: SnapshotColumns,
  src: Int32Array,
  newFunds: readonly NewFund[],
  appended: ReadonlyMap<number, Appended>,
  added: number,
): MergedSeries {
  const pf = prev.funds;
  const n = src.length;
  const parts: SeriesColumns[] = [];
  let runFrom = 0;
  let runTo = 0;
  const endRun = () => {
    if (runTo > runFrom)
      parts.push({
        date: prev.series.date.subarray(runFrom, runTo),
        value: prev.series.value.subarray(runFrom, runTo),
      });
    runFrom = runTo = 0;
  };
  const newDate = new Int32Array(added);
  const newValue = new Float64Array(added);
  let newAt = 0;
  const seriesOffset = new Int32Array(n);
  const seriesLength = new Int32Array(n);
  const lastClose = new Float64Array(n);
  const firstNewDay = new Int32Array(n).fill(UNCHANGED);
  let cursor = 0;
  for (let f = 0; f < n; f++) {
    const s = src[f];
    seriesOffset[f] = cursor;
    if (s >= 0) {
      const from = pf.seriesOffset[s];
      const len = pf.seriesLength[s];
      if (from !== runTo || runTo === runFrom) {
        endRun();
        runFrom = from;
      }
      runTo = from + len;
      cursor += len;
      lastClose[f] = pf.lastClose[s];
    } else {
      const nf = newFunds[-s - 1];
      endRun();
      parts.push({ date: nf.dates, value: nf.values });
      cursor += nf.dates.length;
      lastClose[f] = nf.lastClose;
      firstNewDay[f] = nf.dates[0];
    }
    const a = appended.get(f);
    if (a) {
      endRun();
      const k = a.dates.length;
      newDate.set(a.dates, newAt);
      newValue.set(a.values, newAt);
      parts.push({ date: newDate.subarray(newAt, newAt + k), value: newValue.subarray(newAt, newAt + k) });
      newAt += k;
      cursor += k;
      lastClose[f] = a.lastClose;
      if (s >= 0) firstNewDay[f] = a.dates[0];
    }
    seriesLength[f] = cursor - seriesOffset[f];
  }
  endRun();
  return { parts, seriesOffset, seriesLength, lastClose, firstNewDay };
}

/** The old trailing and calendar rows under the merged universe's fund indices (new funds: none). */
function remapRows(prev: SnapshotColumns, src: Int32Array): Pick<SnapshotColumns, 'trailing' | 'calendar'> {
  if (src.length === prev.funds.length) return { trailing: prev.trailing, calendar: prev.calendar };
  const n = src.length;
  const asOf = new Int32Array(n);
  const values = prev.trailing.values.map(() => new Float64Array(n).fill(Number.NaN));
  const toNew = new Int32Array(prev.funds.length);
  for (let f = 0; f < n; f++) {
    const s = src[f];
    if (s < 0) continue;
    toNew[s] = f;
    asOf[f] = prev.trailing.asOf[s];
    for (let k = 0; k < values.length; k++) values[k][f] = prev.trailing.values[k][s];
  }
  // Insertion keeps the old funds' relative order, so the rows stay sorted by (fund, year).
  const c = prev.calendar;
  const calendar: CalendarColumns = { ...c, fund: Int32Array.from(c.fund, (s) => toNew[s]) };
  return { trailing: { asOf, values }, calendar };
}

function mergedFunds(
  pf: FundColumns,
  src: Int32Array,
  newFunds: readonly NewFund[],
  updates: ReadonlyMap<string, FundRecord>,
  series: Pick<FundColumns, 'seriesOffset' | 'seriesLength' | 'lastClose'>,
): FundColumns {
  const n = src.length;
  const records: FundRecord[] = [];
  for (let f = 0; f < n; f++) {
    const s = src[f];
    if (s < 0) {
      records.push(newFunds[-s - 1].record);
      continue;
    }
    records.push(updates.get(pf.code[s]) ?? fundRecordAt(pf, s));
  }
  return fundColumns(records, series.seriesOffset, series.seriesLength, series.lastClose);
}

function sameRates(a: RateColumns, b: RateColumns): boolean {
  if (a.date.length !== b.date.length) return false;
  for (let i = 0; i < a.date.length; i++)
    if (a.date[i] !== b.date[i] || !Object.is(a.yield[i], b.yield[i])) return false;
  return true;
}
