import { describe, expect, it } from 'vitest';
import { ascii, HeaderWriter, headerBlock, NO_HEADERS } from './headers.js';

const text = (b: Uint8Array) => Buffer.from(b).toString('latin1');

describe('header blocks', () => {
  it('encodes each header as its own CRLF-led line, in order', () => {
    const block = headerBlock([
      ['X-Data-As-Of', '2026-11-16'],
      ['Retry-After', '30'],
    ]);
    expect(text(block)).toBe('\r\nX-Data-As-Of: 2026-11-16\r\nRetry-After: 30');
  });

  it('is empty for no headers', () => {
    expect(headerBlock([])).toEqual(NO_HEADERS);
  });

  it.each([
    ['CR in a value', ['Link', 'a\rb']],
    ['LF in a value', ['Link', 'a\nSet-Cookie: x=1']],
    ['CRLF in a name', ['X-A\r\nX-B', 'v']],
    ['a space in a name', ['X A', 'v']],
    ['an empty name', ['', 'v']],
    ['a non-ASCII value', ['X-A', 'café']],
  ] as const)('refuses %s, so no value can split a line', (_what, header) => {
    expect(() => headerBlock([header])).toThrow(/cannot be sent/);
  });
});

describe('HeaderWriter', () => {
  it('appends blocks and decimal integers', () => {
    const w = new HeaderWriter();
    w.start(ascii('application/json')).bytes(ascii(';r=')).uint(0).bytes(ascii(';t=')).uint(2678400);
    expect(text(w.view())).toBe('application/json;r=0;t=2678400');
  });

  it.each([
    [1, '1'],
    [10, '10'],
    [999_999_999, '999999999'],
    [1e12, '1000000000000'],
    [2 ** 53 - 1, '9007199254740991'],
    [59.4, '59'],
    [-3, '0'],
    [Number.NaN, '0'],
  ])('writes %d as %s', (v, s) => {
    expect(text(new HeaderWriter().start(NO_HEADERS).uint(v).view())).toBe(s);
  });

  it('gives the bytes since the last start, whatever lengths came before', () => {
    // Views are kept per length and reused: each must show this response's bytes only.
    const w = new HeaderWriter();
    expect(text(w.start(ascii('abc')).view())).toBe('abc');
    expect(text(w.start(ascii('xy')).uint(5).view())).toBe('xy5');
    expect(text(w.start(ascii('abc')).bytes(ascii('defghijk')).view())).toBe('abcdefghijk');
    expect(text(w.start(ascii('q')).bytes(ascii('rs')).view())).toBe('qrs');
    expect(text(w.start(NO_HEADERS).view())).toBe('');
  });

  it('starts afresh each response and grows past its first buffer', () => {
    const w = new HeaderWriter();
    expect(text(w.start(ascii('z')).uint(9).view())).toBe('z9');
    const long = ascii(`\r\nLink: ${'x'.repeat(10_000)}`);
    expect(w.start(ascii('a')).bytes(long).view().length).toBe(1 + long.length);
    expect(text(w.start(ascii('b')).uint(7).view())).toBe('b7');
    // A length seen before the buffer grew is a view of the new buffer, not the old one.
    expect(text(w.start(ascii('c')).uint(8).view())).toBe('c8');
  });
});
