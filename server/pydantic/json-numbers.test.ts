import { describe, expect, it } from 'vitest';
import { PyNumber, parsePythonJson, pyFloatRepr, stringifyWithPyNumbers } from './json-numbers.js';

describe('JSON numbers as Python holds them (C20 echoes)', () => {
  it("pyFloatRepr is Python's repr(float)", () => {
    // Each pair: a float and what CPython 3 prints for it.
    const cases: Array<[number, string]> = [
      [1899.0, '1899.0'],
      [-0.0, '-0.0'],
      [0.0, '0.0'],
      [1e16, '1e+16'],
      [1e15, '1000000000000000.0'],
      [123456789012345680.0, '1.2345678901234568e+17'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [1.5e-5, '1.5e-05'],
      [2.5, '2.5'],
      [-1.25e-7, '-1.25e-07'],
      [1e22, '1e+22'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [5e-324, '5e-324'],
      [9999999999999998.0, '9999999999999998.0'],
      [0.1, '0.1'],
      [12345.678, '12345.678'],
    ];
    for (const [x, repr] of cases) expect(pyFloatRepr(x), repr).toBe(repr);
  });

  it('reads ints exactly and floats as floats, and writes them back as Python does', () => {
    const text = '{"year": 1899.0, "codes": [-0.0, 1e16, 12345678901234567890, -0, 7], "s": "x"}';
    const v = parsePythonJson(text, 32, '(clipped)') as Record<string, unknown>;
    expect(v.year).toBeInstanceOf(PyNumber);
    expect(stringifyWithPyNumbers(v)).toBe(
      '{"year":1899.0,"codes":[-0.0,1e+16,12345678901234567890,0,7],"s":"x"}',
    );
  });

  it('a float past the double range is the string "Infinity", never a bare Infinity', () => {
    const v = parsePythonJson('[1e400, -1e400]', 32, '');
    expect(stringifyWithPyNumbers(v)).toBe('["Infinity","-Infinity"]');
  });

  it('clips deep nesting without recursing, and keeps reading after it', () => {
    const deep = `${'['.repeat(5000)}"]"${']'.repeat(5000)}`;
    const v = parsePythonJson(`{"a": ${deep}, "b": 2.0}`, 3, 'CLIPPED') as Record<string, unknown>;
    expect(JSON.parse(stringifyWithPyNumbers(v))).toEqual({ a: [['CLIPPED']], b: 2 });
    expect(stringifyWithPyNumbers(v)).toContain('"b":2.0');
  });

  it("a client's string that looks like the marker stays a string", () => {
    const s = '\u0000py123:1.0\u0000';
    expect(JSON.parse(stringifyWithPyNumbers({ s }))).toEqual({ s });
  });
});
