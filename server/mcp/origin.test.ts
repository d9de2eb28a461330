import { describe, expect, it } from 'vitest';
import { originPolicy } from './origin.js';

describe('which browser origins may use /mcp', () => {
  const allowed = originPolicy('https://funds.example.com/api', ['http://localhost:6274']);

  it('a request without Origin (every non-browser client) is accepted', () => {
    expect(allowed('')).toBe(true);
  });

  it("the base URL's own origin and the listed ones are accepted, however the browser spells them", () => {
    for (const o of [
      'https://funds.example.com',
      'https://FUNDS.example.com',
      'https://funds.example.com:443',
      'http://localhost:6274',
    ])
      expect(allowed(o), o).toBe(true);
  });

  it('any other origin, a sandboxed page (null) and garbage are refused', () => {
    for (const o of [
      'http://funds.example.com',
      'https://funds.example.com:8443',
      'https://evil.example',
      'https://funds.example.com.evil.example',
      'http://localhost:6275',
      'null',
      'not an origin',
    ])
      expect(allowed(o), o).toBe(false);
  });

  it('* accepts every origin', () => {
    expect(originPolicy('http://127.0.0.1:8080', '*')('https://evil.example')).toBe(true);
  });
});
