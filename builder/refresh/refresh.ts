/**
 * `fundreturns refresh`: one refresh, end to end. Works out the trading days
 * (C0) between the live snapshot's as_of and the last closed session, obtains each from
 * the provider, checks them (the quality gates), writes them into the source directory
 * as the record a rebuild reproduces the snapshot from, applies them in date order
 * (C37) with the universe's changes, and publishes once, under the builds' lock.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tradingDaysInRange } from '../../core/calendar.js';
import { compareCodes } from '../../core/codes.js';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { fundRecordAt, type RateColumns } from '../../core/snapshot/columns.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { type LoadedSnapshot, loadSnapshot, readManifest } from '../../core/snapshot/reader.js';
import type { FundRecord } from '../../core/types.js';
import { lastClosedDay } from '../../core/us-close.js';
import { appendRows, type NewFund, type RowBatch } from '../append.js';
import { BuildError, checkBound, phaseTimer, snapshotAsOf, writeAndPublish } from '../build.js';
import { takeBuildLock } from '../lock.js';
import { BuildReport } from '../report/build-report.js';
import {
  type DailyRows,
  dailyHeader,
  dailyLine,
  dividendCell,
  parseDailyFile,
  splitCell,
} from '../source/daily-file.js';
import { fundsFileText, parseFundsFile } from '../source/funds.js';
import { parsePriceFile } from '../source/prices.js';
import { RATES_PATH, readRates } from '../source/rates.js';
import type { CallMeter } from './call-meter.js';
import { firstLoad, type LoadProgress, startsFromNothing } from './first-load.js';
import type { LoadSummary } from './load-summary.js';
import { type Provider, ProviderError } from './provider.js';
import { setAsideAhead, writeWhole } from './records.js';

export interface RefreshGates {
  /** A day whose rows move a fund by more than this share without a split is held back (default 0.5). */
  maxMove: number;
  /** A day covering fewer than this share of the live (active) funds fails the refresh (default 0.9). */
  minCoverage: number;
}

export const DEFAULT_GATES: RefreshGates = { maxMove: 0.5, minCoverage: 0.9 };

export interface RefreshOptions {
  source: string;
  snapshots: string;
  provider: Provider;
  keep: number;
  maxBadShare: number;
  gates: RefreshGates;
  /** The service's clock in ms (core/clock.ts's `now` in production). */
  now: () => number;
  /** Fetch this one trading day only (a re-fetch after loosening a gate), not every missing day. */
  date?: Day;
  /** When another build holds the lock: wait (default) or fail at once. */
  wait?: boolean;
  say?: (line: string) => void;
  /** Say what the run would cost in the provider's API calls, and stop before spending any on data. */
  estimate?: boolean;
  /** How a first load (no snapshot, an empty source directory) runs. */
  load?: LoadSettings;
}

interface LoadSettings {
  /** Histories fetched at once. */
  concurrency: number;
  /** The provider's pace and call budget (the same meter the provider was opened with). */
  meter?: CallMeter;
  /** Requests per minute, for the time estimate. */
  maxRate?: number;
  threads?: number;
  /** Ctrl-C: stop after the requests in flight. */
  signal?: AbortSignal;
  onProgress?: (p: LoadProgress) => void;
}

export interface RefreshResult {
  outcome: 'published' | 'up_to_date' | 'estimate';
  /** The live snapshot afterwards. */
  id: string;
  asOf: string;
  days: string[];
  rows: number;
  newFunds: number;
  inactive: number;
  /** Rows refused by a gate or a reader (bad, future, non-trading day, suspicious, stale, unknown). */
  refused: number;
  report: BuildReport;
  durationMs: number;
  /** A first load's account: funds listed, loaded and left out (with why), days, calls. */
  load?: LoadSummary;
}

/** A refresh that must not publish; the live snapshot is unchanged. */
export class RefreshError extends BuildError {
  constructor(
    message: string,
    report: BuildReport,
    /** Whether running again later can help (the provider's data not there yet, a limit). */
    readonly retryable = false,
  ) {
    super(message, report);
    this.name = 'RefreshError';
  }
}

/** Reasons counted as refused rows in a refresh's log line. */
const REFUSED = [
  'daily_bad_row',
  'daily_stale_row',
  'daily_unknown_fund',
  'daily_no_previous_close',
  'non_trading_day',
  'suspicious_move',
] as const;

export async function refresh(opts: RefreshOptions): Promise<RefreshResult> {
  const say = opts.say ?? (() => {});
  const release = await takeBuildLock(opts.snapshots, say, opts.wait ?? true);
  try {
    return await refreshLocked(opts);
  } finally {
    await release();
  }
}

async function refreshLocked(opts: RefreshOptions): Promise<RefreshResult> {
  const say = opts.say ?? (() => {});
  const started = Date.now();
  const { timings, lap } = phaseTimer();
  const report = new BuildReport();
  const current = readCurrent(opts.snapshots);
  if (current === null) {
    if (startsFromNothing(opts.source)) return await loadFromNothing(opts, started);
    throw new RefreshError(
      `no snapshot in ${opts.snapshots} to refresh, and ${opts.source} is neither empty nor a load in progress: ` +
        'build it first (fundreturns build --source DIR), or start from nothing with an empty --source',
      report,
    );
  }
  const liveAsOf = parseDay(readManifest(join(opts.snapshots, current)).as_of) as Day;
  // A session counts once 16:00 New York has passed; never a day after it (no future rows).
  const lastClosed = lastClosedDay(opts.now());
  const days = opts.date !== undefined ? [opts.date] : tradingDaysInRange(liveAsOf + 1, lastClosed);
  const done = (outcome: RefreshResult['outcome'], id: string, asOf: string, rows = 0): RefreshResult => ({
    outcome,
    id,
    asOf,
    days: days.map(formatDay),
    rows,
    newFunds: report.universe?.newFunds.length ?? 0,
    inactive: report.universe?.inactive.length ?? 0,
    refused: REFUSED.reduce((a, r) => a + (report.reasons.get(r)?.count ?? 0), 0),
    report,
    durationMs: Date.now() - started,
  });
  if (days.length === 0) return done('up_to_date', current, formatDay(liveAsOf));
  if (opts.estimate) {
    const c = opts.provider.callCosts;
    say(
      c === undefined
        ? `${days.length} trading days to fetch from the ${opts.provider.name} provider (it counts no API calls)`
        : `${days.length} trading day${days.length === 1 ? '' : 's'} to fetch (${formatDay(days[0])}..${formatDay(days[days.length - 1])}): ` +
            `${days.length * c.day + c.list} API calls (${c.day} a day, ${c.list} for the fund lists), ` +
            `plus ${c.history} per fund new in the lists`,
    );
    return done('estimate', current, formatDay(liveAsOf));
  }
  if (opts.date !== undefined && opts.date > lastClosed)
    throw new RefreshError(
      `--date ${formatDay(opts.date)} is after the last closed session ${formatDay(lastClosed)}`,
      report,
    );

  const provider = opts.provider;
  await provider.prepare?.(days);
  const fetched: { day: Day; bytes: Uint8Array }[] = [];
  for (const day of days) {
    const bytes = await provider.day(day);
    if (bytes === null) break;
    fetched.push({ day, bytes });
  }
  if (fetched.length === 0)
    throw new RefreshError(
      `the ${provider.name} provider has no data for ${formatDay(days[0])} yet: nothing published`,
      report,
      true,
    );
  if (fetched.length < days.length)
    say(
      `the ${provider.name} provider has no data for ${formatDay(days[fetched.length])} yet: refreshing up to ${formatDay(fetched[fetched.length - 1].day)}`,
    );
  const lastDay = fetched[fetched.length - 1].day;
  lap('fetch');

  const base = await loadSnapshot(join(opts.snapshots, current));
  const prev = base.columns;
  lap('load');

  const batches: RowBatch[] = [];
  for (const { day, bytes } of fetched) {
    const file = `daily/${formatDay(day)}.csv`;
    const parsed = parseDailyFile(bytes, file, lastClosed, 'the last closed session');
    report.dataRows += parsed.dataRows;
    for (const p of parsed.problems) report.add(p);
    if (report.reasons.has('missing_header_column'))
      throw new RefreshError(
        `${provider.name}: ${file} cannot be read as a daily file (${report.reasons.get('missing_header_column')?.first.detail}): nothing published`,
        report,
      );
    batches.push({ file, rows: parsed.rows });
  }
  report.fundsIn = prev.funds.length;
  checkBound(report, opts.maxBadShare);

  const universe = await universeChanges(provider, base, lastDay, lastClosed, opts.gates, report);
  const rates = await fetchRates(provider, lastDay, opts.source, report, say);
  lap('universe');

  const out = appendRows(
    prev,
    {
      batches,
      newFunds: universe.newFunds,
      updates: universe.updates,
      gates: { tradingDaysOnly: true, maxMove: opts.gates.maxMove },
      rates: rates.columns,
    },
    report,
  );
  lap('derive');

  checkCoverage(prev, fetched, out.fundsPerDay, opts.gates.minCoverage, report);
  if (!out.changed) {
    // Only stale rows (the days were applied already): nothing to publish.
    return done('up_to_date', current, base.manifest.as_of, 0);
  }

  const asOf = snapshotAsOf(out.columns);
  if (asOf < base.manifest.as_of)
    // Cannot happen through an append (dates only grow); checked because a publish that
    // moved as_of back would make /healthz and every "latest" answer lie.
    throw new RefreshError(
      `as_of would move back from ${base.manifest.as_of} to ${asOf}: nothing published`,
      report,
    );
  // CURRENT rolled back: the source's days after the live as_of are fetched again now.
  const aside = setAsideAhead(opts.source, liveAsOf, opts.now());
  if (aside !== null)
    say(
      `the source held days after the live as_of ${formatDay(liveAsOf)} (CURRENT rolled back?): set aside in ${aside}`,
    );
  writeRecords(
    opts.source,
    batches,
    out.applied,
    { ...universe, listed: universe.listed || aside !== null },
    out.columns.funds,
  );
  if (rates.bytes !== null) {
    mkdirSync(join(opts.source, 'rates'), { recursive: true });
    writeWhole(join(opts.source, RATES_PATH), rates.bytes);
  }
  const result = await writeAndPublish(
    out.columns,
    report,
    {
      kind: 'refresh',
      provider: provider.name,
      base: current,
      days: fetched.map((f) => formatDay(f.day)),
      appendedRows: out.added,
    },
    { snapshots: opts.snapshots, keep: opts.keep, now: () => new Date(opts.now()) },
    timings,
    lap,
  );
  if (result.manifest.as_of < base.manifest.as_of) {
    // Cannot happen through an append (dates only grow); checked because a publish that
    // moved as_of back would make /healthz and every "latest" answer lie.
    throw new RefreshError(
      `as_of would move back from ${base.manifest.as_of} to ${result.manifest.as_of}`,
      report,
    );
  }
  provider.committed?.(
    fetched.map((f) => f.day),
    opts.source,
  );
  let rows = 0;
  for (const v of out.fundsPerDay.values()) rows += v;
  return done('published', result.id, result.manifest.as_of, rows);
}

/** The first load, under the lock the refresh took, told as a refresh's result. */
async function loadFromNothing(opts: RefreshOptions, started: number): Promise<RefreshResult> {
  const r = await firstLoad({
    source: opts.source,
    snapshots: opts.snapshots,
    provider: opts.provider,
    keep: opts.keep,
    maxBadShare: opts.maxBadShare,
    minCoverage: opts.gates.minCoverage,
    now: opts.now,
    concurrency: opts.load?.concurrency ?? 1,
    estimate: opts.estimate,
    meter: opts.load?.meter,
    maxRate: opts.load?.maxRate,
    threads: opts.load?.threads,
    signal: opts.load?.signal,
    say: opts.say,
    onProgress: opts.load?.onProgress,
  });
  const s = r.summary;
  return {
    outcome: r.outcome,
    id: r.id ?? '',
    asOf: r.asOf ?? '',
    days: s.days,
    rows: r.report.dataRows - r.report.skippedRows,
    newFunds: s.loaded,
    inactive: s.delisted,
    refused: s.failed.length,
    report: r.report,
    durationMs: Date.now() - started,
    load: s,
  };
}

/**
 * A day of rows that covers fewer than `minCoverage` of the live funds (not inactive)
 * is a short delivery: publishing it would stop half the funds a day behind.
 */
function checkCoverage(
  prev: LoadedSnapshot['columns'],
  fetched: readonly { day: Day }[],
  perDay: ReadonlyMap<Day, number>,
  minCoverage: number,
  report: BuildReport,
): void {
  let live = 0;
  for (let i = 0; i < prev.funds.length; i++) if (prev.funds.isInactive[i] === 0) live++;
  if (live === 0) return;
  for (const { day } of fetched) {
    const n = perDay.get(day) ?? 0;
    if (n < minCoverage * live)
      throw new RefreshError(
        `${formatDay(day)} has rows for ${n} of the ${live} live funds (${((n / live) * 100).toFixed(1)} %), ` +
          `under the ${(minCoverage * 100).toFixed(0)} % a day must cover: nothing published ` +
          '(a short or empty delivery? --min-coverage loosens this)',
        report,
        true,
      );
  }
}

interface UniverseUpdate {
  newFunds: NewFund[];
  /** The raw history of each new fund, kept in the source as prices/<code>.csv. */
  histories: Map<string, Uint8Array>;
  updates: Map<string, FundRecord>;
  /** Whether the list said anything (else funds.csv is left as it is). */
  listed: boolean;
}

/**
 * The provider's fund list against the snapshot's: new funds enter with their
 * history, funds gone from the list or marked inactive turn inactive (keeping their
 * history), name/exchange/ISIN changes apply. A list that lost more than the coverage
 * bound of the live funds is a broken download, not a market event: refused.
 */
async function universeChanges(
  provider: Provider,
  base: LoadedSnapshot,
  lastDay: Day,
  latest: Day,
  gates: RefreshGates,
  report: BuildReport,
): Promise<UniverseUpdate> {
  const none: UniverseUpdate = { newFunds: [], histories: new Map(), updates: new Map(), listed: false };
  const bytes = await provider.fundList(lastDay);
  if (bytes === null) return none;
  const parsed = parseFundsFile(bytes, 'funds.csv');
  if (parsed.problems.some((p) => p.reason === 'missing_header_column'))
    throw new RefreshError(`${provider.name}: the fund list cannot be read (no Code or Type column)`, report);
  const pf = base.columns.funds;
  const listed = new Map(parsed.funds.map((f) => [f.code, f]));
  let live = 0;
  let liveListed = 0;
  const updates = new Map<string, FundRecord>();
  const inactive: string[] = [];
  const changed: string[] = [];
  for (let i = 0; i < pf.length; i++) {
    const old = fundRecordAt(pf, i);
    const now = listed.get(old.code);
    if (!old.isInactive) {
      live++;
      if (now !== undefined) liveListed++;
    }
    if (now === undefined) {
      // Gone from the list: delisted. It keeps its history; it stops being current.
      if (!old.isInactive) {
        updates.set(old.code, { ...old, isInactive: true, inactiveDate: lastDay });
        inactive.push(old.code);
      }
      continue;
    }
    const next: FundRecord = {
      ...old,
      name: now.name ?? old.name,
      exchange: now.exchange ?? old.exchange,
      isin: now.isin ?? old.isin,
      country: now.country ?? old.country,
      currency: now.currency ?? old.currency,
      isInactive: old.isInactive || now.isInactive,
      inactiveDate: old.isInactive ? old.inactiveDate : now.isInactive ? (now.inactiveDate ?? lastDay) : null,
    };
    if (next.isInactive && !old.isInactive) inactive.push(old.code);
    else if (next.name !== old.name || next.exchange !== old.exchange || next.isin !== old.isin)
      changed.push(old.code);
    if (!sameRecord(old, next)) updates.set(old.code, next);
  }
  if (live > 0 && liveListed < gates.minCoverage * live)
    throw new RefreshError(
      `the ${provider.name} fund list names ${liveListed} of the ${live} live funds: refusing to mark the rest inactive ` +
        '(a truncated list? --min-coverage loosens this)',
      report,
      true,
    );

  const known = new Set(pf.code);
  const newFunds: NewFund[] = [];
  const histories = new Map<string, Uint8Array>();
  const fresh = parsed.funds.filter((f) => !known.has(f.code)).sort((a, b) => compareCodes(a.code, b.code));
  for (const record of fresh) {
    const history = await provider.history(record.code, lastDay);
    const file = `prices/${record.code}.csv`;
    if (history === null) {
      report.add({ reason: 'fund_without_prices', file: 'funds.csv', line: 0, code: record.code });
      continue;
    }
    const p = parsePriceFile(history, file, record.code, latest);
    report.dataRows += p.dataRows;
    for (const x of p.problems) report.add(x);
    if (p.dates.length === 0) {
      report.add({ reason: 'fund_without_valid_rows', file, line: 0, code: record.code });
      continue;
    }
    newFunds.push({ record, dates: p.dates, values: p.values, lastClose: p.lastClose });
    histories.set(record.code, history);
  }
  report.universe = { newFunds: newFunds.map((f) => f.record.code), inactive, changed };
  return { newFunds, histories, updates, listed: true };
}

function sameRecord(a: FundRecord, b: FundRecord): boolean {
  return (
    a.name === b.name &&
    a.country === b.country &&
    a.exchange === b.exchange &&
    a.currency === b.currency &&
    a.isin === b.isin &&
    a.isInactive === b.isInactive &&
    a.inactiveDate === b.inactiveDate
  );
}

/**
 * The rates for this refresh (C41): the provider's, when it has them (bytes kept for
 * the source's record), else the source's own rates file; null columns: neither,
 * and the snapshot's rates stay. A provider failing on them costs the Sharpe ratios
 * their newest month, not the day's prices: said, and the source's file used.
 */
async function fetchRates(
  provider: Provider,
  day: Day,
  source: string,
  report: BuildReport,
  say: (line: string) => void,
): Promise<{ columns: RateColumns | null; bytes: Uint8Array | null }> {
  let bytes: Uint8Array | null = null;
  try {
    bytes = (await provider.rates?.(day)) ?? null;
  } catch (e) {
    if (!(e instanceof ProviderError) || !e.retryable) throw e;
    say(`${(e as Error).message}: the rates stay as the source has them`);
  }
  if (bytes === null) return { columns: readRates(source, report), bytes: null };
  const parsed = parsePriceFile(bytes, RATES_PATH, 'US3M', undefined, true);
  report.dataRows += parsed.dataRows;
  for (const p of parsed.problems) report.add(p);
  return { columns: { date: parsed.dates, yield: parsed.values }, bytes };
}

/**
 * The source directory's record of this refresh, written before the publish so that
 * `build --source` then `build --daily <source>/daily` reproduces the snapshot: each
 * day's applied rows as daily/<date>.csv, each new fund's history as prices/<code>.csv,
 * and funds.csv with every fund's current metadata. Each file is written whole and
 * renamed into place.
 */
function writeRecords(
  source: string,
  batches: readonly RowBatch[],
  applied: readonly Uint8Array[],
  universe: UniverseUpdate,
  funds: LoadedSnapshot['columns']['funds'],
): void {
  mkdirSync(join(source, 'daily'), { recursive: true });
  for (let b = 0; b < batches.length; b++)
    writeWhole(join(source, batches[b].file), dailyText(batches[b].rows, applied[b]));
  if (universe.histories.size > 0) mkdirSync(join(source, 'prices'), { recursive: true });
  for (const [code, bytes] of universe.histories) writeWhole(join(source, 'prices', `${code}.csv`), bytes);
  if (universe.listed || universe.updates.size > 0) writeWhole(join(source, 'funds.csv'), fundsText(funds));
}

/** Applied rows only: what the snapshot holds is what a rebuild applies. Numbers round-trip exactly. */
function dailyText(rows: DailyRows, applied: Uint8Array): string {
  // No adjusted close: the refresh keeps the raw close and factors it applied (C37).
  let out = dailyHeader(false);
  for (let r = 0; r < rows.length; r++) {
    if (applied[r] !== 1) continue;
    out += dailyLine({
      code: rows.codes[r],
      date: formatDay(rows.dates[r]),
      close: String(rows.close[r]),
      dividend: dividendCell(rows.dividend[r]),
      split: splitCell(rows.split[r]),
    });
  }
  return out;
}

function fundsText(f: LoadedSnapshot['columns']['funds']): string {
  return fundsFileText(Array.from({ length: f.length }, (_, i) => fundRecordAt(f, i)));
}
