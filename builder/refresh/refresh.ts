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
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import type { RateColumns } from '../../core/snapshot/columns.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { type LoadedSnapshot, loadSnapshot, readManifest } from '../../core/snapshot/reader.js';
import { lastClosedDay } from '../../core/us-close.js';
import { type AppendOutput, appendRows, type RowBatch } from '../append.js';
import { checkBound, phaseTimer, snapshotAsOf, writeAndPublish } from '../build.js';
import { takeBuildLock } from '../lock.js';
import { BuildReport } from '../report/build-report.js';
import { parseDailyFile } from '../source/daily-file.js';
import { parsePriceFile } from '../source/prices.js';
import { RATES_PATH, readRates } from '../source/rates.js';
import type { CallMeter } from './call-meter.js';
import { firstLoad, type LoadProgress, startsFromNothing } from './first-load.js';
import { type UniverseUpdate, universeChanges } from './fund-list.js';
import { checkCoverage, RefreshError, type RefreshGates } from './gates.js';
import type { LoadSummary } from './load-summary.js';
import { type Provider, ProviderError } from './provider.js';
import { setAsideAhead, writeRecords, writeWhole } from './records.js';

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
  const done = resultOf(report, days, started);
  if (days.length === 0) return done('up_to_date', current, formatDay(liveAsOf));
  if (opts.estimate) {
    say(estimateLine(opts.provider, days));
    return done('estimate', current, formatDay(liveAsOf));
  }
  if (opts.date !== undefined && opts.date > lastClosed)
    throw new RefreshError(
      `--date ${formatDay(opts.date)} is after the last closed session ${formatDay(lastClosed)}`,
      report,
    );

  const provider = opts.provider;
  const fetched = await fetchDays(provider, days, report, say);
  const lastDay = fetched[fetched.length - 1].day;
  lap('fetch');

  const base = await loadSnapshot(join(opts.snapshots, current));
  const prev = base.columns;
  lap('load');

  const batches = readDays(provider.name, fetched, lastClosed, report);
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
  const step = { opts, current, base, liveAsOf, fetched, batches, universe, rates, out, report, say };
  const published = await publishRefresh(step, timings, lap);
  let rows = 0;
  for (const v of out.fundsPerDay.values()) rows += v;
  return done('published', published.id, published.asOf, rows);
}

/** How the refresh's result is told, whenever it ends: the days it looked at and the report's counts. */
function resultOf(
  report: BuildReport,
  days: readonly Day[],
  started: number,
): (outcome: RefreshResult['outcome'], id: string, asOf: string, rows?: number) => RefreshResult {
  return (outcome: RefreshResult['outcome'], id: string, asOf: string, rows = 0): RefreshResult => ({
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
}

/** What `--estimate` says the days would cost in the provider's API calls. */
function estimateLine(provider: Provider, days: readonly Day[]): string {
  const c = provider.callCosts;
  return c === undefined
    ? `${days.length} trading days to fetch from the ${provider.name} provider (it counts no API calls)`
    : `${days.length} trading day${days.length === 1 ? '' : 's'} to fetch (${formatDay(days[0])}..${formatDay(days[days.length - 1])}): ` +
        `${days.length * c.day + c.list} API calls (${c.day} a day, ${c.list} for the fund lists), ` +
        `plus ${c.history} per fund new in the lists`;
}

/** The days in order, up to the first the provider has nothing for yet (none at all: nothing to publish). */
async function fetchDays(
  provider: Provider,
  days: readonly Day[],
  report: BuildReport,
  say: (line: string) => void,
): Promise<{ day: Day; bytes: Uint8Array }[]> {
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
  return fetched;
}

/** Each fetched day read as a daily file, its problems counted; a day that cannot be read refuses the refresh. */
function readDays(
  providerName: string,
  fetched: readonly { day: Day; bytes: Uint8Array }[],
  lastClosed: Day,
  report: BuildReport,
): RowBatch[] {
  const batches: RowBatch[] = [];
  for (const { day, bytes } of fetched) {
    const file = `daily/${formatDay(day)}.csv`;
    const parsed = parseDailyFile(bytes, file, lastClosed, 'the last closed session');
    report.dataRows += parsed.dataRows;
    for (const p of parsed.problems) report.add(p);
    if (report.reasons.has('missing_header_column'))
      throw new RefreshError(
        `${providerName}: ${file} cannot be read as a daily file (${report.reasons.get('missing_header_column')?.first.detail}): nothing published`,
        report,
      );
    batches.push({ file, rows: parsed.rows });
  }
  return batches;
}

/** What a refresh that changed something publishes from. */
interface Publishing {
  opts: RefreshOptions;
  /** The live snapshot's id, its data and as_of. */
  current: string;
  base: LoadedSnapshot;
  liveAsOf: Day;
  fetched: readonly { day: Day }[];
  batches: RowBatch[];
  universe: UniverseUpdate;
  rates: { columns: RateColumns | null; bytes: Uint8Array | null };
  out: AppendOutput;
  report: BuildReport;
  say: (line: string) => void;
}

/**
 * The source's records of the refresh written first (days after the live as_of set
 * aside), then the snapshot published; the provider told once it is live.
 */
async function publishRefresh(
  p: Publishing,
  timings: Record<string, number>,
  lap: (name: string) => void,
): Promise<{ id: string; asOf: string }> {
  const { opts, base, out, report } = p;
  const asOf = snapshotAsOf(out.columns);
  if (asOf < base.manifest.as_of)
    // Cannot happen through an append (dates only grow); checked because a publish that
    // moved as_of back would make /healthz and every "latest" answer lie.
    throw new RefreshError(
      `as_of would move back from ${base.manifest.as_of} to ${asOf}: nothing published`,
      report,
    );
  // CURRENT rolled back: the source's days after the live as_of are fetched again now.
  const aside = setAsideAhead(opts.source, p.liveAsOf, opts.now());
  if (aside !== null)
    p.say(
      `the source held days after the live as_of ${formatDay(p.liveAsOf)} (CURRENT rolled back?): set aside in ${aside}`,
    );
  writeRecords(
    opts.source,
    p.batches,
    out.applied,
    { ...p.universe, listed: p.universe.listed || aside !== null },
    out.columns.funds,
  );
  if (p.rates.bytes !== null) {
    mkdirSync(join(opts.source, 'rates'), { recursive: true });
    writeWhole(join(opts.source, RATES_PATH), p.rates.bytes);
  }
  const result = await writeAndPublish(
    out.columns,
    report,
    {
      kind: 'refresh',
      provider: opts.provider.name,
      base: p.current,
      days: p.fetched.map((f) => formatDay(f.day)),
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
  opts.provider.committed?.(
    p.fetched.map((f) => f.day),
    opts.source,
  );
  return { id: result.id, asOf: result.manifest.as_of };
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
