import { describe, expect, it } from 'vitest';
import { MCP_TOOL_INPUT_SCHEMAS } from './mcp.js';
import { buildOpenApi } from './openapi.js';
import { allowOf, ROUTES, type RouteDecl } from './routes.js';

const routes = ROUTES as readonly RouteDecl[];

describe('the route table (one declaration per endpoint)', () => {
  it('names each path once and each operation once', () => {
    const paths = routes.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    const ids = routes.flatMap((r) => [...Object.values(r.ops), ...Object.values(r.refused ?? {})]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every MCP tool exactly one route', () => {
    const tools = routes.flatMap((r) => (r.mcpTool === undefined ? [] : [r.mcpTool]));
    expect(tools.sort()).toEqual(Object.keys(MCP_TOOL_INPUT_SCHEMAS).sort());
  });

  it('is what the OpenAPI document lists: the same paths, methods and operationIds', () => {
    const doc = buildOpenApi({ baseUrl: 'https://api.example.com' }) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(Object.keys(doc.paths)).toEqual(routes.map((r) => r.path));
    for (const r of routes) {
      const ops = Object.fromEntries(
        Object.entries(doc.paths[r.path]).map(([method, op]) => [method, op.operationId]),
      );
      expect(ops, r.path).toEqual({ ...r.ops, ...r.refused });
    }
  });

  it('puts HEAD wherever GET is, and says so in Allow', () => {
    for (const r of routes) {
      expect(r.ops.head !== undefined, r.path).toBe(r.ops.get !== undefined);
      expect(allowOf(r), r.path).toBe(r.ops.get !== undefined ? 'GET, HEAD' : 'POST');
    }
  });
});
