/**
 * What a server is started with (read from flags and FUNDRETURNS_<FLAG> variables by
 * cli/commands/serve-config.ts).
 */

export interface ServeConfig {
  host: string;
  port: number;
  snapshots: string;
  threads: number;
  /** Public base URL without a trailing slash (problem types, catalog, OpenAPI servers). */
  baseUrl: string;
  /** True when --base-url was not given: it follows the port actually bound (port 0). */
  baseUrlDerived: boolean;
  freshnessHours: number;
  claimFile: string | null;
  claimName: string;
  /** How often CURRENT is polled in case a file-system event is missed. */
  pollMs: number;
  /** Log one access line in this many requests (0: none). */
  accessLogSample: number;
  /** Accounts, keys and usage: a directory (embedded store) or a redis:// URL (C25–C30). */
  store: string;
  /** JSON file overriding plan limits (C26), or null for the defaults. */
  plansFile: string | null;
  /**
   * Browser origins /mcp accepts besides the base URL's own (MCP's DNS-rebinding
   * rule, server/mcp/origin.ts); '*' accepts any.
   */
  mcpOrigins: readonly string[] | '*';
  /**
   * The admin listener (GET /metrics, docs/monitoring.md): off (null) unless a port is
   * given; never the public port, and loopback unless told otherwise.
   */
  adminPort: number | null;
  adminHost: string;
  /** The account dashboard under /account and /admin (docs/dashboard.md); on unless turned off. */
  dashboard: boolean;
  /** SMTP server for account emails (`smtp://user:pass@host:port`); null: emails are logged as JSON lines. */
  smtpUrl: string | null;
  /** From address of account emails (required with smtpUrl). */
  mailFrom: string | null;
  /** Most usable keys one person may hold from the dashboard. */
  maxKeys: number;
  /**
   * Proxies whose forwarding headers name the client (`--trust-proxy`, CIDR ranges,
   * server/http/client-address.ts); empty: the TCP peer is the client.
   */
  trustProxy: readonly string[];
  /** Default benchmark fund of beta and correlation (`--benchmark`, C45); null: none. */
  benchmark: string | null;
}

/** http://host:port for a listening address (IPv6 hosts in brackets). */
export function localBaseUrl(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}
