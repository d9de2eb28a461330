/**
 * What the first-load tests share: a generated universe for the EODHD stand-in to
 * serve, the snapshot `build` makes of that universe's files (what a first load must
 * equal), and a comparison of two snapshots figure by figure.
 */
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatDay } from '../../core/dates.js';
import type { SnapshotColumns } from '../../core/snapshot/columns.js';
import { readCurrent } from '../../core/snapshot/directory.js';
import { loadSnapshot } from '../../core/snapshot/reader.js';
import { buildFromSource } from '../build.js';
import { appendDaily } from '../daily-append.js';
import { generateUniverse } from '../generate/index.js';
import { expectSameColumns } from './refresh.test-helper.js';

export interface StandInUniverse {
  /** The generated source directory the stand-in answers from. */
  dir: string;
  /** Its last day, and the days in its daily/ files (the last `dailyDays` sessions). */
  to: string;
  dailyDates: string[];
}

export async function standInUniverse(
  dir: string,
  opts: { funds: number; seed: number; from: number; to: number; dailyDays: number },
): Promise<StandInUniverse> {
  await generateUniverse({ out: dir, ...opts, threads: 1 });
  const dailyDates = readdirSync(join(dir, 'daily'))
    .map((n) => n.slice(0, 10))
    .sort();
  return { dir, to: formatDay(opts.to), dailyDates };
}

/**
 * `build --source` then `build --daily` of the universe's own files, with one change
 * a first load cannot avoid: the provider's delisted list carries no date, so a
 * delisted fund's InactiveDate is its last price date (what the load takes).
 */
export async function buildOfUniverse(u: StandInUniverse, work: string, now: () => number): Promise<string> {
  const source = join(work, 'source');
  cpSync(u.dir, source, { recursive: true });
  const lines = readFileSync(join(source, 'funds.csv'), 'utf8').trimEnd().split('\n');
  const out = [lines[0]];
  for (const line of lines.slice(1)) {
    const m = /^([^,]+),.*,true,(\d{4}-\d{2}-\d{2})$/.exec(line);
    if (m === null) {
      out.push(line);
      continue;
    }
    const prices = readFileSync(join(source, 'prices', `${m[1]}.csv`), 'utf8')
      .trimEnd()
      .split('\n');
    out.push(`${line.slice(0, -10)}${prices[prices.length - 1].slice(0, 10)}`);
  }
  writeFileSync(join(source, 'funds.csv'), `${out.join('\n')}\n`);
  const snapshots = join(work, 'snapshots');
  const at = () => new Date(now());
  await buildFromSource({ source, snapshots, keep: 2, maxBadShare: 0.01, threads: 1, now: at });
  if (u.dailyDates.length > 0)
    await appendDaily({ daily: source, snapshots, keep: 2, maxBadShare: 0.01, now: at });
  return snapshots;
}

async function liveColumns(snapshots: string): Promise<SnapshotColumns> {
  const id = readCurrent(snapshots);
  if (id === null) throw new Error(`nothing published in ${snapshots}`);
  return (await loadSnapshot(join(snapshots, id))).columns;
}

/** Two snapshots directories whose live snapshots hold the same funds, series and every served figure. */
export async function expectSameSnapshot(actual: string, expected: string): Promise<void> {
  expectSameColumns(await liveColumns(actual), await liveColumns(expected));
}

/** The codes of the universe's current (not delisted) funds and ETFs, in funds.csv order. */
export function currentCodes(u: StandInUniverse): string[] {
  return readFileSync(join(u.dir, 'funds.csv'), 'utf8')
    .split('\n')
    .filter((l) => /,(FUND|ETF),[^,]*,false,/.test(l))
    .map((l) => l.split(',')[0]);
}

/** Every file under `dir`, at any depth: what a test searches for a secret. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}
