/**
 * The route table: every endpoint declared once, by path template (OpenAPI's
 * spelling), the operationId of each method it answers and the MCP tool that
 * serves the same answer. The OpenAPI `paths` (schemas/openapi.ts), the server's
 * registrations and 405 `Allow` lists (server/app.ts, server/api/route-bindings.ts) and the MCP
 * tool → answer map (server/mcp/tools.ts) are all read from it. Declarative only:
 * schemas/ imports nothing from server/; the handlers are bound in server/api/route-bindings.ts.
 */
import type { McpToolName } from './mcp.js';

type Method = 'get' | 'head' | 'post';

export interface RouteDecl {
  /** Path template, OpenAPI style: `/v1/funds/{code}`. */
  readonly path: string;
  /** operationId by method answered. */
  readonly ops: Readonly<Partial<Record<Method, string>>>;
  /** Methods documented although they are only ever answered 405 (GET /mcp: no event stream). */
  readonly refused?: Readonly<Partial<Record<'get', string>>>;
  /**
   * uWS patterns when the template does not say them: a parameter that is not a
   * whole segment, or a set of static files served under one prefix.
   */
  readonly serve?: readonly string[];
  /** The MCP tool giving the same answer from the same function (server/api/answers.ts). */
  readonly mcpTool?: McpToolName;
}

export const ROUTES = [
  { path: '/', ops: { get: 'getHome', head: 'headHome' } },
  { path: '/healthz', ops: { get: 'getHealth', head: 'headHealth' } },
  { path: '/.well-known/api-catalog', ops: { get: 'getApiCatalog', head: 'headApiCatalog' } },
  {
    path: '/.well-known/{claim}.json',
    ops: { get: 'getDirectoryClaim', head: 'headDirectoryClaim' },
    serve: ['/.well-known/*'],
  },
  { path: '/openapi.json', ops: { get: 'getOpenApi', head: 'headOpenApi' } },
  { path: '/docs', ops: { get: 'getDocs', head: 'headDocs' }, serve: ['/docs', '/docs/*'] },
  {
    path: '/problems/{slug}',
    ops: { get: 'getProblemType', head: 'headProblemType' },
    serve: ['/problems/*'],
  },
  { path: '/v1/funds', ops: { get: 'listFunds', head: 'headListFunds' }, mcpTool: 'searchFunds' },
  { path: '/v1/funds/{code}', ops: { get: 'getFund', head: 'headFund' }, mcpTool: 'getFund' },
  {
    path: '/v1/funds/{code}/trailing-returns',
    ops: { get: 'getTrailingReturns', head: 'headTrailingReturns' },
    mcpTool: 'getTrailingReturns',
  },
  {
    path: '/v1/trailing-returns/batch',
    ops: { post: 'batchTrailingReturns' },
    mcpTool: 'batchTrailingReturns',
  },
  {
    path: '/v1/funds/{code}/calendar-returns',
    ops: { get: 'getCalendarReturns', head: 'headCalendarReturns' },
    mcpTool: 'getCalendarReturns',
  },
  {
    path: '/v1/calendar-returns/batch',
    ops: { post: 'batchCalendarReturns' },
    mcpTool: 'batchCalendarReturns',
  },
  {
    path: '/v1/funds/{code}/risk',
    ops: { get: 'getRiskFigures', head: 'headRiskFigures' },
  },
  { path: '/v1/risk/batch', ops: { post: 'batchRiskFigures' }, mcpTool: 'getRiskFigures' },
  { path: '/v1/screen', ops: { get: 'screenFunds', head: 'headScreenFunds' }, mcpTool: 'screenFunds' },
  { path: '/v1/compare', ops: { get: 'compareFunds', head: 'headCompareFunds' }, mcpTool: 'compareFunds' },
  {
    path: '/v1/funds/{code}/growth',
    ops: { get: 'getGrowth', head: 'headGrowth' },
    mcpTool: 'getGrowth',
  },
  { path: '/mcp', ops: { post: 'postMcp' }, refused: { get: 'getMcp' } },
] as const satisfies readonly RouteDecl[];

type Route = (typeof ROUTES)[number];
type OpsOf<R> = R extends { ops: infer O } ? O[keyof O] : never;
type RefusedOf<R> = R extends { refused: infer O } ? O[keyof O] : never;

/** Every operationId of the API. */
export type OperationId = OpsOf<Route> | RefusedOf<Route>;
/** The operationId naming a route: its GET, or its POST. */
export type RouteId = Route extends infer R
  ? R extends { ops: { get: infer G } }
    ? G
    : R extends { ops: { post: infer P } }
      ? P
      : never
  : never;

/** The operationId naming a route (its GET, or else its POST). */
export function routeId(r: RouteDecl): RouteId {
  return (r.ops.get ?? r.ops.post) as RouteId;
}

/** `GET, HEAD`: the methods a route answers, for 405's `Allow` (C21). */
export function allowOf(r: RouteDecl): string {
  return (['get', 'head', 'post'] as const)
    .filter((m) => r.ops[m] !== undefined)
    .map((m) => m.toUpperCase())
    .join(', ');
}
