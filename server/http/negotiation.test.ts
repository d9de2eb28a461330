import { describe, expect, it } from 'vitest';
import { acceptsJson, chooseEncoding, wantsMsgpack } from './negotiation.js';

describe('Accept-Encoding (RFC 9110 §12.5.3)', () => {
  it.each([
    ['', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['GZIP', 'gzip'],
    ['Br', 'br'],
    ['x-gzip', 'gzip'],
    ['deflate, gzip;q=0.5', 'gzip'],
    ['gzip;q=0', null],
    ['gzip; q=0', null],
    ['gzip;Q=0', null],
    ['gzip;q=0.000', null],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.5', 'br'],
    ['br;q=0.001', 'br'],
    ['*', 'br'],
    ['*;q=0', null],
    ['*;q=0, gzip', 'gzip'],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *', 'gzip'],
    ['identity', null],
    ['identity, deflate', null],
    ['gzip;q=0, identity', null],
    ['gzip;q=abc', null],
    ['gzip;q=2', null],
    ['gzip;q=1.000', 'gzip'],
    ['gzip;q=0, gzip', null],
    [' , gzip ,', 'gzip'],
    ['gzipx, xbr', null],
  ])('%j → %s', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });
});

describe('Accept: MessagePack or JSON (RFC 9110 §12.5.1)', () => {
  it.each([
    ['', false],
    ['*/*', false],
    ['application/json', false],
    ['text/html, application/xhtml+xml, */*;q=0.8', false],
    ['application/msgpack', true],
    ['APPLICATION/MSGPACK', true],
    ['Application/MsgPack', true],
    ['application/msgpack;q=0', false],
    ['application/msgpack; q=0.0', false],
    ['application/msgpack;q=0.5, application/json', false],
    ['application/json, application/msgpack;q=0.5', false],
    ['application/msgpack, application/json;q=0.9', true],
    ['application/json;q=0.9, application/msgpack', true],
    // Named at least as high as JSON: MessagePack, JSON being the fallback.
    ['application/msgpack, application/json', true],
    ['application/json, application/msgpack', true],
    // And at least as high as a wildcard.
    ['application/msgpack, */*', true],
    ['application/msgpack, application/*', true],
    ['application/msgpack;q=0.5, */*', false],
    ['application/msgpack;q=0.5, */*;q=0.4', true],
    ['application/msgpack;q=0.5, application/*;q=0.9, */*;q=0.1', false],
    ['text/html, application/msgpack;q=0.1', true],
    ['application/msgpack;charset=utf-8', true],
    ['application/msgpack;q=nope', false],
    ['application/x-msgpack', false],
    ['application/msgpackx', false],
    ['application/json;q=0, application/msgpack;q=0', false],
  ])('%j → msgpack %s', (accept, expected) => {
    expect(wantsMsgpack(accept)).toBe(expected);
  });

  it('answers the same Accept the same way when asked again (one-entry cache)', () => {
    expect(wantsMsgpack('application/msgpack')).toBe(true);
    expect(wantsMsgpack('application/msgpack')).toBe(true);
    expect(wantsMsgpack('application/msgpack;q=0')).toBe(false);
    expect(wantsMsgpack('application/msgpack;q=0')).toBe(false);
    expect(wantsMsgpack('application/msgpack')).toBe(true);
  });
});

describe('Accept: is JSON acceptable at all (MCP answers only JSON)', () => {
  it.each([
    ['', true],
    ['   ', true],
    ['application/json', true],
    ['APPLICATION/JSON', true],
    ['application/json, text/event-stream', true],
    ['text/event-stream, application/*', true],
    ['*/*', true],
    ['text/event-stream', false],
    ['application/json;q=0', false],
    ['application/json;q=0, */*', false],
    ['application/*;q=0', false],
    ['application/json;q=abc', false],
  ])('%j → %s', (accept, expected) => {
    expect(acceptsJson(accept)).toBe(expected);
  });

  it('answers the same Accept the same way when asked again, and another one afresh (one-entry cache)', () => {
    const seq: Array<[string, boolean]> = [
      ['application/json, text/event-stream', true],
      ['application/json, text/event-stream', true],
      ['text/event-stream', false],
      ['text/event-stream', false],
      ['', true],
      ['text/event-stream', false],
      ['application/json, text/event-stream', true],
    ];
    for (const [accept, expected] of seq) expect(acceptsJson(accept), accept).toBe(expected);
  });
});
