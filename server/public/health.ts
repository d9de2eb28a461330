/**
 * /healthz body (C31). Pure: the HTTP layer passes the snapshot in service, the
 * clock and the refusal message of the last rejected snapshot, and writes what
 * comes back.
 *
 * Age is counted from the US close (16:00 America/New_York) on `data_as_of`, not
 * from midnight UTC, so a freshness bound in hours means the same thing in winter
 * (EST, 21:00 UTC) and summer (EDT, 20:00 UTC) and a Friday close with the
 * default 120 h bound stays fresh through a holiday Monday's evening build.
 *
 * A negative age is reported as it is, not clamped to 0: it only happens when the
 * data is stamped for a close this server's clock has not reached yet (clock skew,
 * or a source that labels intraday prices with today's date), and hiding that would
 * make it harder to diagnose. Such data still counts as fresh (`ok`).
 */

import { tradingDaysInRange } from '../../core/calendar.js';
import { formatDay, parseDay } from '../../core/dates.js';
import { lastClosedDay, usCloseUtc } from '../../core/us-close.js';

interface HealthSnapshotInput {
  id: string;
  funds: number;
  loadedAt: Date;
  /** YYYY-MM-DD, the newest as_of date in the snapshot. */
  asOf: string;
}

export interface HealthInput {
  snapshot: HealthSnapshotInput | null;
  now: Date;
  freshnessMaxAgeHours: number;
  version: string;
  /** Why the newest published snapshot was refused; the one in service keeps serving. */
  problem?: string | null;
}

type HealthStatus = 'ok' | 'stale' | 'empty';

export interface HealthBody {
  status: HealthStatus;
  data_as_of: string | null;
  data_age_hours: number | null;
  freshness_max_age_hours: number;
  snapshot: { id: string; funds: number; loaded_at: string } | null;
  version: string;
  last_error?: string;
}

const MS_PER_HOUR = 3_600_000;

/** Hours from the US close on `asOf` to `now`, rounded to 2 decimals; signed (see the file comment). */
export function dataAgeHours(asOf: string, now: Date): number {
  const hours = (now.getTime() - usCloseUtc(asOf).getTime()) / MS_PER_HOUR;
  const rounded = Math.round(hours * 100) / 100;
  // Math.round(-0.004 * 100) is -0, which JSON prints as 0 anyway but tests compare with Object.is.
  return rounded === 0 ? 0 : rounded;
}

/**
 * The closed trading sessions (C0) the data as of `asOf` lacks at `now`, and the US
 * close of the first of them (ms), or null when none is missing. Hours alone cannot
 * say whether data is late: Friday's data is complete until Monday's close, 72 hours
 * later, and a holiday adds a day. Counting sessions does, so the overdue alert
 * (deploy/prometheus) fires for a missed session and never for a weekend.
 */
export function missingSessions(asOf: string, nowMs: number): { count: number; firstCloseMs: number | null } {
  const from = parseDay(asOf);
  if (from === null) return { count: 0, firstCloseMs: null };
  const missing = tradingDaysInRange(from + 1, lastClosedDay(nowMs));
  return {
    count: missing.length,
    firstCloseMs: missing.length === 0 ? null : usCloseUtc(formatDay(missing[0])).getTime(),
  };
}

export function healthBody(input: HealthInput): { status: 200 | 503; body: HealthBody } {
  const { snapshot, now, freshnessMaxAgeHours, version, problem } = input;
  let status: HealthStatus;
  let age: number | null = null;
  if (snapshot === null) {
    status = 'empty';
  } else {
    age = dataAgeHours(snapshot.asOf, now);
    // Compared after rounding so the status never disagrees with the number shown beside it.
    status = age > freshnessMaxAgeHours ? 'stale' : 'ok';
  }
  const body: HealthBody = {
    status,
    data_as_of: snapshot?.asOf ?? null,
    data_age_hours: age,
    freshness_max_age_hours: freshnessMaxAgeHours,
    snapshot:
      snapshot === null
        ? null
        : { id: snapshot.id, funds: snapshot.funds, loaded_at: snapshot.loadedAt.toISOString() },
    version,
  };
  if (problem !== undefined && problem !== null && problem !== '') body.last_error = problem;
  return { status: status === 'ok' ? 200 : 503, body };
}
