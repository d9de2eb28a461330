/**
 * The first load's journal (`.first-load/histories.jsonl`): one line per fund fetched,
 * kept (with the size of its file) or left out (with why). A kept history's line is
 * written before its file is renamed into place, so a file whose size does not match
 * its line (or has none) is fetched again, never taken for whole.
 */
import { appendFileSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { previousTradingDay, tradingDaysInRange } from '../../core/calendar.js';
import { type Day, formatDay, parseDay } from '../../core/dates.js';
import { writeAtomicSync } from '../../core/files/atomic.js';
import type { FundRecord } from '../../core/types.js';
import { parsePriceFile } from '../source/prices.js';

export type FailReason = 'not_found' | 'empty' | 'html' | 'no_adjusted_close' | 'no_valid_rows';

/** A fund's line in the journal: kept (with its file's size) or left out (with why). */
export type Entry =
  | { code: string; ok: true; bytes: number; last: string; through: string; bad: number }
  | { code: string; ok: false; reason: FailReason; detail: string };

/** A fund's answer journalled; a kept history's file is renamed into place only after its line. */
export function journalHistory(
  journal: string,
  prices: string,
  entry: Entry,
  bytes: Uint8Array | null,
): void {
  if (entry.ok) {
    // Journalled before it appears: a price file no journal line vouches for is removed.
    writeAtomicSync(join(prices, `${entry.code}.csv`), bytes as Uint8Array, {
      durable: false,
      beforeRename: () => appendFileSync(journal, `${JSON.stringify(entry)}\n`),
    });
  } else appendFileSync(journal, `${JSON.stringify(entry)}\n`);
}

/** What a fund's answer is: a usable history (with its last row), or why it is left out. */
export function classify(code: string, bytes: Uint8Array | null, latest: Day, lastClosed: Day): Entry {
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
export function readJournal(
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
export function missingDays(
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
