/**
 * /.well-known/api-catalog (C33): an RFC 9727 API catalog written as an RFC 9264
 * linkset. Built once per base URL; GET sends headers and body, HEAD the same
 * headers without the body.
 */
import { normalizeBaseUrl } from './response.js';

const API_CATALOG_PATH = '/.well-known/api-catalog';
export const API_CATALOG_CONTENT_TYPE =
  'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';
/** RFC 9727: the catalog points at itself so a client holding any response can find it. */
const API_CATALOG_LINK = `<${API_CATALOG_PATH}>; rel="api-catalog"`;

export function apiCatalog(baseUrl: string): {
  status: 200;
  headers: Record<string, string>;
  body: string;
} {
  const base = normalizeBaseUrl(baseUrl);
  // RFC 9264, JSON form: every relation's value is an array of target
  // objects, even when there is one target; some clients index [0] unconditionally.
  const linkset = {
    linkset: [
      {
        anchor: `${base}/v1`,
        'service-desc': [{ href: `${base}/openapi.json`, type: 'application/vnd.oai.openapi+json' }],
        'service-doc': [{ href: `${base}/docs`, type: 'text/html' }],
        status: [{ href: `${base}/healthz`, type: 'application/json' }],
      },
    ],
  };
  return {
    status: 200,
    headers: { 'Content-Type': API_CATALOG_CONTENT_TYPE, Link: API_CATALOG_LINK },
    body: JSON.stringify(linkset),
  };
}
