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
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { lastTradingDayOnOrBefore, previousTradingDay, tradingDaysInRange } from '../../core/calendar.js';
import { compareCodes } from '../../core/codes.js';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { sweepDeadTempsSync, writeAtomicSync } from '../../core/files/atomic.js';
import { prune, publish, readCurrent } from '../../core/snapshot/directory.js';
import { readManifest } from '../../core/snapshot/reader.js';
import { startWorker } from '../../core/start-thread.js';
import type { FundRecord } from '../../core/types.js';
import { lastClosedDay } from '../../core/us-close.js';
import { BuildError } from '../build.js';
import { BuildReport, type ReportJson } from '../report/build-report.js';
import { latestAcceptedDay } from '../source/csv.js';
import { fundsFileText, parseFundsFile } from '../source/funds.js';
import { parsePriceFile } from '../source/prices.js';
import { RATES_PATH } from '../source/rates.js';
import type { BuildStep, BuildStepResult } from './build-worker.js';
import type { CallMeter } from './call-meter.js';
import { type CallCosts, type Provider, ProviderError } from './provider.js';
import { writeWhole } from './records.js';

/** Where a load keeps its progress inside the source directory; gone once it has published. */
export const LOAD_STATE_DIR = '.first-load';
/** The load's report of every fund left out, kept in the source directory. */
export const LOAD_REPORT = 'load-report.json';
/** Where the build runs, inside the snapshots directory (same file system: published by a rename). */
const BUILD_DIR = '.first-load-build';

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

type FailReason = 'not_found' | 'empty' | 'html' | 'no_adjusted_close' | 'no_valid_rows';

interface FailedFund {
  code: string;
  reason: FailReason;
  detail: string;
}

export interface LoadSummary {
  /** Funds the provider lists (current and delisted). */
  listed: number;
  current: number;
  delisted: number;
  /** Funds with a usable history. */
  loaded: number;
  /** Funds left out, with why. */
  failed: FailedFund[];
  /** Funds whose history has rows the build skips (C36), with the count: they are kept. */
  badRows: Record<string, number>;
  /** Trading days fetched from the bulk API. */
  days: string[];
  /** API calls and requests spent by this run. */
  calls: number;
  requests: number;
  estimate: LoadEstimate;
}

interface LoadEstimate {
  histories: number;
  days: number;
  calls: number;
  requests: number;
  /** At the pace given, in seconds; null when unpaced. */
  seconds: number | null;
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

/** A fund's line in the journal: kept (with its file's size) or left out (with why). */
type Entry =
  | { code: string; ok: true; bytes: number; last: string; through: string; bad: number }
  | { code: string; ok: false; reason: FailReason; detail: string };

const encoder = new TextEncoder();

export async function firstLoad(opts: FirstLoadOptions): Promise<LoadResult> {
  const say = opts.say ?? (() => {});
  const report = new BuildReport();
  const provider = opts.provider;
  if (provider.universe === undefined || provider.rawHistory === undefined)
    throw new BuildError(
      `the ${provider.name} provider cannot load a universe from nothing: use --provider eodhd, ` +
        `or build ${opts.source} first (fundreturns build --source DIR)`,
      report,
    );
  const costs: CallCosts = provider.callCosts ?? { list: 1, universe: 1, history: 1, day: 1 };
  const state = join(opts.source, LOAD_STATE_DIR);
  const prices = join(opts.source, 'prices');
  const dailyDir = join(opts.source, 'daily');
  for (const d of [state, prices, dailyDir]) mkdirSync(d, { recursive: true });
  for (const d of [state, prices, dailyDir]) sweepDeadTempsSync(d);
  // The last session that has closed (a weekend's clock names its Friday).
  const lastClosed = lastTradingDayOnOrBefore(lastClosedDay(opts.now()));
  const calls = () => opts.meter?.spent ?? 0;
  const requests = () => opts.meter?.requests ?? 0;

  // 1. The fund lists, fetched once per load and kept: the cost is counted from them.
  const universePath = join(state, 'universe.csv');
  if (!existsSync(universePath)) {
    say(
      `first load: fetching the ${provider.name} fund lists, current and delisted (${costs.universe} API calls)`,
    );
    const bytes = await stopOnLimit(() => (provider.universe as () => Promise<Uint8Array>)(), report, null);
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
  const byCode = new Map(listed.map((f) => [f.code, f]));

  // 2. What earlier runs fetched: a kept history counts only when its file is whole.
  const journalPath = join(state, 'histories.jsonl');
  const done = readJournal(journalPath, prices, byCode);
  const pending = listed.filter((f) => !done.has(f.code)).map((f) => f.code);

  const estimate = estimateCost(done, pending.length, byCode, lastClosed, costs, opts.maxRate);
  const summary = (): LoadSummary => summarize(listed, done, calls(), requests(), estimate);
  say(estimateLine(listed, pending.length, estimate, lastClosed, costs, opts.maxRate));
  if (opts.estimate) return { outcome: 'estimate', id: null, asOf: null, summary: summary(), report };

  // 3. The histories, `concurrency` at a time.
  let loaded = 0;
  for (const e of done.values()) if (e.ok) loaded++;
  const progress = (phase: LoadProgress['phase'], n: number, total: number): void => {
    opts.onProgress?.({ phase, done: n, total, calls: calls(), loaded, failed: done.size - loaded });
  };
  const total = listed.length;
  progress('histories', done.size, total);
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
        bytes = await (provider.rawHistory as (c: string) => Promise<Uint8Array | null>)(code);
      } catch (e) {
        stop ??= e;
        return;
      }
      const entry = classify(code, bytes, latest, lastClosed);
      if (entry.ok) {
        // Journalled before it appears: a price file no journal line vouches for is removed.
        writeAtomicSync(join(prices, `${code}.csv`), bytes as Uint8Array, {
          durable: false,
          beforeRename: () => appendFileSync(journalPath, `${JSON.stringify(entry)}\n`),
        });
      } else appendFileSync(journalPath, `${JSON.stringify(entry)}\n`);
      done.set(code, entry);
      if (entry.ok) loaded++;
      progress('histories', done.size, total);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  if (stop !== null) throw stopped(stop, report, summary());

  // 4. The days the histories do not reach, from the bulk API.
  const days = missingDays(done, byCode, lastClosed);
  let dayCount = 0;
  progress('days', 0, days.length);
  for (const day of days) {
    if (opts.signal?.aborted) throw stopped('interrupted', report, summary());
    const path = join(dailyDir, `${formatDay(day)}.csv`);
    if (!existsSync(path)) {
      const bytes = await stopOnLimit(() => provider.day(day), report, summary);
      if (bytes === null)
        throw new LoadStopped(
          `the ${provider.name} provider has no data for ${formatDay(day)} yet: run the same command again later`,
          report,
          'provider',
          summary(),
        );
      writeWhole(path, dayRows(bytes, day, done, byCode, opts.minCoverage, report));
    }
    progress('days', ++dayCount, days.length);
  }

  // 5. The gate, funds.csv and the build.
  const live = listed.filter((f) => !f.isInactive);
  const usable = live.filter((f) => done.get(f.code)?.ok).length;
  const final = { ...summary(), days: days.map(formatDay) };
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
  const rates = await provider.rates?.(lastClosed);
  if (rates) {
    mkdirSync(join(opts.source, 'rates'), { recursive: true });
    writeWhole(join(opts.source, RATES_PATH), rates);
  }
  progress('build', 0, 1);
  const built = await rebuildAndPublish({ ...opts, days: days.length > 0 });
  progress('build', 1, 1);
  rmSync(state, { recursive: true, force: true });
  return { outcome: 'published', id: built.id, asOf: built.asOf, summary: final, report: built.report };
}

/**
 * A source directory built and published as `build --source` then `build --daily`
 * would (the same pipeline, so the same figures), in a private directory of the
 * snapshots directory; checked against its manifest, then published with one rename.
 * The caller holds the builds' lock.
 */
export async function rebuildAndPublish(opts: {
  source: string;
  snapshots: string;
  keep: number;
  maxBadShare: number;
  now: () => number;
  threads?: number;
  /** Whether the source's daily/ files are applied after the full build. */
  days: boolean;
  /** Publish even when the universe shrank to under half the live one's. */
  allowShrink?: boolean;
}): Promise<{ id: string; asOf: string; report: BuildReport }> {
  const work = join(opts.snapshots, BUILD_DIR);
  rmSync(work, { recursive: true, force: true });
  const step = {
    source: opts.source,
    snapshots: work,
    maxBadShare: opts.maxBadShare,
    threads: opts.threads ?? 1,
    allowShrink: opts.allowShrink,
    nowMs: opts.now(),
  };
  try {
    let report = await buildStep({ ...step, kind: 'full' });
    if (opts.days) report = mergeReports(report, await buildStep({ ...step, kind: 'daily' }));
    const id = readCurrent(work) as string;
    await verifyFiles(join(work, id));
    const asOf = readManifest(join(work, id)).as_of;
    const staging = join(opts.snapshots, `.tmp-${id}`);
    renameSync(join(work, id), staging);
    publish(opts.snapshots, staging, id);
    prune(opts.snapshots, opts.keep);
    return { id, asOf, report };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One build step in a thread of its own (build-worker.ts): its memory is gone when it returns. */
function buildStep(step: BuildStep): Promise<BuildReport> {
  return new Promise((resolve, reject) => {
    // A small young generation: the step's large arrays live outside V8's heap, and the
    // default semi-spaces added some 30 MB at the append's peak (1.38 → 1.35 GB
    // measured), which the first load, holding the loader's own memory too, needs
    // under 1.5 GiB; no slower in the same measurement.
    const worker = startWorker(import.meta.url, 'build-worker', {
      workerData: step,
      resourceLimits: { maxYoungGenerationSizeMb: 6 },
    });
    let result: BuildStepResult | null = null;
    worker.on('message', (m: BuildStepResult) => {
      result = m;
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      const r = result as BuildStepResult | null;
      if (r === null)
        reject(new Error(`the ${step.kind} build step ended (exit ${code}) before it said how it went`));
      else if (r.ok) resolve(reportFromJson(r.report));
      else
        reject(new BuildError(r.message, r.report === null ? new BuildReport() : reportFromJson(r.report)));
    });
  });
}

/** A report sent back from a build step, as the report object the summary and the manifest use. */
function reportFromJson(j: ReportJson): BuildReport {
  const r = new BuildReport();
  r.dataRows = j.dataRows;
  r.fundsIn = j.fundsIn;
  r.fundsOut = j.fundsOut;
  r.skippedFundTypes = j.skippedFundTypes;
  for (const s of Object.values(j.reasons)) r.addMany(s.first, s.count);
  for (const [code, n] of Object.entries(j.perFund)) r.perFund.set(code, n);
  r.examples.push(...j.examples);
  return r;
}

/** The full build's report with the append's rows and problems added, for one summary. */
function mergeReports(full: BuildReport, daily: BuildReport): BuildReport {
  full.dataRows += daily.dataRows;
  for (const s of daily.reasons.values()) full.addMany(s.first, s.count);
  return full;
}

/** Every file of a snapshot against its manifest (size and SHA-256), read as a stream. */
async function verifyFiles(dir: string): Promise<void> {
  const manifest = readManifest(dir);
  for (const [name, f] of Object.entries(manifest.files)) {
    const path = join(dir, name);
    const size = statSync(path).size;
    if (size !== f.bytes)
      throw new Error(`${path} has ${size} bytes, its manifest says ${f.bytes}: not published`);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    const digest = hash.digest('hex');
    if (digest !== f.sha256)
      throw new Error(`${path}: SHA-256 ${digest}, its manifest says ${f.sha256}: not published`);
  }
}

/** What a fund's answer is: a usable history (with its last row), or why it is left out. */
function classify(code: string, bytes: Uint8Array | null, latest: Day, lastClosed: Day): Entry {
  if (bytes === null)
    return { code, ok: false, reason: 'not_found', detail: 'the provider does not know the ticker (404)' };
  const text = new TextDecoder().decode(bytes.subarray(0, 512)).trimStart();
  if (text === '') return { code, ok: false, reason: 'empty', detail: 'the history is empty' };
  if (text.startsWith('<'))
    return { code, ok: false, reason: 'html', detail: 'an HTML page came where the history should be' };
  const p = parsePriceFile(bytes, `prices/${code}.csv`, code, latest);
  const header = p.problems.find((x) => x.reason === 'missing_header_column');
  if (header !== undefined)
    return {
      code,
      ok: false,
      reason: 'no_adjusted_close',
      detail: `no usable header: ${header.detail ?? 'missing column'}`,
    };
  const n = p.dates.length;
  if (n === 0)
    return {
      code,
      ok: false,
      reason: 'no_valid_rows',
      detail:
        p.dataRows === 0
          ? 'a header and no rows'
          : `none of its ${p.dataRows} rows passes the build's checks`,
    };
  const last = p.dates[n - 1];
  // The provider may not have the last session yet when the history is fetched (its
  // prices come in the evening): the history is taken as complete up to the session
  // before, and the bulk day fills the last one. Rows older than that are none missed.
  const through = Math.max(Math.min(last, lastClosed), previousTradingDay(lastClosed));
  return {
    code,
    ok: true,
    bytes: bytes.length,
    last: formatDay(last),
    through: formatDay(through),
    bad: p.problems.length,
  };
}

/**
 * The journal of earlier runs. A kept history counts when its file has the size its
 * line says (the line is written before the rename, so a file renamed is whole and a
 * missing or different one is fetched again); left-out funds are tried again.
 */
function readJournal(
  path: string,
  prices: string,
  listed: ReadonlyMap<string, FundRecord>,
): Map<string, Entry> {
  const done = new Map<string, Entry>();
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  for (const line of text.split('\n')) {
    let e: Entry;
    try {
      e = JSON.parse(line) as Entry;
    } catch {
      continue; // a line cut by a kill: that fund is fetched again
    }
    if (!listed.has(e.code)) continue;
    if (!e.ok) {
      done.delete(e.code);
      continue;
    }
    let size = -1;
    try {
      size = statSync(join(prices, `${e.code}.csv`)).size;
    } catch {
      // not renamed into place before the stop
    }
    if (size === e.bytes) done.set(e.code, e);
    else done.delete(e.code);
  }
  // A price file no line vouches for is from no finished fetch of this load.
  for (const name of readdirSync(prices))
    if (name.endsWith('.csv') && !done.has(name.slice(0, -4))) rmSync(join(prices, name), { force: true });
  return done;
}

/**
 * The trading days after the earliest day a current fund's history is complete
 * through, up to the last closed session: what the bulk API must fill in.
 */
function missingDays(
  done: ReadonlyMap<string, Entry>,
  listed: ReadonlyMap<string, FundRecord>,
  lastClosed: Day,
): Day[] {
  let from = lastClosed;
  for (const e of done.values()) {
    if (!e.ok || listed.get(e.code)?.isInactive) continue;
    from = Math.min(from, parseDay(e.through) as Day);
  }
  return tradingDaysInRange(from + 1, lastClosed);
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

function summarize(
  listed: readonly FundRecord[],
  done: ReadonlyMap<string, Entry>,
  calls: number,
  requests: number,
  estimate: LoadEstimate,
): LoadSummary {
  const failed: FailedFund[] = [];
  const badRows: Record<string, number> = {};
  let loaded = 0;
  for (const e of done.values()) {
    if (!e.ok) failed.push({ code: e.code, reason: e.reason, detail: e.detail });
    else {
      loaded++;
      if (e.bad > 0) badRows[e.code] = e.bad;
    }
  }
  failed.sort((a, b) => compareCodes(a.code, b.code));
  const delisted = listed.filter((f) => f.isInactive).length;
  return {
    listed: listed.length,
    current: listed.length - delisted,
    delisted,
    loaded,
    failed,
    badRows,
    days: [],
    calls,
    requests,
    estimate,
  };
}

function loadReportJson(s: LoadSummary): Record<string, unknown> {
  return {
    listed: s.listed,
    current: s.current,
    delisted: s.delisted,
    loaded: s.loaded,
    leftOut: s.failed.length,
    funds: s.failed,
    withBadRows: s.badRows,
  };
}

/** What the rest of the load costs: histories not fetched yet and the bulk days after the histories. */
function estimateCost(
  done: ReadonlyMap<string, Entry>,
  pending: number,
  listed: ReadonlyMap<string, FundRecord>,
  lastClosed: Day,
  costs: CallCosts,
  maxRate: number | undefined,
): LoadEstimate {
  // Histories still to come are complete through at least the session before the last.
  const days = Math.max(
    missingDays(done, listed, lastClosed).length,
    pending > 0 ? tradingDaysInRange(previousTradingDay(lastClosed) + 1, lastClosed).length : 0,
  );
  const requests = pending + days * 3;
  return {
    histories: pending,
    days,
    calls: pending * costs.history + days * costs.day,
    requests,
    seconds: maxRate === undefined || !Number.isFinite(maxRate) ? null : Math.ceil((requests / maxRate) * 60),
  };
}

function estimateLine(
  listed: readonly FundRecord[],
  pending: number,
  e: LoadEstimate,
  lastClosed: Day,
  costs: CallCosts,
  maxRate: number | undefined,
): string {
  const delisted = listed.filter((f) => f.isInactive).length;
  const n = (x: number) => x.toLocaleString('en-US');
  const time =
    e.seconds === null ? '' : `; at ${n(maxRate as number)} requests a minute about ${duration(e.seconds)}`;
  return (
    `first load: ${n(listed.length)} funds listed (${n(listed.length - delisted)} current, ${n(delisted)} delisted), ` +
    `${n(listed.length - pending)} histories already here; to fetch: ${n(pending)} histories ` +
    `(${n(e.histories * costs.history)} API calls) and up to ${e.days} trading day${e.days === 1 ? '' : 's'} to ` +
    `${formatDay(lastClosed)} from the bulk API (${n(costs.day)} calls each): ${n(e.calls)} API calls${time}`
  );
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
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

function emptySummary(): LoadSummary {
  return {
    listed: 0,
    current: 0,
    delisted: 0,
    loaded: 0,
    failed: [],
    badRows: {},
    days: [],
    calls: 0,
    requests: 0,
    estimate: { histories: 0, days: 0, calls: 0, requests: 0, seconds: null },
  };
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
