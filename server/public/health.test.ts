import { describe, expect, it } from 'vitest';
import { usCloseUtc } from '../../core/us-close.js';
import { dataAgeHours, type HealthInput, healthBody, missingSessions } from './health.js';

const snap = (asOf: string) => ({
  id: `${asOf}-abc123`,
  funds: 32_000,
  loadedAt: new Date('2025-01-17T22:05:00.123Z'),
  asOf,
});

const input = (over: Partial<HealthInput>): HealthInput => ({
  snapshot: snap('2025-01-15'),
  now: new Date('2025-01-16T21:00:00Z'),
  freshnessMaxAgeHours: 120,
  version: '1.0.0',
  ...over,
});

describe('C31 US close: 16:00 America/New_York on data_as_of', () => {
  it('is 21:00 UTC on a January (EST) date', () => {
    expect(usCloseUtc('2025-01-15').toISOString()).toBe('2025-01-15T21:00:00.000Z');
  });

  it('is 20:00 UTC on a July (EDT) date', () => {
    expect(usCloseUtc('2025-07-15').toISOString()).toBe('2025-07-15T20:00:00.000Z');
  });

  it('uses EDT on the spring-forward day and EST on the fall-back day', () => {
    expect(usCloseUtc('2025-03-09').toISOString()).toBe('2025-03-09T20:00:00.000Z');
    expect(usCloseUtc('2025-11-02').toISOString()).toBe('2025-11-02T21:00:00.000Z');
    // The days either side keep the other offset.
    expect(usCloseUtc('2025-03-08').toISOString()).toBe('2025-03-08T21:00:00.000Z');
    expect(usCloseUtc('2025-11-01').toISOString()).toBe('2025-11-01T20:00:00.000Z');
  });

  it('follows the pre-2007 US rules for old dates (first Sunday of April)', () => {
    expect(usCloseUtc('2006-04-01').toISOString()).toBe('2006-04-01T21:00:00.000Z');
    expect(usCloseUtc('2006-04-03').toISOString()).toBe('2006-04-03T20:00:00.000Z');
  });

  it('rejects malformed and impossible dates', () => {
    expect(() => usCloseUtc('2025-1-15')).toThrow(RangeError);
    expect(() => usCloseUtc('2025-02-29')).toThrow(/not a calendar date/);
    expect(() => usCloseUtc('2025-01-15T00:00:00Z')).toThrow(RangeError);
  });
});

describe('C31 data_age_hours', () => {
  it('counts real elapsed hours across the spring DST change (a weekend is 71 h, not 72)', () => {
    // Friday 2025-03-07 close is 21:00Z (EST); Monday 2025-03-10 16:00 EDT is 20:00Z.
    expect(dataAgeHours('2025-03-07', new Date('2025-03-10T20:00:00Z'))).toBe(71);
  });

  it('counts real elapsed hours across the autumn DST change (73 h)', () => {
    // Friday 2025-10-31 close is 20:00Z (EDT); Monday 2025-11-03 16:00 EST is 21:00Z.
    expect(dataAgeHours('2025-10-31', new Date('2025-11-03T21:00:00Z'))).toBe(73);
  });

  it('rounds to 2 decimals', () => {
    // 1 h 20 min 20 s after the close = 1.33888… h.
    expect(dataAgeHours('2025-01-15', new Date('2025-01-15T22:20:20Z'))).toBe(1.34);
  });

  it('is 0 (not -0) exactly at the close', () => {
    expect(Object.is(dataAgeHours('2025-01-15', new Date('2025-01-15T21:00:00Z')), 0)).toBe(true);
    expect(Object.is(dataAgeHours('2025-01-15', new Date('2025-01-15T20:59:59Z')), 0)).toBe(true);
  });

  it('reports a negative age, unclamped, before the close of data_as_of and still says ok', () => {
    // 14:30 New York on the as-of day: data stamped for a close that has not happened (clock skew).
    const r = healthBody(input({ snapshot: snap('2025-01-15'), now: new Date('2025-01-15T19:30:00Z') }));
    expect(r.body.data_age_hours).toBe(-1.5);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
  });
});

describe('C31 healthBody status', () => {
  it('is ok (200) with the full body shape for fresh data', () => {
    const r = healthBody(input({}));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'ok',
      data_as_of: '2025-01-15',
      data_age_hours: 24,
      freshness_max_age_hours: 120,
      snapshot: { id: '2025-01-15-abc123', funds: 32_000, loaded_at: '2025-01-17T22:05:00.123Z' },
      version: '1.0.0',
    });
    expect(Object.keys(r.body)).toEqual([
      'status',
      'data_as_of',
      'data_age_hours',
      'freshness_max_age_hours',
      'snapshot',
      'version',
    ]);
  });

  it('keeps a Friday close fresh through the holiday Monday and the Tuesday evening build (120 h)', () => {
    // MLK Day 2025: Friday 2025-01-17 close, Monday 2025-01-20 closed, next data Tuesday evening.
    const friday = snap('2025-01-17');
    const mondayEvening = healthBody(input({ snapshot: friday, now: new Date('2025-01-21T03:00:00Z') }));
    expect(mondayEvening.body.data_age_hours).toBe(78);
    expect(mondayEvening.status).toBe(200);
    // Tuesday 20:00 New York: Tuesday's build may still be running.
    const tuesdayEvening = healthBody(input({ snapshot: friday, now: new Date('2025-01-22T01:00:00Z') }));
    expect(tuesdayEvening.body.data_age_hours).toBe(100);
    expect(tuesdayEvening.body.status).toBe('ok');
  });

  it('turns stale (503) only once the age exceeds the bound, not at it', () => {
    const friday = snap('2025-01-17');
    // Wednesday 2025-01-22 16:00 EST = Friday close + 120 h.
    const atBound = healthBody(input({ snapshot: friday, now: new Date('2025-01-22T21:00:00Z') }));
    expect(atBound.body.data_age_hours).toBe(120);
    expect(atBound.status).toBe(200);
    const past = healthBody(input({ snapshot: friday, now: new Date('2025-01-22T21:01:00Z') }));
    expect(past.body.data_age_hours).toBe(120.02);
    expect(past.status).toBe(503);
    expect(past.body.status).toBe('stale');
    expect(past.body.snapshot).not.toBeNull();
  });

  it('honours a configured freshness bound', () => {
    const r = healthBody(input({ freshnessMaxAgeHours: 12 }));
    expect(r.body.freshness_max_age_hours).toBe(12);
    expect(r.body.status).toBe('stale');
    expect(r.status).toBe(503);
  });

  it('is empty (503) with nulls when no snapshot is loaded', () => {
    const r = healthBody(input({ snapshot: null }));
    expect(r.status).toBe(503);
    expect(r.body).toEqual({
      status: 'empty',
      data_as_of: null,
      data_age_hours: null,
      freshness_max_age_hours: 120,
      snapshot: null,
      version: '1.0.0',
    });
  });
});

describe('C31 last_error', () => {
  it('is absent when no newer snapshot was refused', () => {
    expect('last_error' in healthBody(input({})).body).toBe(false);
    expect('last_error' in healthBody(input({ problem: null })).body).toBe(false);
    expect('last_error' in healthBody(input({ problem: '' })).body).toBe(false);
  });

  it('carries the refusal while the older snapshot keeps the status it earns', () => {
    const msg = 'snapshot 2025-01-16-def456 refused: checksum mismatch in series.arrow';
    const r = healthBody(input({ problem: msg }));
    expect(r.body.last_error).toBe(msg);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
  });

  it('is reported with an empty service too', () => {
    const r = healthBody(input({ snapshot: null, problem: 'manifest version 9 unsupported' }));
    expect(r.body.status).toBe('empty');
    expect(r.body.last_error).toBe('manifest version 9 unsupported');
  });
});

describe('missing sessions: what the overdue alert counts (C0)', () => {
  const at = (iso: string) => Date.parse(iso);
  const close = (day: string) => usCloseUtc(day).getTime();

  it('Friday data over a weekend misses nothing until Monday 16:00 New York', () => {
    // 2026-11-20 is a Friday; 16:00 New York is 21:00 UTC in November.
    for (const now of ['2026-11-21T15:00:00Z', '2026-11-22T23:00:00Z', '2026-11-23T20:59:00Z'])
      expect(missingSessions('2026-11-20', at(now)), now).toEqual({ count: 0, firstCloseMs: null });
    expect(missingSessions('2026-11-20', at('2026-11-23T21:00:00Z'))).toEqual({
      count: 1,
      firstCloseMs: close('2026-11-23'),
    });
  });

  it('a holiday adds no session: Thursday data before Good Friday misses nothing until Monday', () => {
    // 2026-04-03 is Good Friday (NYSE closed); 16:00 New York is 20:00 UTC in April.
    expect(missingSessions('2026-04-02', at('2026-04-06T19:00:00Z')).count).toBe(0);
    expect(missingSessions('2026-04-02', at('2026-04-06T20:00:00Z'))).toEqual({
      count: 1,
      firstCloseMs: close('2026-04-06'),
    });
  });

  it('a missed Tuesday counts from its close, and each further session adds one', () => {
    // Data as of Monday 2026-11-23; Thanksgiving (Thursday 2026-11-26) is no session.
    expect(missingSessions('2026-11-23', at('2026-11-24T22:00:00Z'))).toEqual({
      count: 1,
      firstCloseMs: close('2026-11-24'),
    });
    expect(missingSessions('2026-11-23', at('2026-11-27T22:00:00Z'))).toEqual({
      count: 3,
      firstCloseMs: close('2026-11-24'),
    });
  });

  it('data stamped ahead of the clock, or an unreadable as_of, misses nothing', () => {
    expect(missingSessions('2026-11-25', at('2026-11-24T22:00:00Z')).count).toBe(0);
    expect(missingSessions('not-a-day', at('2026-11-24T22:00:00Z'))).toEqual({
      count: 0,
      firstCloseMs: null,
    });
  });
});
