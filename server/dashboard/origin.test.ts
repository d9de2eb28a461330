import { describe, expect, it } from 'vitest';
import { sameOrigin } from './dashboard.js';
import type { PageRequest } from './page-http.js';

function form(origin: string, host: string, referer = ''): PageRequest {
  return {
    method: 'POST',
    path: '/account/login',
    params: {},
    query: new URLSearchParams(),
    form: new URLSearchParams(),
    cookies: new Map(),
    origin,
    referer,
    host,
    ip: '127.0.0.1',
  };
}

describe("a form's origin (dashboard.ts sameOrigin)", () => {
  const base = 'https://api.example.test';

  it('compares scheme, host and port with the base URL: http on an https name is another origin', () => {
    expect(sameOrigin(form('https://api.example.test', 'api.example.test'), base)).toBe(true);
    expect(sameOrigin(form('http://api.example.test', 'api.example.test'), base)).toBe(false);
    expect(sameOrigin(form('https://api.example.test:8443', 'api.example.test'), base)).toBe(false);
    expect(sameOrigin(form('https://evil.example', 'api.example.test'), base)).toBe(false);
    expect(sameOrigin(form('', 'api.example.test', 'http://api.example.test/account/login'), base)).toBe(
      false,
    );
    expect(sameOrigin(form('null', 'api.example.test', 'https://api.example.test/account/login'), base)).toBe(
      true,
    );
  });

  it('the Host the form was sent to counts on the base URL’s scheme only, with its port', () => {
    expect(sameOrigin(form('https://other.name', 'other.name'), base)).toBe(true);
    expect(sameOrigin(form('http://other.name', 'other.name'), base)).toBe(false);
    expect(sameOrigin(form('https://other.name:8443', 'other.name:8443'), base)).toBe(true);
    expect(sameOrigin(form('https://other.name', 'other.name:8443'), base)).toBe(false);
    // The default port, said or not, is one origin.
    expect(sameOrigin(form('https://other.name', 'other.name:443'), base)).toBe(true);
    const local = 'http://127.0.0.1:8080';
    expect(sameOrigin(form('http://127.0.0.1:8080', '127.0.0.1:8080'), local)).toBe(true);
    expect(sameOrigin(form('https://127.0.0.1:8080', '127.0.0.1:8080'), local)).toBe(false);
    expect(sameOrigin(form('http://127.0.0.1:9090', '127.0.0.1:8080'), local)).toBe(false);
    expect(sameOrigin(form('http://x', ''), local)).toBe(false);
  });
});
