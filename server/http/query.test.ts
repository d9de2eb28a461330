import { describe, expect, it } from 'vitest';
import { randomJoin, seededRandom } from '../../test/seeded-random.js';
import { parseQuery } from './query.js';

const reference = (query: string) => {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(query)) out[k] = v;
  return out;
};

describe('query strings', () => {
  it('the last value of a repeated key wins; a key without = is empty', () => {
    expect(parseQuery('q=a&limit=5&q=b&flag')).toEqual({ q: 'b', limit: '5', flag: '' });
    expect(parseQuery('')).toEqual({});
  });

  it('agrees with URLSearchParams on any query, encoded or not', () => {
    const rand = seededRandom(11);
    const pieces = [
      'q',
      'as_of',
      '=',
      '&',
      '&&',
      '%20',
      '%2',
      '%zz',
      '+',
      'a',
      'É',
      '2024-01-31',
      '=',
      ' ',
      '\uD800',
    ];
    for (let t = 0; t < 20_000; t++) {
      const q = randomJoin(rand, pieces, 10);
      expect(parseQuery(q), JSON.stringify(q)).toEqual(reference(q));
    }
  });
});
