/**
 * /docs: an interactive API reference rendered in the browser from /openapi.json by
 * Swagger UI (the `swagger-ui-dist` package's prebuilt bundle). Every asset is
 * served from /docs/… so the page works offline, behind a firewall and under a
 * `script-src 'self'` Content-Security-Policy: no CDN, no inline script.
 *
 * Only the files the page loads are read, once, at startup: the 1.7 MB bundle and
 * its stylesheet, not the package's source maps, ES-module builds or the standalone
 * preset (its top bar lets a visitor load any URL into the viewer, which a service's
 * own reference page has no use for).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { StaticRoute } from './response.js';

export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/openapi.json';

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const PNG = 'image/png';
const TEXT = 'text/plain; charset=utf-8';

/** Files taken from swagger-ui-dist as they are: [served path, file in the package, content type]. */
const VENDOR_FILES: ReadonlyArray<readonly [string, string, string]> = [
  ['/docs/swagger-ui.css', 'swagger-ui.css', CSS],
  ['/docs/swagger-ui-bundle.js', 'swagger-ui-bundle.js', JS],
  // The bundle's first line points readers at this file for its third-party licences.
  ['/docs/swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui-bundle.js.LICENSE.txt', TEXT],
  ['/docs/favicon-32x32.png', 'favicon-32x32.png', PNG],
  ['/docs/favicon-16x16.png', 'favicon-16x16.png', PNG],
];

/**
 * The page links its assets and the document relative to itself (`docs/…` from
 * `/docs`), so it also works when a proxy serves the API under a path prefix
 * (`--base-url https://example.com/api` and `/api/docs`).
 */
const OPENAPI_RELATIVE = OPENAPI_PATH.slice(1);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fund Returns API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="stylesheet" href="docs/docs.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="docs/favicon-16x16.png" sizes="16x16">
<link rel="service-desc" type="application/vnd.oai.openapi+json" href="${OPENAPI_RELATIVE}">
</head>
<body>
<noscript><p class="noscript">This reference needs JavaScript. The OpenAPI 3.1 document it is drawn from is at
<a href="${OPENAPI_RELATIVE}">${OPENAPI_PATH}</a>.</p></noscript>
<p class="account"><a href="account">Your account</a>: sign up, get an API key, see your usage.</p>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

const STYLE = `html{box-sizing:border-box;overflow-y:scroll}
*,*::before,*::after{box-sizing:inherit}
body{margin:0;background:#fafafa}
.noscript{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem}
.account{font:16px/1.5 system-ui,sans-serif;margin:0;padding:.5rem 1rem;background:#fff;border-bottom:1px solid #d0d7de}
.account a{color:#0550ae}
`;

// validatorUrl: null, or Swagger UI sends the spec's URL to validator.swagger.io and
// shows a badge from there. Auth is not persisted: API keys are to be treated like
// passwords (SPEC part 5), and localStorage outlives the tab.
const INIT = `'use strict';
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '${OPENAPI_RELATIVE}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const SOURCE_MAP_COMMENT = /\n?(?:\/\*# sourceMappingURL=[^*]*\*\/|\/\/# sourceMappingURL=\S*)\s*$/;

/** The maps are not shipped (2-4 MB each); a dangling reference would only 404 in every visitor's devtools. */
function dropSourceMapComment(body: Buffer): Buffer {
  const text = body.toString('utf8');
  const stripped = text.replace(SOURCE_MAP_COMMENT, '\n');
  return stripped === text ? body : Buffer.from(stripped, 'utf8');
}

let cached: StaticRoute[] | null = null;

/** Routes for /docs and its assets. Reads node_modules on the first call only. */
export function docsRoutes(): StaticRoute[] {
  if (cached !== null) return cached;
  // swagger-ui-dist has no `exports` map, so its files resolve by path from package.json's folder.
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const routes: StaticRoute[] = [
    { path: DOCS_PATH, contentType: HTML, body: Buffer.from(PAGE, 'utf8') },
    { path: '/docs/docs.css', contentType: CSS, body: Buffer.from(STYLE, 'utf8') },
    { path: '/docs/init.js', contentType: JS, body: Buffer.from(INIT, 'utf8') },
  ];
  for (const [path, file, contentType] of VENDOR_FILES) {
    let body: Buffer = readFileSync(join(dir, file));
    if (contentType === CSS || contentType === JS) body = dropSourceMapComment(body);
    routes.push({ path, contentType, body });
  }
  cached = routes;
  return routes;
}

/** Name and version of the viewer, for the startup log. */
export function docsViewer(): { name: string; version: string } {
  const req = createRequire(import.meta.url);
  const pkg = req('swagger-ui-dist/package.json') as { name: string; version: string };
  return { name: pkg.name, version: pkg.version };
}
