import { describe, expect, it } from 'vitest';
import { API_CATALOG_CONTENT_TYPE, apiCatalog } from './catalog.js';

/** RFC 9264 JSON linkset shape: returns the problems found, empty when valid. */
function linksetProblems(doc: unknown): string[] {
  const out: string[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(doc)) return ['document is not an object'];
  if (!Array.isArray(doc.linkset)) return ['linkset is not an array'];
  doc.linkset.forEach((ctx, i) => {
    if (!isObj(ctx)) {
      out.push(`linkset[${i}] is not an object`);
      return;
    }
    if (typeof ctx.anchor !== 'string' || !URL.canParse(ctx.anchor)) out.push(`linkset[${i}].anchor`);
    for (const [rel, targets] of Object.entries(ctx)) {
      if (rel === 'anchor') continue;
      if (!Array.isArray(targets) || targets.length === 0) {
        out.push(`${rel} is not a non-empty array`);
        continue;
      }
      targets.forEach((t, j) => {
        if (!isObj(t) || typeof t.href !== 'string' || !URL.canParse(t.href)) out.push(`${rel}[${j}].href`);
      });
    }
  });
  return out;
}

describe('C33 /.well-known/api-catalog', () => {
  it('sends the RFC 9727 content type and the self Link header', () => {
    const r = apiCatalog('https://api.example.com');
    expect(r.status).toBe(200);
    expect(r.headers['Content-Type']).toBe(
      'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"',
    );
    expect(API_CATALOG_CONTENT_TYPE).toBe(r.headers['Content-Type']);
    expect(r.headers.Link).toBe('</.well-known/api-catalog>; rel="api-catalog"');
  });

  it('writes exactly the body C33 gives, every relation an array', () => {
    const r = apiCatalog('https://api.example.com');
    const b = 'https://api.example.com';
    expect(r.body).toBe(
      `{"linkset":[{"anchor":"${b}/v1",` +
        `"service-desc":[{"href":"${b}/openapi.json","type":"application/vnd.oai.openapi+json"}],` +
        `"service-doc":[{"href":"${b}/docs","type":"text/html"}],` +
        `"status":[{"href":"${b}/healthz","type":"application/json"}]}]}`,
    );
  });

  it('is a valid RFC 9264 linkset (anchor plus arrays of targets with href)', () => {
    expect(linksetProblems(JSON.parse(apiCatalog('http://127.0.0.1:8080').body))).toEqual([]);
  });

  it('the shape check catches a relation written as a single object', () => {
    const bad = {
      linkset: [{ anchor: 'https://x.example/v1', status: { href: 'https://x.example/healthz' } }],
    };
    expect(linksetProblems(bad)).toEqual(['status is not a non-empty array']);
  });

  it('drops a trailing slash and keeps a path prefix of the base URL', () => {
    const body = JSON.parse(apiCatalog('https://example.com/funds/').body);
    expect(body.linkset[0].anchor).toBe('https://example.com/funds/v1');
    expect(body.linkset[0]['service-desc'][0].href).toBe('https://example.com/funds/openapi.json');
  });

  it('refuses a base URL that is not absolute http(s)', () => {
    expect(() => apiCatalog('/relative')).toThrow(/absolute/);
    expect(() => apiCatalog('ftp://example.com')).toThrow(/http/);
    expect(() => apiCatalog('https://example.com/?x=1')).toThrow(/query/);
  });
});
