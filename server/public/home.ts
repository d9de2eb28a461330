/**
 * GET /: a small page for whoever opens the server's address in a browser, pointing
 * to everything else: the API reference, the OpenAPI document, health, and a first
 * request to copy. Rendered once at startup, no script, every interpolated value
 * escaped. Links are relative (`docs`, not `/docs`), like /docs's own, so the page
 * also works behind a proxy that serves the API under a path prefix.
 */
import { escapeHtml } from '../../core/escape.js';
import { normalizeBaseUrl } from './response.js';

export const HOME_PATH = '/';

export function homePage(baseUrl: string): string {
  const base = escapeHtml(normalizeBaseUrl(baseUrl));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fund Returns API</title>
<link rel="service-desc" type="application/vnd.oai.openapi+json" href="openapi.json">
<style>
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1f2328;background:#fff}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:1.6rem}a{color:#0550ae}
pre{background:#f3f4f6;padding:.75rem;border-radius:4px;overflow-x:auto;font-size:.9rem}
</style>
</head>
<body>
<main>
<h1>Fund Returns API</h1>
<p>Trailing and calendar-year total returns, and metadata, for US mutual funds and ETFs, over REST and MCP.
The data is informational only, not investment advice.</p>
<nav aria-label="Start here">
<ul>
<li><a href="account">Your account</a>: sign up, get an API key, choose a plan and see your usage.</li>
<li><a href="docs">API reference</a>: every endpoint, its parameters and answers, with examples you can try.</li>
<li><a href="openapi.json">OpenAPI 3.1 document</a>: the same, for code generators and tools.</li>
<li><a href="healthz">Service health</a>: whether data is loaded and how fresh it is.</li>
</ul>
</nav>
<h2>A first request</h2>
<p>Every <code>/v1</code> request needs an API key, sent as a bearer token:</p>
<pre><code>curl -s ${base}/healthz
curl -s -H "Authorization: Bearer $API_KEY" '${base}/v1/funds?q=index&amp;type=ETF&amp;limit=3'</code></pre>
<p>MCP clients connect to <code>${base}/mcp</code> (Streamable HTTP) with the same key.</p>
</main>
</body>
</html>
`;
}
