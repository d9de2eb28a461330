/**
 * The first load's account: what it fetched and left out (the summary, the load report
 * kept in the source directory) and what the rest of it costs (the estimate).
 */
import { previousTradingDay, tradingDaysInRange } from '../../core/calendar.js';
import { compareCodes } from '../../core/codes.js';
import { type Day, formatDay } from '../../core/dates.js';
import type { FundRecord } from '../../core/types.js';
import { type Entry, type FailReason, missingDays } from './load-journal.js';
import type { CallCosts } from './provider.js';

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

export interface LoadEstimate {
  histories: number;
  days: number;
  calls: number;
  requests: number;
  /** At the pace given, in seconds; null when unpaced. */
  seconds: number | null;
}

export function summarize(
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

export function loadReportJson(s: LoadSummary): Record<string, unknown> {
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
export function estimateCost(
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

export function estimateLine(
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

export function emptySummary(): LoadSummary {
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
