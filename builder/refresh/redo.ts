/**
 * Correcting days already published: `refresh --redo DAY` fetches DAY and every trading
 * day after it up to the live as_of again, replaces what the source directory held for
 * those days (its daily/ files, and the rows of price files dated from DAY on), rebuilds
 * from the source as `build` would, publishes, and says which funds' figures changed.
 *
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTradingDay, tradingDaysInRange } from '../../core/calendar.js';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { formatPercent } from '../../core/format.js';
import type { SnapshotColumns } from '../../core/snapshot/columns.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { loadSnapshot } from '../../core/snapshot/reader.js';
import { TRAILING_KEYS } from '../../core/types.js';
import { lastClosedDay } from '../../core/us-close.js';
import { takeBuildLock } from '../lock.js';
import { BuildReport } from '../report/build-report.js';
import { parseDailyFile } from '../source/daily-file.js';
import { dailyEntries, sourcePaths } from '../source/layout.js';
import { RefreshError } from './gates.js';
import type { Provider } from './provider.js';
import { rebuildAndPublish } from './rebuild.js';
import { fileStamp, writeWhole } from './records.js';
import type { RefreshOptions } from './refresh.js';

interface FigureChange {
  /** `return_1y`, or `calendar_2025`. */
  figure: string;
  old: string | null;
  new: string | null;
}

interface FundChange {
  code: string;
  changes: FigureChange[];
}

export interface RedoResult {
  id: string;
  asOf: string;
  days: string[];
  /** Rows the source held for those days (daily files and price-file rows), and the rows that replace them. */
  rowsBefore: number;
  rowsAfter: number;
  /** Funds whose served figures changed, with each figure before and after. */
  changed: FundChange[];
  /** Where the replaced records and this account were kept. */
  kept: string;
  report: BuildReport;
  durationMs: number;
}

export async function redo(opts: RefreshOptions & { redo: Day }): Promise<RedoResult> {
  const say = opts.say ?? (() => {});
  const release = await takeBuildLock(opts.snapshots, say, opts.wait ?? true);
  try {
    return await redoLocked(opts);
  } finally {
    await release();
  }
}

async function redoLocked(opts: RefreshOptions & { redo: Day }): Promise<RedoResult> {
  const started = Date.now();
  const say = opts.say ?? (() => {});
  const report = new BuildReport();
  const current = readCurrent(opts.snapshots);
  if (current === null) throw new RefreshError(`no snapshot in ${opts.snapshots}: nothing to redo`, report);
  const before = await loadSnapshot(join(opts.snapshots, current));
  const liveAsOf = parseDay(before.manifest.as_of) as Day;
  const from = opts.redo;
  checkRedoDay(from, liveAsOf, report);
  const days = tradingDaysInRange(from, liveAsOf);
  const figuresBefore = figures(before.columns);
  const codes = new Set(before.columns.funds.code);
  // Let go of the old snapshot before the rebuild needs the memory.
  (before as { columns: unknown }).columns = null;

  const provider = opts.provider;
  await provider.prepare?.(days);
  const lastClosed = lastClosedDay(opts.now());
  const fetched = await fetchDays(provider, days, codes, opts.gates.minCoverage, lastClosed, report);

  // The source's records for those days, replaced; what they held kept under received/.
  const kept = join(opts.source, 'received', `redo-${formatDay(from)}-${fileStamp(opts.now())}`);
  const { rowsBefore, rowsAfter } = replaceRecords(opts.source, from, fetched, kept, say);
  say(
    `redo ${formatDay(from)}..${formatDay(liveAsOf)}: ${rowsBefore} rows in the source replaced by ${rowsAfter} from ` +
      `${provider.name} (the old ones kept in ${kept}); rebuilding`,
  );

  const built = await rebuildAndPublish({
    source: opts.source,
    snapshots: opts.snapshots,
    keep: opts.keep,
    maxBadShare: opts.maxBadShare,
    now: opts.now,
    days: true,
  });
  const after = await loadSnapshot(join(opts.snapshots, built.id));
  const changed = compareFigures(figuresBefore, figures(after.columns));
  const result: RedoResult = {
    id: built.id,
    asOf: built.asOf,
    days: days.map(formatDay),
    rowsBefore,
    rowsAfter,
    changed,
    kept,
    report: built.report,
    durationMs: Date.now() - started,
  };
  mkdirSync(kept, { recursive: true });
  writeFileSync(
    join(kept, 'changes.json'),
    `${JSON.stringify({ id: result.id, asOf: result.asOf, days: result.days, rowsBefore, rowsAfter, changed }, null, 2)}\n`,
  );
  return result;
}

/** A day a redo can start from: one the NYSE traded and the live snapshot already holds. */
function checkRedoDay(from: Day, liveAsOf: Day, report: BuildReport): void {
  if (!isTradingDay(from))
    throw new RefreshError(
      `--redo ${formatDay(from)}: the NYSE was closed that day, there is nothing to fetch`,
      report,
    );
  if (from > liveAsOf)
    throw new RefreshError(
      `--redo ${formatDay(from)} is after the live snapshot's as_of ${formatDay(liveAsOf)}: ` +
        'nothing published for it yet (a plain refresh fetches it)',
      report,
    );
}

/** Every day fetched again and checked before anything changes: each must be readable and cover the funds. */
async function fetchDays(
  provider: Provider,
  days: readonly Day[],
  codes: ReadonlySet<string>,
  minCoverage: number,
  lastClosed: Day,
  report: BuildReport,
): Promise<{ day: Day; text: string }[]> {
  const fetched: { day: Day; text: string }[] = [];
  for (const day of days) {
    const bytes = await provider.day(day);
    if (bytes === null)
      throw new RefreshError(
        `the ${provider.name} provider has no data for ${formatDay(day)}: nothing changed`,
        report,
        true,
      );
    const file = `daily/${formatDay(day)}.csv`;
    const parsed = parseDailyFile(bytes, file, lastClosed, 'the last closed session');
    const header = parsed.problems.find((p) => p.reason === 'missing_header_column');
    if (header !== undefined)
      throw new RefreshError(
        `${provider.name}: ${file} cannot be read as a daily file (${header.detail}): nothing changed`,
        report,
      );
    let known = 0;
    for (let r = 0; r < parsed.rows.length; r++) if (codes.has(parsed.rows.codes[r])) known++;
    if (known < minCoverage * codes.size)
      throw new RefreshError(
        `${formatDay(day)} from ${provider.name} has rows for ${known} of the ${codes.size} funds: a short delivery, nothing changed ` +
          '(--min-coverage loosens this)',
        report,
        true,
      );
    fetched.push({ day, text: new TextDecoder().decode(bytes) });
  }
  return fetched;
}

/**
 * The source's records from `from` on replaced by the fetched days: price-file rows cut
 * and daily files moved under `kept`, then the new daily files written. Returns the rows
 * the source held for those days and the rows that replace them.
 */
function replaceRecords(
  source: string,
  from: Day,
  fetched: readonly { day: Day; text: string }[],
  kept: string,
  say: (line: string) => void,
): { rowsBefore: number; rowsAfter: number } {
  const delivered = new Set<string>();
  for (const { text } of fetched)
    for (const line of text.split('\n').slice(1)) {
      const cells = line.split(',', 2);
      if (cells.length === 2) delivered.add(`${cells[0]},${cells[1]}`);
    }
  const cut = truncatePrices(source, from, join(kept, 'prices'), (code, date) =>
    delivered.has(`${code},${date}`),
  );
  if (cut.keptWhole.length > 0)
    say(
      `${cut.keptWhole.length} funds keep their price files whole (the fetched days lack some of their rows from ` +
        `${formatDay(from)} on): ${cut.keptWhole.slice(0, 10).join(', ')}${cut.keptWhole.length > 10 ? ', …' : ''}`,
    );
  let rowsBefore = cut.rows;
  for (const path of dailyEntries(source).files) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (name.slice(0, 10) < formatDay(from)) continue;
    rowsBefore += countRows(readFileSync(path, 'utf8'));
    mkdirSync(join(kept, 'daily'), { recursive: true });
    renameSync(path, join(kept, 'daily', name));
  }
  const rowsAfter = writeDays(source, fetched, cut.lastDates);
  return { rowsBefore, rowsAfter };
}

/** The fetched days as the source's daily files, less the rows a fund's price file already holds; returns the rows written. */
function writeDays(
  source: string,
  fetched: readonly { day: Day; text: string }[],
  lastDates: ReadonlyMap<string, string>,
): number {
  let rowsAfter = 0;
  mkdirSync(join(source, 'daily'), { recursive: true });
  for (const { day, text } of fetched) {
    const date = formatDay(day);
    const lines = text.split('\n');
    let out = `${lines[0]}\n`;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      if (line === '') continue;
      const code = line.slice(0, line.indexOf(','));
      // A fund whose whole history came after the day keeps it: its rows are in its price file.
      const last = lastDates.get(code);
      if (last !== undefined && last >= date) continue;
      out += `${line}\n`;
      rowsAfter++;
    }
    writeWhole(join(source, 'daily', `${date}.csv`), out);
  }
  return rowsAfter;
}

/**
 * Price files cut before `from`: the rows dated from it on go (kept under `keptDir`)
 * when the fetched days hold a row for each of them. A file is kept whole when that
 * would leave it empty (a fund whose history began after `from`) or lose a row the
 * fetched days lack. Returns the rows removed and each fund's last date afterwards.
 */
function truncatePrices(
  source: string,
  from: Day,
  keptDir: string,
  delivered: (code: string, date: string) => boolean,
): { rows: number; lastDates: Map<string, string>; keptWhole: string[] } {
  const date = formatDay(from);
  const lastDates = new Map<string, string>();
  const keptWhole: string[] = [];
  let rows = 0;
  for (const [code, path] of sourcePaths(source).priceFiles) {
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    while (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    let keep = lines.length;
    while (keep > 1 && lines[keep - 1].slice(0, 10) >= date) keep--;
    const lacking = lines.slice(keep).some((l) => !delivered(code, l.slice(0, 10)));
    if (keep === lines.length || keep === 1 || lacking) {
      if (keep < lines.length) keptWhole.push(code);
      lastDates.set(code, lines[lines.length - 1].slice(0, 10));
      continue;
    }
    mkdirSync(keptDir, { recursive: true });
    writeFileSync(join(keptDir, `${code}.csv`), `${[lines[0], ...lines.slice(keep)].join('\n')}\n`);
    writeWhole(path, `${lines.slice(0, keep).join('\n')}\n`);
    rows += lines.length - keep;
    lastDates.set(code, lines[keep - 1].slice(0, 10));
  }
  return { rows, lastDates, keptWhole };
}

function countRows(text: string): number {
  let n = 0;
  for (const line of text.split('\n').slice(1)) if (line !== '') n++;
  return n;
}

/** Every served figure of every fund as its four-decimal text: trailing periods and calendar years. */
function figures(cols: SnapshotColumns): Map<string, Map<string, string | null>> {
  const out = new Map<string, Map<string, string | null>>();
  for (let f = 0; f < cols.funds.length; f++) {
    const m = new Map<string, string | null>();
    for (let k = 0; k < TRAILING_KEYS.length; k++)
      m.set(TRAILING_KEYS[k], formatPercent(cols.trailing.values[k][f]));
    out.set(cols.funds.code[f], m);
  }
  const c = cols.calendar;
  for (let r = 0; r < c.length; r++)
    out.get(cols.funds.code[c.fund[r]])?.set(`calendar_${c.year[r]}`, formatPercent(c.totalReturn[r]));
  return out;
}

function compareFigures(
  before: Map<string, Map<string, string | null>>,
  after: Map<string, Map<string, string | null>>,
): FundChange[] {
  const changed: FundChange[] = [];
  for (const [code, now] of after) {
    const old = before.get(code) ?? new Map<string, string | null>();
    const changes: FigureChange[] = [];
    for (const figure of new Set([...old.keys(), ...now.keys()])) {
      const a = old.get(figure) ?? null;
      const b = now.get(figure) ?? null;
      if (a !== b) changes.push({ figure, old: a, new: b });
    }
    if (changes.length > 0) changed.push({ code, changes });
  }
  return changed;
}

/** What a redo's log line says of the changes: the funds, and the first figures of each. */
export function changeLines(r: RedoResult, max = 20): string[] {
  const lines = [
    `redo ${r.days[0]}..${r.days[r.days.length - 1]}: published ${r.id} (as_of ${r.asOf}); ` +
      `${r.changed.length} fund${r.changed.length === 1 ? '' : 's'} with changed figures`,
  ];
  for (const f of r.changed.slice(0, max))
    lines.push(
      `  ${f.code}: ${f.changes
        .slice(0, 6)
        .map((c) => `${c.figure} ${c.old ?? 'null'} → ${c.new ?? 'null'}`)
        .join(', ')}${f.changes.length > 6 ? `, and ${f.changes.length - 6} more` : ''}`,
    );
  if (r.changed.length > max)
    lines.push(`  … and ${r.changed.length - max} more funds (all in ${r.kept}/changes.json)`);
  return lines;
}
