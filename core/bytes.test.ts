import { describe, expect, it } from 'vitest';
import { copyInto, viewOf } from './bytes.js';

describe('bytes', () => {
  it('copies into a buffer at an offset and returns where the copy ends', () => {
    const b = new Uint8Array(8);
    expect(copyInto(b, Uint8Array.of(1, 2, 3), 2)).toBe(5);
    expect([...b]).toEqual([0, 0, 1, 2, 3, 0, 0, 0]);
    expect(() => copyInto(b, Uint8Array.of(1, 2, 3), 6)).toThrow(RangeError);
  });

  it('views a range without copying it', () => {
    const b = Uint8Array.of(1, 2, 3, 4);
    const v = viewOf(b, 1, 3);
    expect([...v]).toEqual([2, 3]);
    b[1] = 9;
    expect(v[0]).toBe(9);
  });
});
