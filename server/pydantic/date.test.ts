import { describe, expect, it } from 'vitest';
import { parsePydanticDate } from './date.js';

// The error messages are checked through validateAsOf, as a client sees them (validation.test.ts).
describe('Pydantic lax date', () => {
  it('accepts ISO dates, midnight datetimes and exact timestamps', () => {
    expect(parsePydanticDate('2024-02-29')).toEqual({ ok: true, value: '2024-02-29' });
    expect(parsePydanticDate('2024-01-01T00:00:00Z')).toEqual({ ok: true, value: '2024-01-01' });
    expect(parsePydanticDate('2024-01-01 00:00')).toEqual({ ok: true, value: '2024-01-01' });
    expect(parsePydanticDate('1704067200')).toEqual({ ok: true, value: '2024-01-01' });
    expect(parsePydanticDate('1704067200000')).toEqual({ ok: true, value: '2024-01-01' });
  });
});
