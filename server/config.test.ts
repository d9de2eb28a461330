import { describe, expect, it } from 'vitest';
import { parseServeConfig } from './config.js';

const base = (url: string) => parseServeConfig(['--base-url', url], {}).baseUrl;

describe('serve configuration: --base-url', () => {
  it('keeps an ASCII URL as given, without a trailing slash', () => {
    expect(base('https://funds.example.com/api/')).toBe('https://funds.example.com/api');
    expect(base('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });

  it('serializes a non-ASCII host and path to ASCII, as the Link header and problem types need', () => {
    expect(base('https://例え.jp/fonds/ä')).toBe('https://xn--r8jz45g.jp/fonds/%C3%A4');
  });

  it.each(['ftp://x.example', 'not a url', 'https://x.example/api?k=1', 'https://x.example/#top'])(
    'refuses %s with a usage error',
    (url) => {
      expect(() => base(url)).toThrow(/--base-url/);
    },
  );
});
