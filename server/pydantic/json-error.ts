/**
 * Python's `json.loads` error for a text JSON.parse refused: FastAPI reports a body
 * that does not parse as `json_invalid` with Python's position and message (C21),
 * so the 422 says what FastAPI's would.
 */
import { codePointLength } from './scalars.js';

/**
 * Where and why Python's `json.loads` (the C scanner, Python 3.13 messages) rejects
 * a text, for FastAPI's `json_invalid` loc and ctx. Only runs after JSON.parse
 * failed. NaN/Infinity, which Python accepts and JSON.parse does not, are reported
 * as "Expecting value".
 */
export function pythonJsonError(s: string): { pos: number; msg: string } {
  const len = s.length;
  class Fail {
    constructor(
      readonly pos: number,
      readonly msg: string,
    ) {}
  }
  const ws = (i: number) => {
    while (i < len) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      i++;
    }
    return i;
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
  const HEX4 = /^[0-9a-fA-F]{4}$/;
  const str = (i: number): number => {
    const begin = i - 1;
    while (true) {
      if (i >= len) throw new Fail(begin, 'Unterminated string starting at');
      const c = s.charCodeAt(i);
      if (c === 34) return i + 1;
      if (c < 0x20) throw new Fail(i, 'Invalid control character at');
      if (c === 92) {
        i++;
        if (i >= len) throw new Fail(begin, 'Unterminated string starting at');
        const e = s[i];
        if (e === 'u') {
          if (!HEX4.test(s.slice(i + 1, i + 5))) throw new Fail(i, 'Invalid \\uXXXX escape');
          i += 5;
        } else if ('"\\/bfnrt'.includes(e)) i++;
        else throw new Fail(i - 1, 'Invalid \\escape');
      } else i++;
    }
  };
  const value = (i: number): number => {
    const c = s[i];
    if (c === '"') return str(i + 1);
    if (c === '{') {
      i = ws(i + 1);
      if (s[i] === '}') return i + 1;
      while (true) {
        if (s[i] !== '"') throw new Fail(i, 'Expecting property name enclosed in double quotes');
        i = ws(str(i + 1));
        if (s[i] !== ':') throw new Fail(i, "Expecting ':' delimiter");
        i = ws(value(ws(i + 1)));
        if (s[i] === '}') return i + 1;
        if (s[i] !== ',') throw new Fail(i, "Expecting ',' delimiter");
        const comma = i;
        i = ws(i + 1);
        if (s[i] === '}') throw new Fail(comma, 'Illegal trailing comma before end of object');
      }
    }
    if (c === '[') {
      i = ws(i + 1);
      if (s[i] === ']') return i + 1;
      while (true) {
        i = ws(value(i));
        if (s[i] === ']') return i + 1;
        if (s[i] !== ',') throw new Fail(i, "Expecting ',' delimiter");
        const comma = i;
        i = ws(i + 1);
        if (s[i] === ']') throw new Fail(comma, 'Illegal trailing comma before end of array');
      }
    }
    for (const lit of ['null', 'true', 'false']) if (s.startsWith(lit, i)) return i + lit.length;
    NUMBER.lastIndex = i;
    if (NUMBER.test(s)) return NUMBER.lastIndex;
    throw new Fail(i, 'Expecting value');
  };
  let fail: Fail;
  try {
    const end = ws(value(ws(0)));
    fail = end < len ? new Fail(end, 'Extra data') : new Fail(0, 'Expecting value');
  } catch (e) {
    if (e instanceof Fail) fail = e;
    // Nesting deeper than our stack: Python would fail too; report the start.
    else if (e instanceof RangeError) fail = new Fail(0, 'Expecting value');
    else throw e;
  }
  return { pos: codePointLength(s.slice(0, fail.pos)), msg: fail.msg };
}
