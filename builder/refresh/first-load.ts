/**
 * The first full load: `refresh` on an empty (or missing) source and snapshots
 * directory fetches the whole universe from the provider and publishes it once.
 *
 * 1. The provider's fund lists, current and delisted (a closed fund keeps its history).
 * 2. One history per fund, written to `prices/<Code>.csv` as answered.
 * 3. The trading days the histories do not reach, up to the last closed session, from
 *    the bulk API, written to `daily/<date>.csv` (only the rows a fund's history lacks).
 * 4. `funds.csv`, then the build `build --source` and `build --daily` would do, in a
 *    private directory; the result is checked against its manifest and published.
 *
 * Resumable at every point. The journal (`.first-load/histories.jsonl`) gets a fund's
 * line, with the size of its file, before the file is renamed into place, so a file
 * whose size does not match its line (or has none) is fetched again, never taken for
 * whole; a day file is written whole and renamed, so its existence means it is whole.
 * Nothing is published until every step is done and the gates pass.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lastTradingDayOnOrBefore } from '../../core/calendar.js';
import { compareCodes } from '../../core/codes.js';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { sweepDeadTempsSync } from '../../core/files/atomic.js';
import type { FundRecord } from '../../core/types.js';
import { lastClosedDay } from '../../core/us-close.js';
import { BuildError } from '../build.js';
import { BuildReport } from '../report/build-report.js';
import { latestAcceptedDay } from '../source/csv.js';
import { fundsFileText, parseFundsFile } from '../source/funds.js';
import { RATES_PATH } from '../source/rates.js';
import type { CallMeter } from './call-meter.js';
import { classify, type Entry, journalHistory, missingDays, readJournal } from './load-journal.js';
import {
  emptySummary,
  estimateCost,
  estimateLine,
  type LoadSummary,
  loadReportJson,
  summarize,
} from './load-summary.js';
import { type CallCosts, type Provider, ProviderError } from './provider.js';
import { rebuildAndPublish } from './rebuild.js';
import { writeWhole } from './records.js';

/** Where a load keeps its progress inside the source directory; gone once it has published. */
export const LOAD_STATE_DIR = '.first-load';
/** The load's report of every fund left out, kept in the source directory. */
export const LOAD_REPORT = 'load-report.json';

export interface FirstLoadOptions {
  source: string;
  snapshots: string;
  provider: Provider;
  keep: number;
  maxBadShare: number;
  /** A universe whose usable histories cover fewer than this share of the current funds is not published. */
  minCoverage: number;
  now: () => number;
  /** Histories fetched at once. */
  concurrency: number;
  /** Print the cost and stop (the fund lists are fetched and kept: they are what the cost is counted from). */
  estimate?: boolean;
  /** The provider's pace and budget, for the calls spent in progress lines and the time estimate. */
  meter?: CallMeter;
  /** The pace in requests per minute, for the time estimate. */
  maxRate?: number;
  threads?: number;
  /** Aborted (Ctrl-C): stop after the requests in flight, keeping everything done. */
  signal?: AbortSignal;
  say?: (line: string) => void;
  onProgress?: (p: LoadProgress) => void;
}

export interface LoadProgress {
  phase: 'histories' | 'days' | 'build';
  done: number;
  total: number;
  /** API calls spent by this run. */
  calls: number;
  /** Histories kept (usable) and left out (reported), of all runs. */
  loaded: number;
  failed: number;
}

export interface LoadResult {
  outcome: 'published' | 'estimate';
  id: string | null;
  asOf: string | null;
  summary: LoadSummary;
  report: BuildReport;
}

/** Why a load stopped before publishing; running the same command again continues. */
export type StopCause = 'budget' | 'daily_limit' | 'interrupted' | 'provider';

/** A load that stopped short: nothing published, everything fetched so far kept for the next run. */
export class LoadStopped extends BuildError {
  readonly retryable = true;
  constructor(
    message: string,
    report: BuildReport,
    readonly why: StopCause,
    readonly summary: LoadSummary,
  ) {
    super(message, report);
    this.name = 'LoadStopped';
  }
}

/** A load whose universe is not publishable (the coverage gate, a short bulk day). */
class LoadRefused extends BuildError {
  constructor(
    message: string,
    report: BuildReport,
    readonly retryable: boolean,
  ) {
    super(message, report);
    this.name = 'LoadRefused';
  }
}

/**
 * Whether `refresh` starts from nothing here: no snapshot published (the caller knows)
 * and a source directory that is missing, empty, or holds an unfinished load.
 */
export function startsFromNothing(source: string): boolean {
  let names: string[];
  try {
    names = readdirSync(source);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
  return names.length === 0 || names.includes(LOAD_STATE_DIR);
}

/** A provider that can start from nothing: it lists the whole universe and answers raw histories. */
type LoadingProvider = Provider & Required<Pick<Provider, 'universe' | 'rawHistory'>>;

/** One run of the load past its estimate: what the fetching and publishing steps share. */
interface LoadRun {
  opts: FirstLoadOptions;
  provider: LoadingProvider;
  report: BuildReport;
  /** The last session that has closed (a weekend's clock names its Friday). */
  lastClosed: Day;
  dirs: LoadDirs;
  listed: readonly FundRecord[];
  byCode: ReadonlyMap<string, FundRecord>;
  /** Every fund's journal entry so far, of all runs. */
  done: Map<string, Entry>;
  summary: () => LoadSummary;
  progress: Progress;
}

interface LoadDirs {
  /** The load's own state (`.first-load/`), and its journal there. */
  state: string;
  journal: string;
  prices: string;
  daily: string;
}

const encoder = new TextEncoder();

export async function firstLoad(opts: FirstLoadOptions): Promise<LoadResult> {
  const say = opts.say ?? (() => {});
  const report = new BuildReport();
  const provider = loadingProvider(opts, report);
  const costs: CallCosts = provider.callCosts ?? { list: 1, universe: 1, history: 1, day: 1 };
  const dirs = loadDirs(opts.source);
  // The last session that has closed (a weekend's clock names its Friday).
  const lastClosed = lastTradingDayOnOrBefore(lastClosedDay(opts.now()));
  const calls = () => opts.meter?.spent ?? 0;
  const requests = () => opts.meter?.requests ?? 0;

  // 1. The fund lists, fetched once per load and kept: the cost is counted from them.
  const listed = await fundLists(provider, dirs.state, costs, report, say);
  const byCode = new Map(listed.map((f) => [f.code, f]));

  // 2. What earlier runs fetched: a kept history counts only when its file is whole.
  const done = readJournal(dirs.journal, dirs.prices, byCode);
  const pending = listed.filter((f) => !done.has(f.code)).map((f) => f.code);

  const estimate = estimateCost(done, pending.length, byCode, lastClosed, costs, opts.maxRate);
  const summary = (): LoadSummary => summarize(listed, done, calls(), requests(), estimate);
  say(estimateLine(listed, pending.length, estimate, lastClosed, costs, opts.maxRate));
  if (opts.estimate) return { outcome: 'estimate', id: null, asOf: null, summary: summary(), report };

  const progress = progressOf(opts, done, calls);
  const run: LoadRun = { opts, provider, report, lastClosed, dirs, listed, byCode, done, summary, progress };
  // 3. The histories, `concurrency` at a time.
  await fetchHistories(run, pending);
  // 4. The days the histories do not reach, from the bulk API.
  const days = await fetchDays(run);
  // 5. The gate, funds.csv and the build.
  return await publishLoad(run, days);
}

function loadingProvider(opts: FirstLoadOptions, report: BuildReport): LoadingProvider {
  const provider = opts.provider;
  if (provider.universe === undefined || provider.rawHistory === undefined)
    throw new BuildError(
      `the ${provider.name} provider cannot load a universe from nothing: use --provider eodhd, ` +
        `or build ${opts.source} first (fundreturns build --source DIR)`,
      report,
    );
  return provider as LoadingProvider;
}

/** The load's directories, made, with the temp files of a killed run swept away. */
function loadDirs(source: string): LoadDirs {
  const state = join(source, LOAD_STATE_DIR);
  const prices = join(source, 'prices');
  const daily = join(source, 'daily');
  for (const d of [state, prices, daily]) mkdirSync(d, { recursive: true });
  for (const d of [state, prices, daily]) sweepDeadTempsSync(d);
  return { state, journal: join(state, 'histories.jsonl'), prices, daily };
}

/** The provider's fund lists, current and delisted: fetched once per load and kept in the state directory. */
async function fundLists(
  provider: LoadingProvider,
  state: string,
  costs: CallCosts,
  report: BuildReport,
  say: (line: string) => void,
): Promise<FundRecord[]> {
  const universePath = join(state, 'universe.csv');
  if (!existsSync(universePath)) {
    say(
      `first load: fetching the ${provider.name} fund lists, current and delisted (${costs.universe} API calls)`,
    );
    const bytes = await stopOnLimit(() => provider.universe(), report, null);
    writeWhole(universePath, bytes);
  }
  const listed = parseFundsFile(readFileSync(universePath), 'universe.csv').funds.sort((a, b) =>
    compareCodes(a.code, b.code),
  );
  if (listed.length === 0)
    throw new LoadRefused(
      `the ${provider.name} fund lists name no fund or ETF: nothing to load`,
      report,
      true,
    );
  return listed;
}

interface Progress {
  /** One more history kept. */
  kept(): void;
  tell(phase: LoadProgress['phase'], n: number, total: number): void;
}

/** The progress callback, with the histories kept and left out of all runs counted as they come. */
function progressOf(opts: FirstLoadOptions, done: ReadonlyMap<string, Entry>, calls: () => number): Progress {
  let loaded = 0;
  for (const e of done.values()) if (e.ok) loaded++;
  return {
    kept: () => {
      loaded++;
    },
    tell: (phase, n, total) => {
      opts.onProgress?.({ phase, done: n, total, calls: calls(), loaded, failed: done.size - loaded });
    },
  };
}

/** The histories not fetched yet, `concurrency` at a time, each journalled as it comes. */
async function fetchHistories(run: LoadRun, pending: readonly string[]): Promise<void> {
  const { opts, done, progress } = run;
  const total = run.listed.length;
  progress.tell('histories', done.size, total);
  let next = 0;
  let stop: unknown = null;
  const latest = latestAcceptedDay(opts.now());
  const worker = async (): Promise<void> => {
    while (stop === null && next < pending.length) {
      if (opts.signal?.aborted) {
        stop ??= 'interrupted';
        return;
      }
      const code = pending[next++];
      let bytes: Uint8Array | null;
      try {
        bytes = await run.provider.rawHistory(code);
      } catch (e) {
        stop ??= e;
        return;
      }
      const entry = classify(code, bytes, latest, run.lastClosed);
      journalHistory(run.dirs.journal, run.dirs.prices, entry, bytes);
      done.set(code, entry);
      if (entry.ok) progress.kept();
      progress.tell('histories', done.size, total);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  if (stop !== null) throw stopped(stop, run.report, run.summary());
}

/** The days the histories do not reach, from the bulk API; a day file already here is whole. */
async function fetchDays(run: LoadRun): Promise<Day[]> {
  const { opts, provider, report, progress } = run;
  const days = missingDays(run.done, run.byCode, run.lastClosed);
  let dayCount = 0;
  progress.tell('days', 0, days.length);
  for (const day of days) {
    if (opts.signal?.aborted) throw stopped('interrupted', report, run.summary());
    const path = join(run.dirs.daily, `${formatDay(day)}.csv`);
    if (!existsSync(path)) {
      const bytes = await stopOnLimit(() => provider.day(day), report, run.summary);
      if (bytes === null)
        throw new LoadStopped(
          `the ${provider.name} provider has no data for ${formatDay(day)} yet: run the same command again later`,
          report,
          'provider',
          run.summary(),
        );
      writeWhole(path, dayRows(bytes, day, run.done, run.byCode, opts.minCoverage, report));
    }
    progress.tell('days', ++dayCount, days.length);
  }
  return days;
}

/** The coverage gate, funds.csv and the rates, then the build; the load's state goes once it has published. */
async function publishLoad(run: LoadRun, days: readonly Day[]): Promise<LoadResult> {
  const { opts, listed, done, report } = run;
  const live = listed.filter((f) => !f.isInactive);
  const usable = live.filter((f) => done.get(f.code)?.ok).length;
  const final = { ...run.summary(), days: days.map(formatDay) };
  writeWhole(join(opts.source, LOAD_REPORT), `${JSON.stringify(loadReportJson(final), null, 2)}\n`);
  if (live.length > 0 && usable < opts.minCoverage * live.length)
    throw new LoadRefused(
      `${usable} of the ${live.length} current funds have a usable history (${((usable / live.length) * 100).toFixed(1)} %), ` +
        `under the ${(opts.minCoverage * 100).toFixed(0)} % a universe must cover: nothing published ` +
        `(the funds left out and why: ${join(opts.source, LOAD_REPORT)}; run again to fetch them again, ` +
        'or --min-coverage loosens this)',
      report,
      true,
    );
  writeWhole(join(opts.source, 'funds.csv'), fundsText(listed, done));
  // The risk-free rate (C41): read by the build from the source like every other file.
  const rates = await run.provider.rates?.(run.lastClosed);
  if (rates) {
    mkdirSync(join(opts.source, 'rates'), { recursive: true });
    writeWhole(join(opts.source, RATES_PATH), rates);
  }
  run.progress.tell('build', 0, 1);
  const built = await rebuildAndPublish({ ...opts, days: days.length > 0 });
  run.progress.tell('build', 1, 1);
  rmSync(run.dirs.state, { recursive: true, force: true });
  return { outcome: 'published', id: built.id, asOf: built.asOf, summary: final, report: built.report };
}

/**
 * A bulk day's rows that extend a kept history (later than its last row); the others
 * are stale or name a fund left out. A delivery naming fewer than `minCoverage` of the
 * current funds with a history is short (the refresh's gate): refused, nothing written.
 */
function dayRows(
  bytes: Uint8Array,
  day: Day,
  done: ReadonlyMap<string, Entry>,
  listed: ReadonlyMap<string, FundRecord>,
  minCoverage: number,
  report: BuildReport,
): Uint8Array {
  const date = formatDay(day);
  const lines = new TextDecoder().decode(bytes).split('\n');
  let out = `${lines[0]}\n`;
  let named = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    const code = line.slice(0, line.indexOf(','));
    const e = done.get(code);
    if (e === undefined || !e.ok) continue;
    if (!listed.get(code)?.isInactive) named++;
    if (e.last < date) out += `${line}\n`;
  }
  let current = 0;
  for (const e of done.values()) if (e.ok && !listed.get(e.code)?.isInactive) current++;
  if (current > 0 && named < minCoverage * current)
    throw new LoadRefused(
      `${date} from the bulk API has rows for ${named} of the ${current} current funds with a history, ` +
        `under the ${(minCoverage * 100).toFixed(0)} % a day must cover (a short delivery?): nothing written, ` +
        'run again later (or --min-coverage loosens this)',
      report,
      true,
    );
  return encoder.encode(out);
}

/** funds.csv of the loaded universe: the funds with a usable history; a delisted one inactive since its last row. */
function fundsText(listed: readonly FundRecord[], done: ReadonlyMap<string, Entry>): string {
  const rows: FundRecord[] = [];
  for (const f of listed) {
    const e = done.get(f.code);
    if (e === undefined || !e.ok) continue;
    // The provider's delisted list carries no date; the fund's last price is the best one there is.
    rows.push({ ...f, inactiveDate: f.isInactive ? parseDay(e.last) : null });
  }
  return fundsFileText(rows);
}

/** A provider call whose limit (the budget, the daily limit) becomes a clean stop. */
async function stopOnLimit<T>(
  f: () => Promise<T>,
  report: BuildReport,
  summary: (() => LoadSummary) | null,
): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw stopped(e, report, summary?.() ?? emptySummary());
  }
}

/** The error a stop becomes: a limit or Ctrl-C is a clean stop, anything else is passed on. */
function stopped(e: unknown, report: BuildReport, summary: LoadSummary): unknown {
  const where = `${summary.loaded + summary.failed.length} of ${summary.listed} histories done`;
  if (e === 'interrupted')
    return new LoadStopped(
      `interrupted: ${where}, kept; run the same command again to continue`,
      report,
      'interrupted',
      summary,
    );
  if (!(e instanceof ProviderError) || !e.retryable) return e;
  const cause: StopCause =
    e.name === 'CallBudgetReached' ? 'budget' : e.name === 'DailyLimitReached' ? 'daily_limit' : 'provider';
  const then =
    cause === 'provider'
      ? 'run the same command again later to continue'
      : 'run the same command again tomorrow (after midnight GMT, when the daily limit resets) to continue';
  return new LoadStopped(`${e.message}; ${where}, kept: ${then}`, report, cause, summary);
}
