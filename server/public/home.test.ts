import { describe, expect, it } from 'vitest';
import { homePage } from './home.js';

const html = homePage('https://api.example.com/');
const hrefs = [...html.matchAll(/\bhref="([^"]*)"/g)].map((m) => m[1]);

describe('GET / (the page a browser finds at the server address)', () => {
  it('links the API reference, the OpenAPI document and health, relative to itself (works under a path prefix)', () => {
    expect(hrefs).toEqual(expect.arrayContaining(['docs', 'openapi.json', 'healthz']));
    for (const page of ['https://api.example.com/', 'https://example.com/api/']) {
      const paths = hrefs.map((h) => new URL(h, page).pathname);
      const prefix = new URL(page).pathname;
      for (const p of paths) expect(p.startsWith(prefix), p).toBe(true);
    }
  });

  it("shows the README's first request against the configured base URL", () => {
    expect(html).toContain('curl -s https://api.example.com/healthz');
    expect(html).toContain(
      `curl -s -H "Authorization: Bearer $API_KEY" 'https://api.example.com/v1/funds?q=index&amp;type=ETF&amp;limit=3'`,
    );
  });

  it('has no script and escapes the base URL it prints', () => {
    expect(html).not.toMatch(/<script|\son[a-z]+=/i);
    const hostile = homePage('https://example.com/a"b<c>\'d&e');
    expect(hostile).toContain('https://example.com/a&quot;b&lt;c&gt;&#39;d&amp;e');
    expect(hostile).not.toContain('a"b<c>');
  });

  it('is an accessible document: language, title, one h1, a main landmark and a labelled navigation', () => {
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html).toMatch(/<title>[^<]+<\/title>/);
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain('<main>');
    expect(html).toMatch(/<nav aria-label="[^"]+">/);
    expect(html).toContain('<meta name="viewport"');
  });
});
