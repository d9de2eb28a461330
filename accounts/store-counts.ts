/**
 * The embedded store's count files, beside the log and never under its lock (only the
 * server that holds the store writes them, one write at a time):
 *
 *   usage-YYYY-MM.json    {"<account id>": count}, rewritten atomically
 *   daily-YYYY-MM.json    {"<YYYY-MM-DD>": {"<key id>": [admitted, refused]}}, requests per key
 *                         per day, added to atomically, kept DAILY_KEEP_DAYS
 *   plans.json            the limits the last server on the store enforces
 *
 * Each is an editable JSON file, so what is read is checked and a broken one is
 * refused, naming it, rather than counted from zero.
 */
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errCode } from '../core/files/atomic.js';
import { addDays, dayStart } from './daily-usage.js';
import { DAILY_KEEP_DAYS, type DailyCount, isObject, type PlanLimits, type PlanName } from './model.js';
import { parsePlans } from './plans.js';
import { writeStoreFile } from './store-log.js';

/** The limits the last server on this store enforces (readPlans). */
export const PLANS_FILE = 'plans.json';
export const USAGE_FILE = /^usage-(\d{4}-\d{2})\.json$/;
export const DAILY_FILE = /^daily-(\d{4}-\d{2})\.json$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

type DayCounts = Map<string, Map<string, DailyCount>>;

/** A JSON file's value; undefined when there is no such file; throws, naming it, when it is not JSON. */
async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (errCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${path}: not valid JSON`);
  }
}

const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

function usagePath(dir: string, month: string): string {
  if (!MONTH.test(month)) throw new Error(`usage month must be YYYY-MM, not ${JSON.stringify(month)}`);
  return join(dir, `usage-${month}.json`);
}

export async function readUsageFile(dir: string, month: string): Promise<Map<string, number>> {
  const path = usagePath(dir, month);
  const value = await readJsonFile(path);
  if (value === undefined) return new Map();
  if (!isObject(value)) throw new Error(`${path}: expected an object of account id to count`);
  const out = new Map<string, number>();
  for (const [id, n] of Object.entries(value)) {
    if (!Number.isSafeInteger(n) || (n as number) < 0)
      throw new Error(`${path}: the count of ${id} must be a whole number, not ${JSON.stringify(n)}`);
    out.set(id, n as number);
  }
  return out;
}

/** Check the counts before anything is queued: a bad count is the caller's bug, said at once. */
export function checkUsage(counts: ReadonlyMap<string, number>): void {
  for (const [id, n] of counts) {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`usage of ${id} must be a whole number, not ${n}`);
  }
}

/** Write the counts of `month`; accounts not in `counts` keep their stored counts. */
export async function mergeUsageFile(
  dir: string,
  month: string,
  counts: ReadonlyMap<string, number>,
): Promise<void> {
  const path = usagePath(dir, month);
  const merged = await readUsageFile(dir, month);
  for (const [id, n] of counts) merged.set(id, n);
  const body = Object.fromEntries([...merged].sort(byKey));
  await writeStoreFile(path, `${JSON.stringify(body, null, 1)}\n`);
}

export async function readPlansFile(dir: string): Promise<Record<PlanName, PlanLimits> | null> {
  const path = join(dir, PLANS_FILE);
  const json = await readJsonFile(path);
  return json === undefined ? null : parsePlans(json, path);
}

export async function writePlansFile(
  dir: string,
  plans: Readonly<Record<PlanName, PlanLimits>>,
): Promise<void> {
  await writeStoreFile(join(dir, PLANS_FILE), `${JSON.stringify(plans)}\n`);
}

function checkDailyCount(what: string, c: unknown): asserts c is DailyCount {
  if (!Array.isArray(c) || c.length !== 2 || !c.every((n) => Number.isSafeInteger(n) && n >= 0))
    throw new Error(`${what} must be [admitted, refused], two whole numbers, not ${JSON.stringify(c)}`);
}

/** The month (YYYY-MM) after `month`. */
function nextMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

function dailyPath(dir: string, month: string): string {
  return join(dir, `daily-${month}.json`);
}

async function readDailyMonth(dir: string, month: string): Promise<DayCounts> {
  const path = dailyPath(dir, month);
  const value = await readJsonFile(path);
  const out: DayCounts = new Map();
  if (value === undefined) return out;
  if (!isObject(value)) throw new Error(`${path}: expected an object of day to key counts`);
  for (const [day, keys] of Object.entries(value)) {
    if (!DAY.test(day) || day.slice(0, 7) !== month || !isObject(keys))
      throw new Error(
        `${path}: ${JSON.stringify(day)} is not a day of ${month} with an object of key counts`,
      );
    const m = new Map<string, DailyCount>();
    for (const [id, c] of Object.entries(keys)) {
      checkDailyCount(`${path}: the count of ${id} on ${day}`, c);
      m.set(id, c);
    }
    out.set(day, m);
  }
  return out;
}

export async function readDailyFiles(dir: string, from: string, to: string): Promise<DayCounts> {
  dayStart(from);
  dayStart(to);
  const out: DayCounts = new Map();
  for (let month = from.slice(0, 7); month <= to.slice(0, 7); month = nextMonth(month)) {
    for (const [day, keys] of await readDailyMonth(dir, month))
      if (day >= from && day <= to) out.set(day, keys);
  }
  return out;
}

/** The counts to add, grouped by month, checked; and the newest day among them ('' for none). */
export function groupDaily(counts: ReadonlyMap<string, ReadonlyMap<string, DailyCount>>): {
  byMonth: Map<string, Array<[string, ReadonlyMap<string, DailyCount>]>>;
  newest: string;
} {
  const byMonth = new Map<string, Array<[string, ReadonlyMap<string, DailyCount>]>>();
  let newest = '';
  for (const [day, keys] of counts) {
    dayStart(day);
    for (const [id, c] of keys) checkDailyCount(`the daily count of ${id} on ${day}`, c);
    const month = day.slice(0, 7);
    byMonth.set(month, [...(byMonth.get(month) ?? []), [day, keys]]);
    if (day > newest) newest = day;
  }
  return { byMonth, newest };
}

/**
 * Add grouped counts to their months' files, each read, added to and rewritten
 * atomically; then remove months wholly older than DAILY_KEEP_DAYS before `newest`.
 */
export async function addDailyFiles(dir: string, grouped: ReturnType<typeof groupDaily>): Promise<void> {
  for (const [month, days] of grouped.byMonth) {
    const stored = await readDailyMonth(dir, month);
    for (const [day, keys] of days) {
      const into = stored.get(day) ?? new Map<string, DailyCount>();
      for (const [id, [ok, refused]] of keys) {
        const [ok0, refused0] = into.get(id) ?? [0, 0];
        into.set(id, [ok0 + ok, refused0 + refused]);
      }
      stored.set(day, into);
    }
    const body = Object.fromEntries(
      [...stored].sort(byKey).map(([day, keys]) => [day, Object.fromEntries([...keys].sort(byKey))]),
    );
    await writeStoreFile(dailyPath(dir, month), `${JSON.stringify(body)}\n`);
  }
  // A month goes once its last day is older than the days kept.
  const oldestKept = addDays(grouped.newest, -DAILY_KEEP_DAYS).slice(0, 7);
  for (const name of await readdir(dir)) {
    const m = DAILY_FILE.exec(name);
    if (m !== null && m[1] < oldestKept)
      await unlink(join(dir, name)).catch((e: unknown) => {
        if (errCode(e) !== 'ENOENT') throw e;
      });
  }
}
