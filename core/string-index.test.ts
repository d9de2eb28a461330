import { describe, expect, it } from 'vitest';
import { seededRandom } from '../test/seeded-random.js';
import { StringIndex } from './string-index.js';

describe('StringIndex', () => {
  it('maps each key to its position and anything else to -1', () => {
    const keys = ['VFIAX', 'AA', 'AABLX', 'BRK.B', 'SPY'];
    const index = StringIndex.of(keys);
    for (const [i, k] of keys.entries()) expect(index.get(k)).toBe(i);
    for (const other of ['', 'vfiax', 'VFIA', 'VFIAXX', 'SPY ', 'BRK-B']) expect(index.get(other)).toBe(-1);
  });

  it('agrees with a Map over thousands of random keys, through growth, replacement and clear', () => {
    const rand = seededRandom(7);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ.-0123456789éΩ';
    const word = () =>
      Array.from(
        { length: 1 + Math.floor(rand() * 12) },
        () => alphabet[Math.floor(rand() * alphabet.length)],
      ).join('');
    const index = new StringIndex({ capacity: 4 });
    const reference = new Map<string, number>();
    for (let n = 0; n < 20_000; n++) {
      const k = word();
      const v = Math.floor(rand() * 1e6);
      index.set(k, v);
      reference.set(k, v);
    }
    expect(index.size).toBe(reference.size);
    for (const [k, v] of reference) expect(index.get(k)).toBe(v);
    for (let n = 0; n < 5_000; n++) {
      const k = word();
      expect(index.get(k)).toBe(reference.get(k) ?? -1);
    }
    index.clear();
    expect(index.size).toBe(0);
    for (const k of [...reference.keys()].slice(0, 100)) expect(index.get(k)).toBe(-1);
    index.set('again', 3);
    expect(index.get('again')).toBe(3);
  });

  it('finds keys from their bytes as from their strings', () => {
    const keys = ['VFIAX', 'AA', 'AABLX', 'BRK.B', 'SPY'];
    const index = StringIndex.of(keys);
    const body = Buffer.from('xxVFIAX,AA,AABLX,BRK.B,SPY,SP,VFIAXX,', 'latin1');
    const at = (word: string) => {
      const start = body.indexOf(`${word},`);
      return index.getBytes(body, start, start + word.length);
    };
    for (const [i, k] of keys.entries()) expect(at(k)).toBe(i);
    expect(at('SP')).toBe(-1);
    expect(at('VFIAXX')).toBe(-1);
    expect(index.getBytes(body, 0, 0)).toBe(-1);
  });

  it('tells apart long keys that differ only before the tail it hashes, from strings and from bytes', () => {
    // Only a long key's last 16 units and its length are hashed: these all collide.
    const tail = 'abcdefghijklmnopqrstuvwxyz';
    const keys = Array.from({ length: 300 }, (_, i) => `${String(i).padStart(4, '0')}${tail}`);
    for (const secret of [false, true]) {
      const index = new StringIndex({ secret });
      keys.forEach((k, i) => {
        index.set(k, i);
      });
      keys.forEach((k, i) => {
        expect(index.get(k)).toBe(i);
        const b = Buffer.from(`,${k},`, 'latin1');
        expect(index.getBytes(b, 1, 1 + k.length)).toBe(i);
      });
      expect(index.get(`9999${tail}`)).toBe(-1);
      expect(index.get(`000${tail}`)).toBe(-1);
      expect(index.get(`0000${tail.slice(0, -1)}Z`)).toBe(-1);
    }
  });

  it('keeps the first position of a repeated key', () => {
    expect(StringIndex.of(['A', 'B', 'A']).get('A')).toBe(0);
  });

  it('finds secrets only on an exact, full-length match', () => {
    const token = 'Bearer frk_0123456789abcdefghijklmnopqrstuvwxyzABCDEF';
    const index = new StringIndex({ secret: true });
    index.set(token, 0);
    expect(index.get(token)).toBe(0);
    expect(index.get(`${token.slice(0, -1)}G`)).toBe(-1);
    expect(index.get(token.slice(0, -1))).toBe(-1);
    expect(index.get(`${token}x`)).toBe(-1);
  });

  it('refuses values it cannot store', () => {
    expect(() => new StringIndex().set('x', -1)).toThrow(RangeError);
    expect(() => new StringIndex().set('x', 2 ** 31)).toThrow(RangeError);
  });
});
