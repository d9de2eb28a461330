import { describe, expect, it } from 'vitest';
import { fromYmd } from '../../core/dates.js';
import { newYorkDay, type RunSummary, startSchedule, type Timer } from './schedule.js';

/** A clock and a timer that jump: `advance` runs every timer due on the way, in order. */
function fakeTime(startIso: string) {
  let t = Date.parse(startIso);
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const timer: Timer = {
    set: (fn, ms) => {
      const id = ++seq;
      timers.set(id, { at: t + ms, fn });
      return id;
    },
    clear: (h) => void timers.delete(h as number),
  };
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return {
    now: () => t,
    timer,
    async advance(ms: number) {
      const end = t + ms;
      for (;;) {
        await settle();
        let next: [number, { at: number; fn: () => void }] | null = null;
        for (const e of timers) if (e[1].at <= end && (next === null || e[1].at < next[1].at)) next = e;
        if (next === null) break;
        timers.delete(next[0]);
        t = next[1].at;
        next[1].fn();
      }
      t = end;
      await settle();
    },
  };
}

const ok: RunSummary = {
  outcome: 'up_to_date',
  days: [],
  rows: 0,
  newFunds: 0,
  inactive: 0,
  refused: 0,
  asOf: '2026-11-25',
};
const HOUR = 3_600_000;

describe('schedule', () => {
  it('a trading day fires and a holiday does not (Wednesday runs, Thanksgiving skips, Friday runs)', async () => {
    // Wednesday 2026-11-25, 12:00 New York.
    const clock = fakeTime('2026-11-25T17:00:00Z');
    const runs: string[] = [];
    const logs: string[] = [];
    const s = startSchedule({
      cron: '30 18 * * 1-5',
      tz: 'America/New_York',
      retryMinutes: [],
      catchUp: false,
      now: clock.now,
      timer: clock.timer,
      log: (l) => logs.push(l),
      run: async () => {
        runs.push(new Date(clock.now()).toISOString());
        return ok;
      },
    });
    expect(s.nextTick()?.toISOString()).toBe('2026-11-25T23:30:00.000Z');
    await clock.advance(3 * 24 * HOUR);
    // 18:30 EST is 23:30 UTC; Thursday the 26th (Thanksgiving) is skipped and said.
    expect(runs).toEqual(['2026-11-25T23:30:00.000Z', '2026-11-27T23:30:00.000Z']);
    expect(logs.some((l) => l.includes('2026-11-26T23:30:00.000Z: skipped, the NYSE is closed'))).toBe(true);
    await s.stop();
  });

  it('catches up at start, and a failed run is retried with backoff, then logged as an error with its reason', async () => {
    const clock = fakeTime('2026-11-23T12:00:00Z');
    const logs: string[] = [];
    let calls = 0;
    const s = startSchedule({
      cron: '30 18 * * 1-5',
      tz: 'America/New_York',
      retryMinutes: [5, 15],
      now: clock.now,
      timer: clock.timer,
      log: (l) => logs.push(l),
      run: async () => {
        calls++;
        throw new Error('the eodhd provider has no data for 2026-11-20 yet');
      },
    });
    await clock.advance(1000);
    expect(calls).toBe(1);
    await clock.advance(5 * 60_000);
    expect(calls).toBe(2);
    await clock.advance(15 * 60_000);
    expect(calls).toBe(3);
    expect(logs.at(-1)).toMatch(
      /^error: refresh at start \(catching up\) failed after 3 attempts.*no data for 2026-11-20 yet; the live snapshot is unchanged$/,
    );
    await s.stop();
  });

  it('never overlaps: a tick while a run is still going is skipped and said', async () => {
    const clock = fakeTime('2026-11-23T12:00:00Z');
    const logs: string[] = [];
    let release: () => void = () => {};
    let calls = 0;
    const s = startSchedule({
      cron: '*/10 * * * *',
      tz: 'UTC',
      retryMinutes: [],
      now: clock.now,
      timer: clock.timer,
      log: (l) => logs.push(l),
      run: () => {
        calls++;
        return new Promise<RunSummary>((r) => {
          release = () => r(ok);
        });
      },
    });
    await clock.advance(25 * 60_000);
    expect(calls).toBe(1);
    expect(logs.filter((l) => l.includes('skipped, the previous refresh is still running'))).toHaveLength(2);
    release();
    await clock.advance(10 * 60_000);
    expect(calls).toBe(2);
    release();
    await s.stop();
  });

  it('refuses an expression with seconds, an unknown zone, and text that is no cron expression', () => {
    const base = { retryMinutes: [], log: () => {}, now: () => 0, run: async () => ok };
    expect(() => startSchedule({ ...base, cron: '15 30 18 * * 1-5', tz: 'UTC' })).toThrow(/seconds field/);
    expect(() => startSchedule({ ...base, cron: '30 18 * * 1-5', tz: 'Mars/Olympus' })).toThrow(
      /not a time zone/,
    );
    expect(() => startSchedule({ ...base, cron: 'every day', tz: 'UTC' })).toThrow(/not a cron expression/);
  });

  it("reads the market's day in New York, not UTC (00:30 UTC is the previous evening there)", () => {
    expect(newYorkDay(Date.parse('2026-11-27T00:30:00Z'))).toBe(fromYmd(2026, 11, 26));
  });
});
