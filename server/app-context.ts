/**
 * What the routes of one event loop read from their worker (server/server-thread.ts): the
 * gate, the snapshot of the moment and the public resources. A module of its own so
 * the thread (server-thread.ts) and the route modules (app.ts) share it without
 * importing one another; POST /mcp reads only its part (mcp/http.ts, McpContext).
 */
import type { HeaderBlock } from './http/headers.js';
import type { McpContext } from './mcp/http.js';
import type { ServingSnapshot } from './snapshot/serving.js';

/** A fixed public resource: bytes and type decided at startup or snapshot swap. */
export interface StaticResource {
  contentType: string;
  body: Buffer;
  headers?: HeaderBlock;
  /** Status line; 200 OK when absent. */
  status?: string;
}

export interface AppContext extends McpContext {
  /** The snapshot requests run on now (null: none loaded, C24). */
  snapshot(): ServingSnapshot | null;
  /** /healthz answer for now: status line and JSON body (C31). */
  health(): { status: number; body: string };
  /** Public resources by exact path (home page, api-catalog, claim, openapi.json, docs, problem pages). */
  resource(path: string): StaticResource | undefined;
  /** The account dashboard's pages (/account, /admin), or null when turned off. */
  dashboard: { register(app: import('./http/uws.js').TemplatedApp): void } | null;
}
