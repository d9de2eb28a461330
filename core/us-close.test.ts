import { describe, expect, it } from 'vitest';
import { parseDay } from './dates.js';
import { lastClosedDay } from './us-close.js';

describe('lastClosedDay', () => {
  it('is today once 16:00 New York time has passed, else yesterday (EST and EDT)', () => {
    const day = (s: string) => parseDay(s)!;
    // Winter: the close is 21:00 UTC.
    expect(lastClosedDay(Date.parse('2025-01-15T20:59:59Z'))).toBe(day('2025-01-14'));
    expect(lastClosedDay(Date.parse('2025-01-15T21:00:00Z'))).toBe(day('2025-01-15'));
    // Summer: 20:00 UTC.
    expect(lastClosedDay(Date.parse('2025-07-15T19:59:59Z'))).toBe(day('2025-07-14'));
    expect(lastClosedDay(Date.parse('2025-07-15T20:00:00Z'))).toBe(day('2025-07-15'));
    // Just after midnight UTC it is still the evening before in New York: that close has passed.
    expect(lastClosedDay(Date.parse('2026-11-23T00:42:00Z'))).toBe(day('2026-11-22'));
  });
});
