/**
 * The MCP tools' calls, transport-free: `callTool` answers one `tools/call` from a
 * snapshot. Every tool calls the same answer functions as the REST routes
 * (server/api/answers.ts), so an agent gets exactly the REST figures and errors; its
 * definitions are in tool-list.ts, its arguments are checked in tool-arguments.ts and
 * its text written in tool-text.ts.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type {
  CalendarReturn,
  FigureRow,
  Fund,
  FundList,
  Growth,
  McpToolName,
  RiskFigures,
  ScreenPage,
  TrailingReturns,
} from '../../schemas/index.js';
import type { Answer, Params } from '../api/answers.js';
import { TOOL_BINDINGS } from '../api/route-bindings.js';
import { NO_DATA_DETAIL } from '../http/fixed-answers.js';
import type { RowKind } from '../snapshot/prepared.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { type Args, checkArguments, issueProblems } from './tool-arguments.js';
import {
  renderCalendar,
  renderCalendarRows,
  renderCompare,
  renderFund,
  renderFundList,
  renderGrowth,
  renderRiskRows,
  renderScreenPage,
  renderTrailing,
  renderTrailingRows,
  TRAILING_HEADER,
} from './tool-text.js';

/**
 * A tools/call result as JSON, which the HTTP endpoint sends as it is (rpc.ts), and
 * whether it is an error (metrics). Built as text, not as an object to serialize: the
 * row's JSON from the REST answer goes into it as it is. Bytes when it was prepared
 * with the snapshot (tool-results.ts): a view onto shared memory, read-only.
 */
export interface ToolResultJson {
  json: string | Uint8Array;
  isError: boolean;
}

/** A result's JSON as text. */
export const resultText = (r: ToolResultJson): string => textOfBody(r.json);

function errorResult(message: string): ToolResultJson {
  return {
    json: `{"content":[{"type":"text","text":${JSON.stringify(message)}}],"isError":true}`,
    isError: true,
  };
}

function invalidArgs(tool: string, problems: string[]): ToolResultJson {
  return errorResult(`Invalid arguments for ${tool}: ${problems.join('; ')}.`);
}

/**
 * An argument as REST's query would carry it. A whole number is written in plain digits:
 * String(1e21) is "1e+21", which REST would read as no integer at all.
 */
const str = (v: unknown): string | undefined =>
  v === undefined || v === null
    ? undefined
    : typeof v === 'number' && Number.isInteger(v)
      ? BigInt(v).toString()
      : String(v);

const textOfBody = (body: Uint8Array | string): string =>
  typeof body === 'string'
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

/**
 * The answer of the tool's REST route (server/api/route-bindings.ts), from the same function: a
 * GET route's code and query (each argument as its query text), or a batch's body.
 */
function answerOf(snap: ServingSnapshot, name: McpToolName, args: Args): Answer {
  const route = TOOL_BINDINGS[name];
  if (route.kind === 'post') return route.answer(snap, JSON.stringify(args), 'application/json');
  if (route.kind !== 'get') throw new Error(`MCP tool ${name} is bound to a ${route.kind} route`);
  const params: Params = {};
  for (const [k, v] of Object.entries(args)) if (k !== 'code') params[k] = str(v);
  return route.answer(snap, typeof args.code === 'string' ? args.code : null, params);
}

/**
 * Answer one `tools/call` for a known tool. Bad arguments, an unknown fund and a
 * missing row are tool results with `isError` (MCP 2025-11-25: the model can
 * correct itself); a snapshot of null is C24's "No data loaded".
 */
export function callTool(
  snap: ServingSnapshot | null,
  name: McpToolName,
  rawArgs: Args | undefined,
): CallToolResult {
  return JSON.parse(resultText(callToolJson(snap, name, rawArgs))) as CallToolResult;
}

/**
 * `callTool`'s result as JSON. A fund's latest row asked for by its code alone is the
 * result prepared with the snapshot (tool-results.ts), the text `builtToolJson` would
 * build from the same row.
 */
export function callToolJson(
  snap: ServingSnapshot | null,
  name: McpToolName,
  rawArgs: Args | undefined,
): ToolResultJson {
  const prepared = snap === null ? null : preparedResult(snap, name, rawArgs);
  return prepared === null ? builtToolJson(snap, name, rawArgs) : { json: prepared, isError: false };
}

/** The prepared row kind (tool-results.ts) of each tool that has one: its REST route's latest row. */
const PREPARED_KIND = Object.fromEntries(
  Object.entries(TOOL_BINDINGS).map(([name, b]) => [name, b.kind === 'get' ? b.latest : null]),
) as Record<McpToolName, RowKind | null>;

/**
 * The prepared result of a call with `code` as its only argument, for a code the
 * snapshot has: such a call passes the argument check by construction (a code in the
 * index is a valid code, C15; no other argument means the defaults), as REST's direct
 * rows do (server/app.ts). Null for anything else, which the general path answers.
 */
function preparedResult(snap: ServingSnapshot, name: McpToolName, args: Args | undefined): Uint8Array | null {
  const kind = PREPARED_KIND[name];
  if (kind === null || args === undefined) return null;
  let code: unknown;
  let count = 0;
  for (const k in args) {
    count++;
    if (k === 'code') code = args[k];
  }
  if (count !== 1 || typeof code !== 'string') return null;
  const i = snap.lookup.find(code);
  if (i < 0) return null;
  const r = snap.toolResults.row(kind, i);
  // `.length`, not `.byteLength`: an inline load (core/bytes.ts). Empty: a fund
  // without calendar rows, whose error the general path writes.
  return r.length === 0 ? null : r;
}

/** The result built for this call: arguments checked, the REST answer computed and rendered. */
export function builtToolJson(
  snap: ServingSnapshot | null,
  name: McpToolName,
  rawArgs: Args | undefined,
): ToolResultJson {
  const args = checkArguments(name, rawArgs);
  if (Array.isArray(args)) return invalidArgs(name, args);
  // C24; over HTTP the whole POST is a 503 instead (http.ts).
  if (snap === null)
    return errorResult(`${NO_DATA_DETAIL}: the server has no snapshot yet; try again shortly.`);
  const a = answerOf(snap, name, args);
  if (a.status === 422) return invalidArgs(name, issueProblems(a.issues));
  if (a.status === 404) {
    const hint = a.detail.startsWith('No fund with code')
      ? ' Use searchFunds to find a fund code by name.'
      : '';
    return errorResult(`${a.detail}.${hint}`);
  }
  return toolResultOf(name, textOfBody(a.body), args);
}

/** A tool's successful result from its REST answer's JSON text (also tool-results.ts). */
export function toolResultOf(name: McpToolName, body: string, args: Args): ToolResultJson {
  return RESULTS[name](body, JSON.parse(body), args);
}

/** A tool's successful result from its REST answer: the JSON text and its parsed value. */
type ToolResult = (body: string, value: unknown, args: Args) => ToolResultJson;

const RESULTS: Record<McpToolName, ToolResult> = {
  searchFunds: (body, value) => result(body, renderFundList(value as FundList)),
  getFund: (body, value) => result(body, renderFund(value as Fund)),
  getTrailingReturns: (body, value) =>
    result(body, `${TRAILING_HEADER}\n${renderTrailing(value as TrailingReturns)}`),
  getCalendarReturns: (body, value) => result(body, renderCalendar(value as CalendarReturn)),
  batchTrailingReturns: (body, value, args) =>
    result(`{"rows":${body}}`, renderTrailingRows(value as TrailingReturns[], args.codes)),
  batchCalendarReturns: (body, value, args) =>
    result(`{"rows":${body}}`, renderCalendarRows(value as CalendarReturn[], args.codes)),
  getRiskFigures: (body, value, args) =>
    result(`{"rows":${body}}`, renderRiskRows(value as RiskFigures[], args.codes)),
  screenFunds: (body, value) => result(body, renderScreenPage(value as ScreenPage)),
  // The table alone: the rows are in structuredContent, and repeating them as JSON
  // would triple what a model reads.
  compareFunds: (body, value, args) => ({
    json: `{"content":[{"type":"text","text":${JSON.stringify(renderCompare(value as FigureRow[], args.codes))}}],"structuredContent":{"rows":${body}}}`,
    isError: false,
  }),
  getGrowth: (body, value) => result(body, renderGrowth(value as Growth)),
};

/**
 * A tool's answer: `structuredContent` (the REST answer's JSON as it is), the same
 * serialized as the first text block (MCP 2025-06-18: a tool returning structured
 * content SHOULD, for clients that read only `content`), then the compact rendering
 * with units that a model reads best.
 */
function result(structured: string, rendered: string): ToolResultJson {
  return {
    json: `{"content":[{"type":"text","text":${JSON.stringify(structured)}},{"type":"text","text":${JSON.stringify(rendered)}}],"structuredContent":${structured}}`,
    isError: false,
  };
}
