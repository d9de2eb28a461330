import { describe, expect, it } from 'vitest';
import { pythonJsonError } from './json-error.js';

describe("Python json.loads errors (FastAPI's json_invalid, C21)", () => {
  it('pythonJsonError mirrors json.loads positions and messages', () => {
    expect(pythonJsonError('')).toEqual({ pos: 0, msg: 'Expecting value' });
    expect(pythonJsonError('{"a":1} x')).toEqual({ pos: 8, msg: 'Extra data' });
    expect(pythonJsonError('[1 2]')).toEqual({ pos: 3, msg: "Expecting ',' delimiter" });
    expect(pythonJsonError('{"a" 1}')).toEqual({ pos: 5, msg: "Expecting ':' delimiter" });
    expect(pythonJsonError('["abc')).toEqual({ pos: 1, msg: 'Unterminated string starting at' });
    expect(pythonJsonError('["a\nb"]')).toEqual({ pos: 3, msg: 'Invalid control character at' });
    expect(pythonJsonError('[1,]')).toEqual({ pos: 2, msg: 'Illegal trailing comma before end of array' });
    expect(pythonJsonError('["😀", x]')).toEqual({ pos: 6, msg: 'Expecting value' });
    expect(pythonJsonError('[NaN]')).toEqual({ pos: 1, msg: 'Expecting value' });
  });
});
