/**
 * Python's `json.loads` error for a text JSON.parse refused: FastAPI reports a body
 * that does not parse as `json_invalid` with Python's position and message (C21),
 * so the 422 says what FastAPI's would.
 */
import { codePointLength } from './scalars.js';

/** Where the scan stopped and Python's message for it; thrown to unwind the scan. */
class Fail {
  constructor(
    readonly pos: number,
    readonly msg: string,
  ) {}
}

/**
 * Where and why Python's `json.loads` (the C scanner, Python 3.13 messages) rejects
 * a text, for FastAPI's `json_invalid` loc and ctx. Only runs after JSON.parse
 * failed. NaN/Infinity, which Python accepts and JSON.parse does not, are reported
 * as "Expecting value".
 */
export function pythonJsonError(s: string): { pos: number; msg: string } {
  let fail: Fail;
  try {
    const end = skipWs(s, scanValue(s, skipWs(s, 0)));
    fail = end < s.length ? new Fail(end, 'Extra data') : new Fail(0, 'Expecting value');
  } catch (e) {
    if (e instanceof Fail) fail = e;
    // Nesting deeper than our stack: Python would fail too; report the start.
    else if (e instanceof RangeError) fail = new Fail(0, 'Expecting value');
    else throw e;
  }
  return { pos: codePointLength(s.slice(0, fail.pos)), msg: fail.msg };
}

/** The first index at or after `i` that is not JSON whitespace. */
function skipWs(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    i++;
  }
  return i;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * Past the value that starts at `i`; throws a Fail where Python's scanner would stop.
 * Objects and arrays are read here rather than in functions of their own, so that a
 * level of nesting costs one stack frame and the depth at which the scan runs out of
 * stack (reported as "Expecting value" at 0) stays as deep as it can be.
 */
function scanValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return scanString(s, i + 1);
  if (c === '{') {
    i = skipWs(s, i + 1);
    if (s[i] === '}') return i + 1;
    while (true) {
      if (s[i] !== '"') throw new Fail(i, 'Expecting property name enclosed in double quotes');
      i = skipWs(s, scanString(s, i + 1));
      if (s[i] !== ':') throw new Fail(i, "Expecting ':' delimiter");
      i = skipWs(s, scanValue(s, skipWs(s, i + 1)));
      if (s[i] === '}') return i + 1;
      if (s[i] !== ',') throw new Fail(i, "Expecting ',' delimiter");
      const comma = i;
      i = skipWs(s, i + 1);
      if (s[i] === '}') throw new Fail(comma, 'Illegal trailing comma before end of object');
    }
  }
  if (c === '[') {
    i = skipWs(s, i + 1);
    if (s[i] === ']') return i + 1;
    while (true) {
      i = skipWs(s, scanValue(s, i));
      if (s[i] === ']') return i + 1;
      if (s[i] !== ',') throw new Fail(i, "Expecting ',' delimiter");
      const comma = i;
      i = skipWs(s, i + 1);
      if (s[i] === ']') throw new Fail(comma, 'Illegal trailing comma before end of array');
    }
  }
  for (const lit of ['null', 'true', 'false']) if (s.startsWith(lit, i)) return i + lit.length;
  NUMBER.lastIndex = i;
  if (NUMBER.test(s)) return NUMBER.lastIndex;
  throw new Fail(i, 'Expecting value');
}

/** Past the string whose opening quote is at `i - 1`. */
function scanString(s: string, i: number): number {
  const begin = i - 1;
  while (true) {
    if (i >= s.length) throw new Fail(begin, 'Unterminated string starting at');
    const c = s.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c < 0x20) throw new Fail(i, 'Invalid control character at');
    if (c === 92) {
      i++;
      if (i >= s.length) throw new Fail(begin, 'Unterminated string starting at');
      const e = s[i];
      if (e === 'u') {
        if (!HEX4.test(s.slice(i + 1, i + 5))) throw new Fail(i, 'Invalid \\uXXXX escape');
        i += 5;
      } else if ('"\\/bfnrt'.includes(e)) i++;
      else throw new Fail(i - 1, 'Invalid \\escape');
    } else i++;
  }
}
