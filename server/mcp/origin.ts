/**
 * Which browser origins may call /mcp. The MCP transport (2025-06-18, "Security
 * Warning") requires a server to validate `Origin` and answer 403 to an invalid
 * one: a web page that rebinds its own DNS name to this server's address would
 * otherwise drive it from a visitor's browser. Clients that are not browsers send
 * no `Origin` and are not concerned; a browser page served from the public base
 * URL itself (the API's own origin) is allowed, and an operator can allow more
 * (`--mcp-origins`, config.ts) for clients and proxies that send an `Origin` of
 * their own. No CORS headers are sent: keys are kept server-side (SPEC 5), so a
 * page on another origin is not a client this API serves.
 */

/** True when a request with this `Origin` value (empty: none sent) may use /mcp. */
export type OriginPolicy = (origin: string) => boolean;

export function originPolicy(baseUrl: string, extra: readonly string[] | '*'): OriginPolicy {
  if (extra === '*') return () => true;
  const allowed = new Set([new URL(baseUrl).origin, ...extra]);
  return (origin) => {
    if (origin === '') return true;
    // `null` (a sandboxed frame, a file) and anything that is not an origin are refused.
    if (allowed.has(origin)) return true;
    let normal: string;
    try {
      normal = new URL(origin).origin;
    } catch {
      return false;
    }
    return normal !== 'null' && allowed.has(normal);
  };
}
