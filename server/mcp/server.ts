/**
 * The MCP server object: one for the process in stdio mode, one per event loop
 * behind the HTTP endpoint's own transport (rpc.ts), which answers the frequent
 * requests itself with the same functions (`answerToolCall`, LIST_TOOLS_RESULT).
 *
 * It is the SDK's low-level `Server`, not `McpServer`: tools are listed with our
 * JSON Schemas as they are (no zod round trip, so `tools/list` shows exactly
 * `schemas/`), arguments are checked by ajv validators compiled once at module load
 * (tool-arguments.ts), and the JSON-RPC envelope and params by ajv too (messages.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolResult,
  ErrorCode,
  type InitializeRequest,
  type InitializeResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { z } from 'zod';
import { countToolCall, TOOL_LABELS } from '../metrics/counters.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { RpcError, readInitialize, readToolCall } from './messages.js';
import { isToolName } from './tool-arguments.js';
import { LIST_TOOLS_RESULT, SERVER_INSTRUCTIONS } from './tool-list.js';
import { callToolJson, resultText, type ToolResultJson } from './tools.js';

export interface McpServerInfo {
  name: string;
  title: string;
  version: string;
}

export function serverInfo(version: string): McpServerInfo {
  return { name: 'fundreturns', title: 'Fund Returns', version };
}

/** What the server offers: tools, nothing else (initialize's answer says so). */
export const CAPABILITIES = { tools: {} };

/**
 * Server-side, the SDK uses its JSON Schema validator only for elicitation, which
 * we never send; without this option every `Server` builds its own Ajv instance
 * with all formats, the largest part of a per-request construction.
 */
const NO_ELICITATION_VALIDATOR: jsonSchemaValidator = {
  getValidator: () => {
    throw new Error('fundreturns does not use elicitation');
  },
};

/**
 * The requests as the SDK's Protocol layer parses them: by method only. Parsed there
 * with the strict schemas, a malformed request (`arguments: []`, no `name`) failed as
 * -32603 Internal error with a Zod dump as the message; loose, it reaches our own
 * check (messages.ts), which answers -32602 Invalid params naming the fields
 * (JSON-RPC 2.0 §5.1). tools/list takes no parameter we use (there is one page).
 */
const LOOSE_CALL_TOOL = z.object({ method: z.literal('tools/call') }).passthrough();
const LOOSE_INITIALIZE = z.object({ method: z.literal('initialize') }).passthrough();
const LOOSE_LIST_TOOLS = z.object({ method: z.literal('tools/list') }).passthrough();

/**
 * A server whose tools read `snapshot()` once per call: stdio's, and over HTTP the
 * one behind rpc.ts's transport for what it does not answer itself.
 */
export function createMcpServer(
  info: McpServerInfo,
  snapshot: () => ServingSnapshot | null,
  instructions: string = SERVER_INSTRUCTIONS,
): Server {
  const server = new Server(info, {
    capabilities: CAPABILITIES,
    instructions,
    jsonSchemaValidator: NO_ELICITATION_VALIDATOR,
  });
  // Checked here, then handed to the Server's own initialize (what its constructor registers).
  const ownInitialize = (server as unknown as SdkServerInternals)._oninitialize.bind(server);
  server.setRequestHandler(LOOSE_INITIALIZE, (request) => {
    readInitialize(request.params);
    return ownInitialize(request as InitializeRequest);
  });
  server.setRequestHandler(LOOSE_LIST_TOOLS, () => LIST_TOOLS_RESULT);
  // Registered past the Server's own tools/call wrapper (Protocol's setRequestHandler):
  // that wrapper answered malformed params with a raw Zod dump as the message. Its other
  // work (task-augmented calls, which we do not offer; result checks) is not needed.
  const register = Object.getPrototypeOf(Server.prototype).setRequestHandler as Server['setRequestHandler'];
  register.call(
    server,
    LOOSE_CALL_TOOL,
    (request) => JSON.parse(resultText(answerToolCall(snapshot(), request.params))) as CallToolResult,
  );
  return server;
}

/**
 * One tools/call: its params checked (-32602 naming the fields), the tool run and
 * counted. An unknown tool is a protocol error (-32602), unlike bad arguments (MCP
 * 2025-11-25), thrown as an RpcError: not McpError, whose message carries
 * "MCP error -32602: ", which the client's McpError adds again.
 */
export function answerToolCall(snap: ServingSnapshot | null, params: unknown): ToolResultJson {
  const { name, arguments: args } = readToolCall(params);
  if (!isToolName(name))
    // Clipped as arguments are: a 900 KB name need not come back whole.
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Unknown tool: ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`,
    );
  const result = callToolJson(snap, name, args);
  countToolCall(TOOL_LABELS.indexOf(name), result.isError);
  return result;
}

/** The SDK Server's initialize handler: private in its types, stable within the pinned 1.32. */
interface SdkServerInternals {
  _oninitialize(request: InitializeRequest): Promise<InitializeResult>;
}
