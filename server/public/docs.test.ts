import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DOCS_PATH, docsRoutes, docsViewer, OPENAPI_PATH } from './docs.js';

const routes = docsRoutes();
const byPath = new Map(routes.map((r) => [r.path, r]));
const html = byPath.get(DOCS_PATH)?.body.toString('utf8') ?? '';
/** The page's assets: every src and href but the links a reader follows (`<a href>`, the dashboard's). */
const written = [...html.matchAll(/<(?!a\s)[a-z]+\b[^>]*\b(?:src|href)\s*=\s*"([^"]*)"/g)].map((m) => m[1]);
/** What a browser fetches for each reference, the page being at `page`. */
const resolved = (page: string) => written.map((ref) => new URL(ref, page).pathname);
const referenced = resolved(`http://127.0.0.1:8080${DOCS_PATH}`);

const TYPE_BY_EXT: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

describe('/docs API reference (Swagger UI, served by us)', () => {
  it('serves the page as HTML at /docs', () => {
    expect(byPath.get(DOCS_PATH)?.contentType).toBe('text/html; charset=utf-8');
    expect(html).toContain('<div id="swagger-ui"></div>');
  });

  it('finds the assets the page references (sanity of the check below)', () => {
    expect(referenced).toEqual(
      expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js']),
    );
  });

  it('serves every asset the HTML references, with the content type of its extension', () => {
    for (const ref of referenced) {
      // The OpenAPI document itself is the HTTP layer's route, not a docs asset.
      if (ref === OPENAPI_PATH) continue;
      const route = byPath.get(ref);
      expect(route, `missing route for ${ref}`).toBeDefined();
      const ext = ref.slice(ref.lastIndexOf('.'));
      expect(route?.contentType, ref).toBe(TYPE_BY_EXT[ext]);
      expect(route?.body.length, ref).toBeGreaterThan(0);
    }
  });

  it('references nothing off this server (no CDN: works offline)', () => {
    for (const ref of written) expect(ref, ref).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i);
    for (const ref of referenced) {
      expect(ref.startsWith('/docs/') || ref === OPENAPI_PATH, ref).toBe(true);
    }
    const css = byPath.get('/docs/swagger-ui.css')?.body.toString('utf8') ?? '';
    expect(css).not.toMatch(/@import|url\(\s*["']?(?:https?:)?\/\//i);
  });

  it('has no inline script: the init code is /docs/init.js, pointing the viewer at /openapi.json', () => {
    for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(m[1]).toMatch(/\bsrc="/);
      expect(m[2].trim()).toBe('');
    }
    expect(html).not.toMatch(/\son[a-z]+=/i);
    const init = byPath.get('/docs/init.js')?.body.toString('utf8') ?? '';
    const url = /url: '([^']*)'/.exec(init)?.[1] ?? '';
    expect(new URL(url, `http://127.0.0.1:8080${DOCS_PATH}`).pathname).toBe(OPENAPI_PATH);
    // Without this Swagger UI sends the spec URL to validator.swagger.io.
    expect(init).toContain('validatorUrl: null');
  });

  it('works behind a proxy that serves the API under a path prefix (--base-url https://host/api)', () => {
    const page = `https://example.com/api${DOCS_PATH}`;
    for (const path of resolved(page)) expect(path.startsWith('/api/'), path).toBe(true);
    expect(resolved(page).map((p) => p.slice('/api'.length))).toEqual(referenced);
    const init = byPath.get('/docs/init.js')?.body.toString('utf8') ?? '';
    expect(new URL(/url: '([^']*)'/.exec(init)?.[1] ?? '', page).pathname).toBe(`/api${OPENAPI_PATH}`);
  });

  it('ships JavaScript that parses', () => {
    for (const path of ['/docs/init.js', '/docs/swagger-ui-bundle.js']) {
      const code = byPath.get(path)?.body.toString('utf8') ?? '';
      expect(() => new Script(code, { filename: path })).not.toThrow();
    }
    expect(byPath.get('/docs/swagger-ui-bundle.js')?.body.toString('utf8')).toContain('SwaggerUIBundle');
  });

  it('drops source-map references to files it does not serve', () => {
    for (const r of routes) {
      if (r.contentType.startsWith('text/css') || r.contentType.startsWith('text/javascript')) {
        expect(r.body.toString('utf8'), r.path).not.toContain('sourceMappingURL');
      }
    }
  });

  it('serves only what the page needs, once each, all under /docs', () => {
    const paths = routes.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of paths) expect(p === DOCS_PATH || p.startsWith('/docs/')).toBe(true);
    expect(paths.some((p) => p.endsWith('.map') || p.includes('es-bundle') || p.includes('standalone'))).toBe(
      false,
    );
    const total = routes.reduce((n, r) => n + r.body.length, 0);
    expect(total).toBeLessThan(3 * 1024 * 1024);
  });

  it('reads node_modules once: later calls return the same buffers', () => {
    expect(docsRoutes()).toBe(routes);
  });

  it('names the viewer and its version for the startup log', () => {
    expect(docsViewer().name).toBe('swagger-ui-dist');
    expect(docsViewer().version).toMatch(/^5\.\d+\.\d+$/);
  });
});
