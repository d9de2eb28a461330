/**
 * The OpenAPI 3.1 document (C33: served at /openapi.json, `info.version` 1.0.0). Built
 * from the same schema objects ajv compiles, so documentation and validation cannot
 * drift apart. Its parts: openapi-blocks.ts (shared pieces), openapi-operations.ts (what
 * each operation says), openapi-components.ts (info and the shared components).
 */

import { SCHEMAS } from './index.js';
import { copyWithRefs, type Json } from './openapi-blocks.js';
import { headers, info, responses, securitySchemes } from './openapi-components.js';
import { operations } from './openapi-operations.js';
import { type OperationId, ROUTES, type RouteDecl } from './routes.js';

export { PROBLEM_EXAMPLES } from './openapi-blocks.js';

export interface OpenApiOptions {
  /** Public base URL, without a trailing slash (`servers[0].url`). */
  baseUrl: string;
  /**
   * True when no public base URL was configured and `baseUrl` is only the address the
   * server listens on: `servers` is then `/`, relative to wherever the document was
   * fetched from, so the API reference's "Try it out" calls the host the reader used
   * (`localhost`, a tunnel, a name), not a listening address it may not reach.
   */
  baseUrlDerived?: boolean;
  /** Example 200 bodies keyed by operationId; the server fills them from real data. */
  examples?: Record<string, unknown>;
}

/**
 * `paths` from the route table: each declared method gets its operation's
 * description, under the operationId the table gives it. Typed so that an
 * operationId without a description does not compile.
 */
function pathsOf(ops: Record<OperationId, Json>): Json {
  const paths: Json = {};
  for (const r of ROUTES as readonly RouteDecl[]) {
    const item: Json = {};
    for (const [method, id] of Object.entries({ ...r.ops, ...r.refused }))
      item[method] = { operationId: id, ...ops[id as OperationId] };
    paths[r.path] = item;
  }
  return paths;
}

export function buildOpenApi(opts: OpenApiOptions): Json {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const schemas: Json = {};
  for (const [name, schema] of Object.entries(SCHEMAS)) schemas[name] = copyWithRefs(schema, true);
  return {
    openapi: '3.1.0',
    info: info(),
    servers: [
      opts.baseUrlDerived
        ? { url: '/', description: 'This server, where the document came from' }
        : { url: base },
    ],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'funds', description: 'Fund discovery and metadata.' },
      { name: 'returns', description: 'Trailing and calendar-year total returns.' },
      { name: 'risk', description: 'Risk figures over 1, 3, 5 and 10 years of monthly returns.' },
      { name: 'screen', description: 'Screening, ranking and comparing funds by their figures.' },
      { name: 'meta', description: 'Health, discovery documents and the MCP endpoint.' },
    ],
    paths: pathsOf(operations((operationId) => opts.examples?.[operationId])),
    components: {
      schemas,
      securitySchemes: securitySchemes(),
      headers: headers(),
      responses: responses(base),
    },
  };
}
