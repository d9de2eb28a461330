import { describe, expect, it } from 'vitest';
import { compareCodes, isPossibleCode } from './codes.js';

describe('codes (C15, C18)', () => {
  it('accepts 1 to 32 printable characters, case-sensitive', () => {
    expect(isPossibleCode('SPY')).toBe(true);
    expect(isPossibleCode('brk.b')).toBe(true);
    expect(isPossibleCode('X'.repeat(32))).toBe(true);
  });

  it('rejects empty, too long and control characters (C15)', () => {
    expect(isPossibleCode('')).toBe(false);
    expect(isPossibleCode('X'.repeat(33))).toBe(false);
    expect(isPossibleCode('SP\u0000Y')).toBe(false);
    expect(isPossibleCode('SPY\n')).toBe(false);
    expect(isPossibleCode('A\u0085')).toBe(false);
  });

  it('orders by UTF-8 bytes (C18)', () => {
    const codes = ['b', 'B', 'A', 'AA', 'a', '\u{1F600}', '\uFF21', 'É', 'Z'];
    const bytes = [...codes].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...codes].sort(compareCodes)).toEqual(bytes);
  });
});
