/**
 * The MCP server object, shared by the HTTP endpoint (a fresh one per request: a
 * stateless transport serves one request and a server connects once, SDK 1.32) and
 * stdio mode (one for the process).
 *
 * It is the SDK's low-level `Server`, not `McpServer`: tools are listed with our
 * JSON Schemas as they are (no zod round trip, so `tools/list` shows exactly
 * `schemas/`), arguments are checked by ajv validators compiled once at module load
 * (tools.ts), and building one per request is a few Maps and closures.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { z } from 'zod';
import { countToolCall, TOOL_LABELS } from '../metrics/counters.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { callTool, isToolName, LIST_TOOLS_RESULT, SERVER_INSTRUCTIONS } from './tools.js';

export interface McpServerInfo {
  name: string;
  title: string;
  version: string;
}

export function serverInfo(version: string): McpServerInfo {
  return { name: 'fundreturns', title: 'Fund Returns', version };
}

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
 * The two requests as the SDK's Protocol layer parses them: by method only. Parsed
 * there with the strict schemas, a malformed request (`arguments: []`, no `name`)
 * failed as -32603 Internal error; loose, it reaches the Server's own tools/call
 * check, which answers -32602 Invalid params (JSON-RPC 2.0 §5.1). tools/list takes
 * no parameter we use (there is one page).
 */
const LOOSE_CALL_TOOL = z.object({ method: z.literal('tools/call') }).passthrough();
const LOOSE_INITIALIZE = z.object({ method: z.literal('initialize') }).passthrough();
const LOOSE_LIST_TOOLS = z.object({ method: z.literal('tools/list') }).passthrough();

/** A server whose tools read `snapshot()` once per call. */
export function createMcpServer(
  info: McpServerInfo,
  snapshot: () => ServingSnapshot | null,
  instructions: string = SERVER_INSTRUCTIONS,
): Server {
  const server = new Server(info, {
    capabilities: { tools: {} },
    instructions,
    jsonSchemaValidator: NO_ELICITATION_VALIDATOR,
  });
  // The SDK parses initialize strictly too, so missing params were -32603 with a Zod
  // dump as the message: checked here instead, -32602 naming what is wrong, then
  // handed to the Server's own initialize (what its constructor registers).
  const ownInitialize = (server as unknown as SdkServerInternals)._oninitialize.bind(server);
  server.setRequestHandler(LOOSE_INITIALIZE, (request) => {
    const parsed = InitializeRequestSchema.safeParse(request);
    if (!parsed.success)
      throw Object.assign(new Error(`Invalid params: ${describeIssues(parsed.error.issues)}`), {
        code: ErrorCode.InvalidParams,
      });
    return ownInitialize(parsed.data);
  });
  server.setRequestHandler(LOOSE_LIST_TOOLS, () => LIST_TOOLS_RESULT);
  // Registered past the Server's own tools/call wrapper (Protocol's setRequestHandler):
  // that wrapper answered malformed params with a raw Zod dump as the message. Checked
  // here instead, -32602 naming the fields, as initialize is. The wrapper's other work
  // (task-augmented calls, which we do not offer; result checks) is not needed.
  const register = Object.getPrototypeOf(Server.prototype).setRequestHandler as Server['setRequestHandler'];
  register.call(server, LOOSE_CALL_TOOL, (request) => {
    const parsed = CallToolRequestSchema.safeParse(request);
    if (!parsed.success)
      throw Object.assign(new Error(`Invalid params: ${describeIssues(parsed.error.issues)}`), {
        code: ErrorCode.InvalidParams,
      });
    const { name, arguments: args } = parsed.data.params;
    // An unknown tool is a protocol error (-32602), unlike bad arguments (MCP 2025-11-25).
    // Not McpError: its message carries "MCP error -32602: ", which the client's McpError adds again.
    if (!isToolName(name))
      // Clipped as arguments are: a 900 KB name need not come back whole.
      throw Object.assign(new Error(`Unknown tool: ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`), {
        code: ErrorCode.InvalidParams,
      });
    const result = callTool(snapshot(), name, args);
    countToolCall(TOOL_LABELS.indexOf(name), result.isError === true);
    return result;
  });
  return server;
}

/** The SDK Server's initialize handler: private in its types, stable within the pinned 1.32. */
interface SdkServerInternals {
  _oninitialize(request: InitializeRequest): Promise<InitializeResult>;
}

/** Zod issues as one line: `params.clientInfo: expected object, received undefined; …`. */
function describeIssues(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join('.') || 'message'}: ${i.message}`)
    .join('; ');
}
