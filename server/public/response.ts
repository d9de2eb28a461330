/** Shared shapes for the public endpoints' prebuilt responses. */

export interface PublicResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

export interface StaticRoute {
  path: string;
  contentType: string;
  body: Buffer;
}

/**
 * Why `baseUrl` cannot be the public base URL, or null when it can: the one rule that
 * `serve --base-url` (cli/commands/serve-config.ts) and every server that builds documents from
 * it apply. The base URL ends up inside documents other programs follow (linkset
 * anchors, problem `type` URLs, the catalog, OpenAPI), so a relative or non-http value,
 * a query, or a malformed %-escape would publish broken links, and a user name or
 * password would publish a secret; refusing it at startup is cheaper than finding it
 * in a client's bug report.
 */
export function baseUrlProblem(baseUrl: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    return `must be an absolute http(s) URL, not ${JSON.stringify(baseUrl)}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `must be an http or https URL, not ${JSON.stringify(baseUrl)}`;
  if (parsed.search !== '' || parsed.hash !== '')
    return `cannot have a query or fragment: ${JSON.stringify(baseUrl)}`;
  if (parsed.username !== '' || parsed.password !== '')
    return `cannot carry a user name or password: ${JSON.stringify(baseUrl)}`;
  if (/%(?![0-9A-Fa-f]{2})/.test(baseUrl)) return `has a malformed %-escape: ${JSON.stringify(baseUrl)}`;
  return null;
}

/**
 * The base URL as documents use it; throws on one baseUrlProblem refuses. A trailing
 * slash is dropped so `<base>/v1` never becomes `<base>//v1`.
 */
export function normalizeBaseUrl(baseUrl: string): string {
  const problem = baseUrlProblem(baseUrl);
  if (problem !== null) throw new Error(`base URL ${problem}`);
  return baseUrl.replace(/\/+$/, '');
}
