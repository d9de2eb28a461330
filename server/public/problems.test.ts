import { describe, expect, it } from 'vitest';
import { PROBLEM_SLUGS as SCHEMA_SLUGS } from '../../schemas/error-bodies.js';
import { buildOpenApi, PROBLEM_EXAMPLES } from '../../schemas/openapi.js';
import { unauthorizedDetail } from '../access/key-gate.js';
import {
  PROBLEM_SLUGS,
  type ProblemSlug,
  problemJson,
  problemPage,
  problemResponse,
  problemRoutes,
  problemTypes,
} from './problems.js';

const BASE = 'https://api.example.com';

describe('C22 problem types', () => {
  it('the OpenAPI examples of each refusal are bodies the gate writes, each with its own status', () => {
    const refusal = (slug: ProblemSlug) => {
      const ex = PROBLEM_EXAMPLES[slug];
      return JSON.parse(problemJson(BASE, slug, ex.detail, '/v1/funds/VTI')) as { status: number };
    };
    const doc = buildOpenApi({ baseUrl: BASE }) as {
      components: { responses: Record<string, { content: Record<string, { example: unknown }> }> };
    };
    const example = (name: string) =>
      doc.components.responses[name].content['application/problem+json'].example;
    expect(example('Unauthorized')).toEqual(refusal('unauthorized'));
    expect(example('Forbidden')).toEqual(refusal('forbidden'));
    expect(example('TooManyRequests')).toEqual(refusal('rate-limited'));
    expect([401, 403, 429]).toEqual(
      ['Unauthorized', 'Forbidden', 'TooManyRequests'].map((n) => (example(n) as { status: number }).status),
    );
    // The details are the gate's own sentences.
    expect(PROBLEM_EXAMPLES.unauthorized.detail).toBe(unauthorizedDetail(''));
    expect(PROBLEM_EXAMPLES.forbidden.detail).toMatch(
      /^The account has no active subscription \(status (none|canceled|past_due)\)\.$/,
    );
  });

  it('are exactly the four slugs, the same as the published schema', () => {
    expect([...PROBLEM_SLUGS].sort()).toEqual([
      'forbidden',
      'quota-exceeded',
      'rate-limited',
      'unauthorized',
    ]);
    expect([...PROBLEM_SLUGS].sort()).toEqual([...SCHEMA_SLUGS].sort());
  });

  it('carry the HTTP status of SPEC part 7', () => {
    expect(problemTypes.unauthorized.status).toBe(401);
    expect(problemTypes.forbidden.status).toBe(403);
    expect(problemTypes['rate-limited'].status).toBe(429);
    expect(problemTypes['quota-exceeded'].status).toBe(429);
  });
});

describe('C22 problem+json body', () => {
  it('has type, title, status, detail, instance in that order, type under <base>/problems/', () => {
    const body = problemJson(BASE, 'rate-limited', 'Burst limit exceeded; retry after 2 s.', '/v1/funds/VTI');
    expect(Object.keys(JSON.parse(body))).toEqual(['type', 'title', 'status', 'detail', 'instance']);
    expect(JSON.parse(body)).toEqual({
      type: 'https://api.example.com/problems/rate-limited',
      title: problemTypes['rate-limited'].title,
      status: 429,
      detail: 'Burst limit exceeded; retry after 2 s.',
      instance: '/v1/funds/VTI',
    });
  });

  it('instance is the path the client sent: under the base URL path when the API is served under one', () => {
    const at = (base: string) => JSON.parse(problemJson(base, 'unauthorized', 'x', '/v1/funds')).instance;
    expect(at('https://api.example.com')).toBe('/v1/funds');
    expect(at('https://api.example.com/')).toBe('/v1/funds');
    expect(at('https://example.com/api/')).toBe('/api/v1/funds');
    expect(at('https://example.com/api/v1%20x')).toBe('/api/v1%20x/v1/funds');
  });

  it('escapes detail and instance as JSON strings', () => {
    const body = problemJson(`${BASE}/`, 'forbidden', 'quote " and \\ backslash', '/v1/funds/"x"');
    const parsed = JSON.parse(body);
    expect(parsed.type).toBe('https://api.example.com/problems/forbidden');
    expect(parsed.detail).toBe('quote " and \\ backslash');
    expect(parsed.instance).toBe('/v1/funds/"x"');
  });

  it('a 401 response adds WWW-Authenticate: Bearer; others do not', () => {
    const r401 = problemResponse(BASE, 'unauthorized', 'Missing Authorization header.', '/v1/funds');
    expect(r401.status).toBe(401);
    expect(r401.headers).toEqual({
      'Content-Type': 'application/problem+json',
      'WWW-Authenticate': 'Bearer',
    });
    const r403 = problemResponse(BASE, 'forbidden', 'No active subscription.', '/v1/funds');
    expect(r403.status).toBe(403);
    expect(r403.headers['WWW-Authenticate']).toBeUndefined();
  });

  it('a 429 response carries the limiter headers passed in', () => {
    const r = problemResponse(BASE, 'quota-exceeded', 'Monthly quota of 250 used.', '/mcp', {
      'Retry-After': '86400',
    });
    expect(r.status).toBe(429);
    expect(r.headers).toEqual({ 'Content-Type': 'application/problem+json', 'Retry-After': '86400' });
    expect(JSON.parse(String(r.body)).type).toBe(`${BASE}/problems/quota-exceeded`);
  });
});

describe('C22 /problems/<slug> pages', () => {
  const text = (slug: ProblemSlug) => problemPage(BASE, slug);

  it.each(PROBLEM_SLUGS)('%s is a self-contained HTML page with its status and title', (slug) => {
    const html = text(slug);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain(`<h1>${problemTypes[slug].status} `);
    expect(html).toContain(`${BASE}/problems/${slug}`);
    expect(html).not.toMatch(/<script|<link|<img|@import/i);
  });

  it('unauthorized explains the Bearer header and the key', () => {
    expect(text('unauthorized')).toContain('Authorization: Bearer &lt;API_KEY&gt;');
    expect(text('unauthorized')).toContain('fr_live_');
  });

  it('forbidden says to choose a plan or reactivate the subscription', () => {
    expect(text('forbidden')).toMatch(/Choose a plan/);
  });

  it('rate-limited says to wait for Retry-After', () => {
    expect(text('rate-limited')).toContain('<code>Retry-After</code>');
    expect(text('rate-limited')).toMatch(/batch/);
  });

  it('quota-exceeded gives the UTC month reset and the upgrade path', () => {
    const html = text('quota-exceeded');
    expect(html).toContain('first second of next month (00:00:00 UTC on the 1st)');
    expect(html).toMatch(/higher plan/);
  });

  it('escapes the base URL in HTML', () => {
    expect(problemPage('https://x.example/a&b', 'forbidden')).toContain('https://x.example/a&amp;b/docs');
  });

  it('routes are one per slug, text/html', () => {
    const routes = problemRoutes(BASE);
    expect(routes.map((r) => r.path).sort()).toEqual(PROBLEM_SLUGS.map((s) => `/problems/${s}`).sort());
    for (const r of routes) {
      expect(r.contentType).toBe('text/html; charset=utf-8');
      expect(r.body.toString('utf8')).toContain('<h1>');
    }
  });
});
