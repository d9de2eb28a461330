/**
 * The US close: 16:00 America/New_York on a date, as an instant. Both sides use it:
 * the server measures data age from it (/healthz, C31), and the generator ends a demo
 * universe on the last session that has closed, so its data is never stamped for a
 * close still to come.
 */

import { now } from './clock.js';
import { type Day, formatDay, todayUtc } from './dates.js';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const CLOSE_HOUR_NY = 16;

// One formatter for the process: constructing Intl formatters is slow, and the
// time-zone rules it carries (ICU's tz data) are what get DST right for every year.
const nyParts = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Offset of New York wall time from UTC at `instantMs`, in ms (-5 h in EST, -4 h in EDT). */
function newYorkOffsetMs(instantMs: number): number {
  const p: Record<string, number> = {};
  for (const part of nyParts.formatToParts(instantMs)) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  const wallAsUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wallAsUtc - Math.floor(instantMs / 1000) * 1000;
}

/**
 * The instant of 16:00 America/New_York on `asOf` (YYYY-MM-DD). The offset is
 * sampled at 20:00 UTC that day, which is 15:00 or 16:00 New York time: after the
 * 02:00 DST switch of a transition day, so it is that afternoon's offset.
 */
export function usCloseUtc(asOf: string): Date {
  const m = DATE_RE.exec(asOf);
  if (m === null) throw new RangeError(`data_as_of must be YYYY-MM-DD, got ${JSON.stringify(asOf)}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const probe = Date.UTC(y, mo - 1, d, 20);
  const back = new Date(probe);
  // Date.UTC rolls 2025-02-30 over to March; a snapshot with such a date is corrupt.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) {
    throw new RangeError(`data_as_of is not a calendar date: ${asOf}`);
  }
  return new Date(Date.UTC(y, mo - 1, d, CLOSE_HOUR_NY) - newYorkOffsetMs(probe));
}

/**
 * The last day whose US close has passed at `nowMs`: today (UTC date) once 16:00 New
 * York time is behind us, else the day before. Not necessarily a trading day.
 */
export function lastClosedDay(nowMs: number = now()): Day {
  const today = todayUtc(nowMs);
  return nowMs >= usCloseUtc(formatDay(today)).getTime() ? today : today - 1;
}
