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
 * The public base URL ends up inside documents other programs follow (linkset
 * anchors, problem `type` URLs), so a relative or non-http value would publish
 * broken links; refusing it at startup is cheaper than finding it in a client's bug
 * report. A trailing slash is dropped so `<base>/v1` never becomes `<base>//v1`.
 */
export function normalizeBaseUrl(baseUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new Error(`base URL must be an absolute http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`base URL must use http or https, got ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new Error(`base URL must not carry a query or fragment, got ${JSON.stringify(baseUrl)}`);
  }
  return baseUrl.replace(/\/+$/, '');
}
