import { describe, expect, it } from 'vitest';
import { CURSOR_EXAMPLE } from '../../schemas/common.js';
import { randomJoin, seededRandom } from '../../test/seeded-random.js';
import { cursorLength, decodeCursor, encodeCursor, writeCursor } from './cursor.js';

const payload = (...bytes: number[]) => Buffer.from(bytes).toString('base64url');

describe('cursor (C18)', () => {
  it('the example the OpenAPI document shows is a cursor this server issues (the one after VTI)', () => {
    expect(decodeCursor(CURSOR_EXAMPLE)).toBe('VTI');
    expect(encodeCursor('VTI')).toBe(CURSOR_EXAMPLE);
    // The old example, without the version byte, is refused (a 422).
    expect(decodeCursor('VlRJ')).toBeNull();
  });

  it('round-trips every kind of code: ASCII, case variants, non-ASCII, astral, BOM, 32 characters', () => {
    const codes = [
      'A',
      'SPY',
      'spy',
      'BRK.B',
      'É',
      'İ',
      '\uFF21BC',
      '\u{1F600}X',
      '\uFEFFA',
      'X'.repeat(32),
      'a b',
    ];
    for (const code of codes) {
      const cursor = encodeCursor(code);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor)).toBe(code);
    }
  });

  it('is base64url of the version byte and the UTF-8 code, as bytes or as a string', () => {
    const rand = seededRandom(7);
    const units = ['A', 'z', '0', '.', '-', ' ', 'É', 'İ', '\uFF21', '\u{1F600}', '\uD800', '\uFEFF'];
    const b = new Uint8Array(400);
    for (let t = 0; t < 5000; t++) {
      const code = randomJoin(rand, units, 40);
      const expected = Buffer.concat([Buffer.of(1), Buffer.from(code, 'utf8')]).toString('base64url');
      expect(encodeCursor(code)).toBe(expected);
      const end = writeCursor(b, 3, code);
      expect(end - 3).toBeLessThanOrEqual(cursorLength(code));
      expect(Buffer.from(b.subarray(3, end)).toString('latin1')).toBe(expected);
    }
  });

  it('is opaque base64url without padding and does not expose the code as plain text', () => {
    const cursor = encodeCursor('SPY');
    expect(cursor).not.toContain('=');
    expect(cursor).not.toContain('SPY');
    expect(Buffer.from(cursor, 'base64url')[0]).toBe(1);
  });

  it('rejects the empty string, non-base64url text and padding', () => {
    for (const s of [
      '',
      '%%%',
      'AQ',
      'a+b/',
      `${encodeCursor('SPY')}=`,
      '....',
      ' ',
      'AVNQWQ==',
      'AVNQWQ\n',
    ]) {
      expect(decodeCursor(s)).toBeNull();
    }
  });

  it('rejects a wrong version byte', () => {
    expect(decodeCursor(payload(0, 0x53))).toBeNull();
    expect(decodeCursor(payload(2, 0x53))).toBeNull();
    expect(decodeCursor(payload(1, 0x53))).toBe('S');
  });

  it('rejects payloads whose code is not a possible code (C15): empty, too long, control characters', () => {
    expect(decodeCursor(payload(1))).toBeNull();
    expect(decodeCursor(encodeCursor('X'.repeat(33)))).toBeNull();
    expect(decodeCursor(encodeCursor('X'.repeat(1000)))).toBeNull();
    expect(decodeCursor(encodeCursor('SP\u0000Y'))).toBeNull();
    expect(decodeCursor(encodeCursor('SPY\n'))).toBeNull();
    expect(decodeCursor(encodeCursor('A\u0085'))).toBeNull();
  });

  it('rejects invalid UTF-8 and non-canonical spellings of a payload', () => {
    expect(decodeCursor(payload(1, 0xff))).toBeNull();
    expect(decodeCursor(payload(1, 0xc3))).toBeNull();
    expect(decodeCursor(payload(1, 0xed, 0xa0, 0x80))).toBeNull();
    // Same bytes as encodeCursor('S') ("AVM") but with non-zero trailing bits.
    expect(decodeCursor('AVM')).toBe('S');
    expect(decodeCursor('AVN')).toBeNull();
  });

  it('rejects base64url of garbage text and of random bytes', () => {
    expect(decodeCursor(Buffer.from('not a cursor at all').toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from('{"v":1,"c":"SPY"}').toString('base64url'))).toBeNull();
    const rand = seededRandom(7);
    for (let n = 0; n < 2000; n++) {
      const bytes = Buffer.alloc(1 + Math.floor(rand() * 40));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rand() * 256);
      const decoded = decodeCursor(bytes.toString('base64url'));
      if (decoded === null) continue;
      // Anything accepted must be exactly what encodeCursor would have issued for it.
      expect(bytes[0]).toBe(1);
      expect(encodeCursor(decoded)).toBe(bytes.toString('base64url'));
    }
  });
});
