/**
 * The wall clock for every fact that depends on "now": freshness (C31), the quota's
 * month (C28) and its reset, key expiry, the future-date bound (C36), the last closed
 * session. Timeouts, retries and lock ages stay on `Date.now()`: they measure
 * durations, not dates.
 *
 * `FUNDRETURNS_TEST_CLOCK` moves this clock, for tests only: `INSTANT@ANCHOR` says
 * "the clock read INSTANT (ISO 8601 with a zone) when the real clock read ANCHOR (ms
 * since the epoch)", so every process of one test (server, CLI, builder) shares one
 * shifted clock that keeps running. Without `@ANCHOR` the instant is taken as the
 * time the process started. The shift is read once, at load: the hot path pays one
 * addition.
 */

const TEST_CLOCK_ENV = 'FUNDRETURNS_TEST_CLOCK';

const TEST_CLOCK_RE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))(?:@(\d{1,16}))?$/;

/** The shift in ms that a `FUNDRETURNS_TEST_CLOCK` value gives, or an error sentence. */
function parseTestClock(spec: string, realNowMs: number = Date.now()): number | string {
  const m = TEST_CLOCK_RE.exec(spec.trim());
  const instant = m === null ? Number.NaN : Date.parse(m[1]);
  if (m === null || !Number.isFinite(instant)) {
    return `${TEST_CLOCK_ENV} must be an ISO instant with a zone, optionally @<epoch ms> (e.g. 2026-11-23T15:00:00Z@${realNowMs}); got ${JSON.stringify(spec)}`;
  }
  const anchor = m[2] === undefined ? realNowMs : Number(m[2]);
  return instant - anchor;
}

function shiftFromEnv(): { shift: number; problem: string | null } {
  const spec = process.env[TEST_CLOCK_ENV];
  if (spec === undefined || spec === '') return { shift: 0, problem: null };
  const r = parseTestClock(spec);
  return typeof r === 'string' ? { shift: 0, problem: r } : { shift: r, problem: null };
}

const { shift: SHIFT_MS, problem: PROBLEM } = shiftFromEnv();

/** Milliseconds since the epoch on the service's clock. */
export function now(): number {
  return Date.now() + SHIFT_MS;
}

/**
 * Why `FUNDRETURNS_TEST_CLOCK` could not be read (the command line refuses to start
 * on it), or null. A process that ran on the real clock instead would make a test
 * pass or fail by the day it runs, the very thing the variable exists to prevent.
 */
export function testClockProblem(): string | null {
  return PROBLEM;
}

/** The clock's shift from the real one when a test clock is in effect (for a warning at start), else null. */
export function testClockShiftMs(): number | null {
  return process.env[TEST_CLOCK_ENV] ? SHIFT_MS : null;
}
