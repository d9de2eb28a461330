/**
 * The limits the docs state in prose are the ones the code enforces: each number a
 * guide writes for the body limit, the batch size or the code length is read from
 * the guides and compared with the constant the server, the OpenAPI text and the
 * error messages are built from. A limit changed in one place fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CODE_MAX_LENGTH, CODE_MIN_LENGTH } from '../core/codes.js';
import { BATCH_MAX_CODES, MAX_BODY_BYTES } from '../schemas/common.js';
import { buildOpenApi } from '../schemas/openapi.js';
import { COMPARE_MAX_CODES } from '../schemas/screen.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCS = join(ROOT, 'docs');

/** README.md and every page under docs/, with their names. */
const pages: Array<[string, string]> = [
  ['README.md', readFileSync(join(ROOT, 'README.md'), 'utf8')],
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f): [string, string] => [`docs/${f}`, readFileSync(join(DOCS, f), 'utf8')]),
];

/** Every "page: number" a pattern's first group captures across the guides. */
function stated(pattern: RegExp): string[] {
  const out: string[] = [];
  for (const [name, text] of pages) for (const m of text.matchAll(pattern)) out.push(`${name}: ${m[1]}`);
  return out;
}

/** The phrasings the guides use for each limit (a new phrasing needs a line here). */
const LIMITS: Array<{ what: string; value: number; patterns: RegExp[] }> = [
  {
    what: 'the request body limit, in MiB (C21)',
    value: MAX_BODY_BYTES / (1 << 20),
    patterns: [/body over (\d+(?:\.\d+)?) MiB/gi, /413 over (\d+(?:\.\d+)?) MiB/gi],
  },
  {
    what: 'codes per batch (C14, C16)',
    value: BATCH_MAX_CODES,
    patterns: [
      /codes: string\[1\.\.(\d+)\]/g,
      /up to (\d+) rows/g,
      /more than (\d+) codes/g,
      /1 to (\d+) codes(?! to compare)/g,
    ],
  },
  {
    what: 'codes to compare (C53)',
    value: COMPARE_MAX_CODES,
    patterns: [/1 to (\d+) codes to compare/g, /figures of up to (\d+) funds/g, /takes up to (\d+) `codes`/g],
  },
  {
    what: 'the longest code, in characters (C15)',
    value: CODE_MAX_LENGTH,
    patterns: [new RegExp(`code[^.|]*?${CODE_MIN_LENGTH} to (\\d+) characters`, 'gi')],
  },
];

describe('limits in the guides agree with the constants', () => {
  for (const { what, value, patterns } of LIMITS) {
    it(`${what}: every number the guides state is ${value}`, () => {
      const found = patterns.flatMap(stated);
      // A pattern that matches nothing would make this test pass on any number.
      expect(found.length, `no guide states ${what}`).toBeGreaterThan(0);
      expect(found.filter((f) => !f.endsWith(`: ${value}`))).toEqual([]);
    });
  }

  it('the OpenAPI text states the limits from the same constants', () => {
    const text = JSON.stringify(buildOpenApi({ baseUrl: 'http://127.0.0.1:8080' }));
    expect(text).toContain(`Request body too large: the limit is ${MAX_BODY_BYTES / (1 << 20)} MiB`);
    expect(text).toContain(`more than ${BATCH_MAX_CODES} codes`);
    expect(text).toContain(`${CODE_MIN_LENGTH} to ${CODE_MAX_LENGTH} characters without control characters`);
    expect(text).toContain(`The same figures for up to ${COMPARE_MAX_CODES} funds`);
    // Every other count of codes or funds is the batch limit.
    expect(
      text
        .replaceAll(`The same figures for up to ${COMPARE_MAX_CODES} funds`, '')
        .match(/(?:more than|up to) (\d+) (?:codes|funds)/g)
        ?.every((s) => s.endsWith(` ${BATCH_MAX_CODES} codes`) || s.endsWith(` ${BATCH_MAX_CODES} funds`)),
    ).toBe(true);
  });
});
