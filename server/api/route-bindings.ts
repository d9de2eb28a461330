/**
 * The route table's handlers (the table itself, declarative, is schemas/routes.ts):
 * what kind of handler each route takes and, for the data routes, the
 * transport-free answer (server/api/answers.ts) that both its REST route and its MCP
 * tool give. server/app.ts registers from here; server/mcp/tools.ts calls the same
 * answers by tool name.
 */
import type { McpToolName } from '../../schemas/mcp.js';
import { ROUTES, type RouteDecl, type RouteId, routeId } from '../../schemas/routes.js';
import { RowKind } from '../snapshot/prepared.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import type { Answer, Params } from './answers.js';
import * as answers from './answers.js';
import { getRisk, riskBatch } from './risk-answers.js';
import * as screen from './screen-answers.js';

/** A GET data route's answer: the path's code (null on a route without one) and the query. */
export type GetAnswer = (snap: ServingSnapshot, code: string | null, params: Params) => Answer;
/** A POST data route's answer: the JSON body and its content type. */
export type BodyAnswer = (snap: ServingSnapshot, body: Uint8Array | string, contentType: string) => Answer;

export type Binding =
  /** /healthz: AppContext.health. */
  | { readonly kind: 'health' }
  /** A fixed public resource by exact path: AppContext.resource. */
  | { readonly kind: 'resource' }
  /** GET and HEAD through the gate; `latest` names the prepared row a direct answer can send. */
  | { readonly kind: 'get'; readonly answer: GetAnswer; readonly latest: RowKind | null }
  /** POST with a JSON body through the gate. */
  | { readonly kind: 'post'; readonly answer: BodyAnswer }
  /** POST /mcp (server/mcp/http.ts). */
  | { readonly kind: 'mcp' };

const RESOURCE: Binding = { kind: 'resource' };

const BINDINGS: Record<RouteId, Binding> = {
  getHome: RESOURCE,
  getHealth: { kind: 'health' },
  getApiCatalog: RESOURCE,
  getDirectoryClaim: RESOURCE,
  getOpenApi: RESOURCE,
  getDocs: RESOURCE,
  getProblemType: RESOURCE,
  listFunds: { kind: 'get', answer: (snap, _code, params) => answers.listFunds(snap, params), latest: null },
  getFund: { kind: 'get', answer: answers.getFund, latest: RowKind.Fund },
  getTrailingReturns: { kind: 'get', answer: answers.getTrailing, latest: RowKind.Trailing },
  batchTrailingReturns: { kind: 'post', answer: answers.trailingBatch },
  getCalendarReturns: { kind: 'get', answer: answers.getCalendar, latest: RowKind.Calendar },
  batchCalendarReturns: { kind: 'post', answer: answers.calendarBatch },
  getRiskFigures: { kind: 'get', answer: getRisk, latest: null },
  batchRiskFigures: { kind: 'post', answer: riskBatch },
  screenFunds: { kind: 'get', answer: (snap, _code, params) => screen.screen(snap, params), latest: null },
  compareFunds: { kind: 'get', answer: (snap, _code, params) => screen.compare(snap, params), latest: null },
  getGrowth: { kind: 'get', answer: screen.growth, latest: null },
  postMcp: { kind: 'mcp' },
};

export const bindingOf = (r: RouteDecl): Binding => BINDINGS[routeId(r)];

/** The data route behind each MCP tool. */
export const TOOL_BINDINGS = Object.fromEntries(
  (ROUTES as readonly RouteDecl[]).flatMap((r) =>
    r.mcpTool === undefined ? [] : [[r.mcpTool, bindingOf(r)]],
  ),
) as Record<McpToolName, Binding>;

/**
 * The uWS patterns of a route: its template with `:name` parameters, unless the table
 * names them. uWS matches no parameter to an empty segment, so a code in the middle
 * of a path is registered empty as well (`/v1/funds//trailing-returns`): an empty
 * code is a C15 validation error (422), not an unknown route.
 */
export function patternsOf(r: RouteDecl): string[] {
  if (r.serve !== undefined) return [...r.serve];
  const pattern = r.path.replace(/\{(\w+)\}/g, ':$1');
  return r.path.includes('{code}/') ? [pattern, r.path.replace('{code}', '')] : [pattern];
}
