/**
 * Gateway errors (C22): RFC 7807 problem+json bodies for 401, 403 and 429, and the
 * pages their `type` URLs lead to. The `type` is a real URL on this server because
 * a developer staring at a 429 in a log will paste it into a browser.
 */
import { escapeHtml } from '../../core/escape.js';
import { normalizeBaseUrl, type PublicResponse, type StaticRoute } from './response.js';

const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export type ProblemSlug = 'unauthorized' | 'forbidden' | 'rate-limited' | 'quota-exceeded';

export interface ProblemType {
  title: string;
  status: 401 | 403 | 429;
  /** One or two sentences: what happened. */
  explanation: string;
  /** HTML fragments (trusted, written here): what the client should do next. */
  remedies: readonly string[];
}

export const problemTypes: Readonly<Record<ProblemSlug, ProblemType>> = {
  unauthorized: {
    title: 'Missing or invalid API key',
    status: 401,
    explanation:
      'The request carried no API key, or the key is not one this service knows: mistyped, truncated, ' +
      'revoked or rotated away.',
    remedies: [
      'Send the key on every <code>/v1</code> and <code>/mcp</code> request as ' +
        '<code>Authorization: Bearer &lt;API_KEY&gt;</code> (the word <code>Bearer</code>, one space, then the key).',
      'Check that the whole key was copied (keys start with <code>fr_live_</code>) with no quotes or trailing ' +
        'whitespace, and that a proxy is not stripping the <code>Authorization</code> header.',
      'A revoked or rotated key stays invalid: create a new key in the <a href="/account/keys">account dashboard</a>.',
      'Requests refused here do not count against your limits.',
    ],
  },
  forbidden: {
    title: 'No active subscription',
    status: 403,
    explanation:
      'The API key is valid, but its account has no active plan or subscription (none chosen yet, canceled, ' +
      'or payment past due).',
    remedies: [
      'Choose a plan in the <a href="/account/plans">account dashboard</a> (there is a free one), or bring the subscription back to active.',
      'The same key works again as soon as the account is active; there is no need to create a new one.',
      'Requests refused here do not count against your limits.',
    ],
  },
  'rate-limited': {
    title: 'Rate limit exceeded',
    status: 429,
    explanation:
      "Too many requests in the last minute for this account's plan. The limit is shared by all of the " +
      "account's keys and counts REST and MCP calls alike.",
    remedies: [
      'Wait the number of seconds in the <code>Retry-After</code> response header, then retry.',
      'The <code>RateLimit</code> and <code>RateLimit-Policy</code> headers on every authenticated response ' +
        'show how many requests are left and when the allowance refills.',
      'Use the batch endpoints: one call with up to 100 fund codes counts as one request.',
      'Cache results (allowed on every plan) and spread requests evenly instead of sending bursts.',
    ],
  },
  'quota-exceeded': {
    title: 'Monthly quota exceeded',
    status: 429,
    explanation:
      "This account has used its plan's monthly request quota. Months are calendar months in UTC; retrying " +
      'before the reset will not succeed.',
    remedies: [
      'The quota resets at the first second of next month (00:00:00 UTC on the 1st); the ' +
        '<code>Retry-After</code> header gives the seconds until then.',
      'Moving to a higher plan in the <a href="/account/plans">account dashboard</a> raises the quota at once.',
      'The <code>quota</code> item of the <code>RateLimit</code> header shows what is left, so a client can slow ' +
        'down before it runs out.',
    ],
  },
};

export const PROBLEM_SLUGS = Object.keys(problemTypes) as ProblemSlug[];

/**
 * The problem+json body; key order follows RFC 7807's field list so logs read the same
 * everywhere. `instance` is the request path as the client sent it: behind a proxy that
 * serves the API under the base URL's path (`--base-url https://host/api`), that path
 * comes first (`/api/v1/funds`), so it names the resource against the public base too.
 */
export function problemJson(baseUrl: string, slug: ProblemSlug, detail: string, instance: string): string {
  const t = problemTypes[slug];
  const base = normalizeBaseUrl(baseUrl);
  return JSON.stringify({
    type: `${base}/problems/${slug}`,
    title: t.title,
    status: t.status,
    detail,
    instance: `${basePath(base)}${instance}`,
  });
}

let lastBase = '';
let lastPath = '';
/** The path of a normalized base URL without its trailing slash ('' at the root); one base per server, so one parse. */
function basePath(base: string): string {
  if (base !== lastBase) {
    lastPath = new URL(base).pathname.replace(/\/+$/, '');
    lastBase = base;
  }
  return lastPath;
}

/**
 * A complete gateway response. 401 carries `WWW-Authenticate: Bearer` (C22, RFC
 * 6750) so generic HTTP clients know which scheme to retry with; `Retry-After`
 * and the RateLimit fields are the limiter's to add through `extraHeaders`.
 */
export function problemResponse(
  baseUrl: string,
  slug: ProblemSlug,
  detail: string,
  instance: string,
  extraHeaders: Record<string, string> = {},
): PublicResponse {
  const headers: Record<string, string> = { 'Content-Type': PROBLEM_CONTENT_TYPE };
  if (slug === 'unauthorized') headers['WWW-Authenticate'] = 'Bearer';
  return {
    status: problemTypes[slug].status,
    headers: { ...headers, ...extraHeaders },
    body: problemJson(baseUrl, slug, detail, instance),
  };
}

/** The page answering GET /problems/<slug>: self-contained (no scripts, no external assets). */
export function problemPage(baseUrl: string, slug: ProblemSlug): string {
  const base = escapeHtml(normalizeBaseUrl(baseUrl));
  const t = problemTypes[slug];
  const heading = `${t.status} ${escapeHtml(t.title)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${heading} · Fund Returns API</title>
<style>
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}code{background:#f3f4f6;padding:.1em .3em;border-radius:3px;font-size:.9em}
.type{color:#57606a;font-size:.9rem;word-break:break-all}
</style>
</head>
<body>
<h1>${heading}</h1>
<p class="type">Problem type <code>${base}/problems/${slug}</code> · HTTP ${t.status}</p>
<p>${escapeHtml(t.explanation)}</p>
<h2>What to do</h2>
<ul>
${t.remedies.map((r) => `<li>${r}</li>`).join('\n')}
</ul>
<p>The response body is <code>application/problem+json</code>; its <code>detail</code> describes this particular
occurrence and <code>instance</code> is the request path.</p>
<p><a href="${base}/docs">API reference</a> · <a href="${base}/.well-known/api-catalog">API catalog</a> ·
<a href="${base}/healthz">Service health</a></p>
</body>
</html>
`;
}

/** Every problem page, for routing at startup (GET /problems/<slug>). */
export function problemRoutes(baseUrl: string): StaticRoute[] {
  return PROBLEM_SLUGS.map((slug) => ({
    path: `/problems/${slug}`,
    contentType: 'text/html; charset=utf-8',
    body: Buffer.from(problemPage(baseUrl, slug), 'utf8'),
  }));
}
