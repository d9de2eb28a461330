import { describe, expect, it } from 'vitest';
import { pick, seededRandom } from '../../test/seeded-random.js';
import { codeRanges, scanPlainCodes } from './batch-scan.js';
import { validateTrailingBatchBody } from './validation.js';

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const scanned = (b: Uint8Array): string[] | null => {
  const n = scanPlainCodes(b);
  if (n < 0) return null;
  return Array.from({ length: n }, (_, k) =>
    Buffer.from(b.subarray(codeRanges[2 * k], codeRanges[2 * k + 1])).toString('latin1'),
  );
};

describe('plain batch body scan', () => {
  it('finds the codes of a plain body, in order and with repeats', () => {
    expect(scanned(bytes('{"codes":["VFIAX","SPY","VFIAX"]}'))).toEqual(['VFIAX', 'SPY', 'VFIAX']);
    expect(scanned(bytes(' \n{ "codes" :\t[ "A" , "BRK.B" ]\r\n} '))).toEqual(['A', 'BRK.B']);
    expect(scanned(bytes(`{"codes":["${'X'.repeat(32)}"]}`))).toEqual(['X'.repeat(32)]);
    expect(scanned(bytes(`{"codes":[${Array(100).fill('"A"').join(',')}]}`))).toHaveLength(100);
  });

  it.each([
    ['no codes', '{"codes":[]}'],
    ['101 codes', `{"codes":[${Array(101).fill('"A"').join(',')}]}`],
    ['an empty code', '{"codes":[""]}'],
    ['a 33-character code', `{"codes":["${'X'.repeat(33)}"]}`],
    ['an escape', '{"codes":["A\\u0042"]}'],
    ['non-ASCII', '{"codes":["Å"]}'],
    ['a control character', '{"codes":["A\tB"]}'],
    ['another key', '{"codes":["A"],"as_of":"2024-01-31"}'],
    ['a key first', '{"market":"US","codes":["A"]}'],
    ['a number', '{"codes":[1]}'],
    ['a trailing comma', '{"codes":["A",]}'],
    ['unclosed', '{"codes":["A"]'],
    ['extra data', '{"codes":["A"]} x'],
    ['two objects', '{"codes":["A"]}{}'],
    ['a list', '["A"]'],
    ['empty', ''],
  ])('leaves %s to the general path', (_what, body) => {
    expect(scanPlainCodes(bytes(body))).toBe(-1);
  });

  it('accepts only bodies the general path finds valid, with the same codes', () => {
    const rand = seededRandom(11);
    const pieces = [
      '{',
      '}',
      '[',
      ']',
      '"codes"',
      ':',
      ',',
      '"A"',
      '"BRK.B"',
      '" "',
      '"é"',
      '"\\n"',
      ' ',
      '\n',
      '"as_of"',
      '1',
      'null',
    ];
    const shapes: string[] = [];
    for (let n = 0; n < 3000; n++) {
      const codes = Array.from(
        { length: 1 + Math.floor(rand() * 5) },
        () => pieces[7 + Math.floor(rand() * 5)],
      );
      let body = `{"codes":[${codes.join(',')}]}`;
      // Mutate: insert, delete or replace a random piece.
      const cuts = Math.floor(rand() * 3);
      for (let c = 0; c < cuts; c++) {
        const at = Math.floor(rand() * body.length);
        const piece = pick(rand, pieces);
        const op = Math.floor(rand() * 3);
        body =
          op === 0
            ? body.slice(0, at) + piece + body.slice(at)
            : op === 1
              ? body.slice(0, at) + body.slice(at + 1)
              : body.slice(0, at) + piece + body.slice(at + piece.length);
      }
      shapes.push(body);
    }
    let fast = 0;
    for (const body of shapes) {
      const codes = scanned(bytes(body));
      if (codes === null) continue;
      fast++;
      const v = validateTrailingBatchBody(bytes(body), 'application/json');
      expect(v.ok, body).toBe(true);
      if (v.ok) {
        expect(v.value.codes).toEqual(codes);
        expect(v.value.as_of).toBeNull();
      }
    }
    expect(fast).toBeGreaterThan(200);
  });
});
