/**
 * One POST body to /mcp in, one HTTP answer out: MCP's Streamable HTTP transport in
 * stateless mode with JSON answers (MCP 2025-11-25 "Transports"), without web-standard
 * Request/Response objects and without a transport and server built per request.
 *
 * The frequent requests are answered here, synchronously, by the functions the SDK
 * server's handlers call too (server.ts): tools/call, tools/list and initialize (their
 * answers prepared once), ping. Anything else, and every notification, goes to one
 * long-lived SDK `Server` behind a transport of ours (transport.ts), which answers as
 * the SDK does (-32601 Method not found). The checks before them are the SDK
 * transport's, in its order, with its status codes and messages, except where ours
 * said more (errors.ts).
 *
 * C24: a POST carrying a tools/call of one of our tools while no snapshot is loaded is
 * answered 503 `{"detail":"No data loaded"}` like a REST data route, so HTTP clients
 * and proxies see "briefly unavailable" and retry; initialize, ping and tools/list
 * need no data and still work.
 */
import { isUtf8 } from 'node:buffer';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { copyInto } from '../../core/bytes.js';
import { reportInternalError } from '../http/guard.js';
import { countToolCall, TOOL_LABELS } from '../metrics/counters.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import {
  EMPTY_BATCH,
  INITIALIZE_IN_BATCH,
  INVALID_MESSAGE,
  invalidBatchElement,
  NOT_UTF8,
  rpcError,
} from './jsonrpc-errors.js';
import { lookupReader } from './lookup-call.js';
import {
  isJsonRpcMessage,
  isRequest,
  type Message,
  type RequestId,
  RpcError,
  readInitialize,
} from './messages.js';
import { answerToolCall, CAPABILITIES, createMcpServer, type McpServerInfo } from './server.js';
import { isToolName } from './tool-arguments.js';
import { LIST_TOOLS_RESULT, SERVER_INSTRUCTIONS } from './tool-list.js';
import { PREPARED_TOOLS } from './tool-results.js';
import { UwsTransport } from './transport.js';

/** An HTTP answer: status and JSON body ('' for 202); `noData` adds Retry-After (C24). */
export interface McpReply {
  status: number;
  body: string | Buffer;
  noData?: boolean;
}

/** The SDK transport's own limit (MAX_BATCH_SIZE): a longer batch is refused whole. */
const BATCH_MAX = 100;

const SUPPORTED = new Set<string>(SUPPORTED_PROTOCOL_VERSIONS);

const fail = (status: number, value: unknown): McpReply => ({ status, body: JSON.stringify(value) });

// The SDK transport's answers to what it refuses, word for word.
const UNSUPPORTED_MEDIA_TYPE = fail(
  415,
  rpcError(-32000, 'Unsupported Media Type: Content-Type must be application/json'),
);
const PARSE_ERROR = fail(400, rpcError(-32700, 'Parse error: Invalid JSON'));
const BATCH_TOO_LONG = fail(
  400,
  rpcError(-32600, `Invalid Request: Batch must not exceed ${BATCH_MAX} messages`),
);
const NOT_UTF8_REPLY = fail(400, rpcError(-32700, NOT_UTF8));
const NO_DATA_REPLY: McpReply = { status: 503, body: '', noData: true };
const ACCEPTED: McpReply = { status: 202, body: '' };

const idText = (id: RequestId) => (typeof id === 'number' ? String(id) : JSON.stringify(id));
/** A success as the SDK's Protocol writes it (`result`, `jsonrpc`, `id`), from the result's JSON. */
const success = (id: RequestId, result: string) => `{"result":${result},"jsonrpc":"2.0","id":${idText(id)}}`;
const RESULT_OPEN = Buffer.from('{"result":');
const RESULT_ID = Buffer.from(',"jsonrpc":"2.0","id":');
/**
 * `success` for a result as bytes (a prepared one, tool-results.ts), written once into
 * its answer. The result lies in shared memory, which V8 copies out of byte by byte
 * unless source and destination are equally aligned to 8 (then word by word: about
 * 4,000 instructions less for a trailing result), so the answer starts where the
 * result's copy lands aligned as its source is.
 */
function successBytes(idJson: string | Uint8Array, result: Uint8Array): Buffer {
  const idLength = typeof idJson === 'string' ? Buffer.byteLength(idJson) : idJson.length;
  const length = RESULT_OPEN.length + result.length + RESULT_ID.length + idLength + 1;
  const room = Buffer.allocUnsafe(length + 7);
  const start = (result.byteOffset - room.byteOffset - RESULT_OPEN.length) & 7;
  let at = copyInto(room, RESULT_OPEN, start);
  at = copyInto(room, result, at);
  at = copyInto(room, RESULT_ID, at);
  at = typeof idJson === 'string' ? at + room.write(idJson, at) : copyInto(room, idJson, at);
  room[at] = 0x7d;
  return room.subarray(start, start + length);
}

/** The reader of lookup calls (lookup-call.ts), and the row kind and metrics label of each tool it reads. */
const readLookupCall = lookupReader(PREPARED_TOOLS.map(([name]) => name));
const LOOKUP_KINDS = PREPARED_TOOLS.map(([, kind]) => kind);
const LOOKUP_LABELS = PREPARED_TOOLS.map(([name]) => TOOL_LABELS.indexOf(name));

const failure = (id: RequestId, code: number, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

const idOf = (m: unknown): unknown =>
  typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : null;

/** A call of one of our tools: what needs data (C24). An unknown tool is -32602 with or without it. */
const isToolCall = (m: Message) => {
  if (m.method !== 'tools/call') return false;
  const name = m.params?.name;
  return typeof name === 'string' && isToolName(name);
};

const isInitialize = (m: unknown) =>
  typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';

/** The /mcp endpoint of one event loop: its SDK server, transport and prepared answers. */
export class McpEndpoint {
  readonly #transport = new UwsTransport();
  readonly #server: Server;
  /** initialize's result by the protocol version it answers with. */
  readonly #initialized = new Map<string, string>();
  /**
   * tools/list's answer up to its id, as bytes: about 38 KB that would otherwise be
   * converted to UTF-8 again on every call (940k instructions a call, most of them that).
   */
  readonly #toolListHead = Buffer.from(
    `{"result":${JSON.stringify(LIST_TOOLS_RESULT)},"jsonrpc":"2.0","id":`,
  );
  readonly #snapshot: () => ServingSnapshot | null;

  constructor(
    info: McpServerInfo,
    snapshot: () => ServingSnapshot | null,
    instructions: string = SERVER_INSTRUCTIONS,
  ) {
    this.#snapshot = snapshot;
    this.#server = createMcpServer(info, snapshot, instructions);
    // The transport's start() is synchronous work: connected before any request arrives.
    void this.#server.connect(this.#transport);
    // What the SDK Server's own initialize answers (its _oninitialize): the version
    // asked for when supported, else the latest.
    for (const protocolVersion of SUPPORTED_PROTOCOL_VERSIONS)
      this.#initialized.set(
        protocolVersion,
        JSON.stringify({
          protocolVersion,
          capabilities: CAPABILITIES,
          serverInfo: info,
          instructions,
        }),
      );
  }

  /**
   * A POST's body (bytes), its Content-Type and MCP-Protocol-Version ('' when absent).
   * Synchronous unless a message goes to the SDK server.
   */
  answer(raw: Buffer, contentType: string, protocolVersion: string): McpReply | Promise<McpReply> {
    // Bytes that are not UTF-8 are a parse error, as REST's 422 json_invalid (C21): the
    // SDK would read them with U+FFFD in their place and answer about another code.
    if (!isUtf8(raw)) return NOT_UTF8_REPLY;
    if (!isJsonContentType(contentType)) return UNSUPPORTED_MEDIA_TYPE;
    const lookup = this.#lookup(raw, protocolVersion);
    if (lookup !== null) return lookup;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return PARSE_ERROR;
    }
    if (!Array.isArray(body)) {
      // JSON that is not a JSON-RPC message is -32600 Invalid Request (JSON-RPC 2.0
      // §5.1; the SDK's transport would say -32700 Parse error).
      if (!isJsonRpcMessage(body)) return fail(400, rpcError(-32600, INVALID_MESSAGE, idOf(body)));
      if (this.#snapshot() === null && isToolCall(body)) return NO_DATA_REPLY;
      return this.#serve([body], [], protocolVersion, false);
    }
    // A batch (JSON-RPC 2.0 §6): one answer per request, invalid elements included.
    if (body.length > BATCH_MAX) return BATCH_TOO_LONG;
    if (body.length === 0) return fail(400, rpcError(-32600, EMPTY_BATCH));
    if (body.length > 1 && body.some(isInitialize)) return fail(400, rpcError(-32600, INITIALIZE_IN_BATCH));
    const valid: Message[] = [];
    const errors: string[] = [];
    body.forEach((m: unknown, i) => {
      if (isJsonRpcMessage(m)) valid.push(m);
      else errors.push(JSON.stringify(rpcError(-32600, invalidBatchElement(i), idOf(m))));
    });
    if (valid.length === 0) return { status: 400, body: `[${errors.join(',')}]` };
    if (this.#snapshot() === null && valid.some(isToolCall)) return NO_DATA_REPLY;
    return this.#serve(valid, errors, protocolVersion, true);
  }

  /**
   * A lookup call read from the bytes (lookup-call.ts) of a fund the snapshot has, with
   * its prepared result (tool-results.ts): the answer `#serve` would give, without the
   * parse and the checks it passes by construction. Null for anything else.
   */
  #lookup(raw: Buffer, protocolVersion: string): McpReply | null {
    if (protocolVersion !== '' && !SUPPORTED.has(protocolVersion)) return null;
    const c = readLookupCall(raw);
    if (c === null) return null;
    const snap = this.#snapshot();
    if (snap === null) return null;
    const i = snap.lookup.findBytes(raw, c.codeStart, c.codeEnd);
    if (i < 0) return null;
    const result = snap.toolResults.row(LOOKUP_KINDS[c.tool], i);
    if (result.length === 0) return null;
    countToolCall(LOOKUP_LABELS[c.tool], false);
    return { status: 200, body: successBytes(raw.subarray(c.idStart, c.idEnd), result) };
  }

  /** Valid messages (and a batch's errors, answered after them). */
  #serve(
    messages: Message[],
    errors: string[],
    protocolVersion: string,
    batch: boolean,
  ): McpReply | Promise<McpReply> {
    // MCP-Protocol-Version is checked on every request but initialize (the SDK's rule).
    if (protocolVersion !== '' && !SUPPORTED.has(protocolVersion) && !messages.some(isInitialize))
      return fail(
        400,
        rpcError(
          -32000,
          `Bad Request: Unsupported protocol version: ${protocolVersion} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        ),
      );
    const answers: Array<string | Buffer | Promise<string>> = [];
    let waiting = false;
    for (const m of messages) {
      if (isRequest(m)) {
        const a = this.#request(m);
        waiting ||= a instanceof Promise;
        answers.push(a);
      } else if (m.method !== undefined) this.#transport.notify(m);
      // A client's result or error answers a request of ours: over stateless HTTP we send
      // none, so there is nothing to match it with (the SDK's server would drop it too).
    }
    const reply = (texts: Array<string | Buffer>): McpReply => {
      // Only notifications (and answers): 202 Accepted with no body, or a batch's errors.
      if (texts.length === 0)
        return errors.length === 0 ? ACCEPTED : { status: 200, body: `[${errors.join(',')}]` };
      if (!batch) return { status: 200, body: texts[0] };
      return { status: 200, body: `[${[...texts.map(String), ...errors].join(',')}]` };
    };
    return waiting ? Promise.all(answers).then(reply) : reply(answers as Array<string | Buffer>);
  }

  /** One request's answer, as JSON text. */
  #request(m: Message & { id: RequestId; method: string }): string | Buffer | Promise<string> {
    try {
      switch (m.method) {
        case 'tools/call': {
          const { json } = answerToolCall(this.#snapshot(), m.params);
          return typeof json === 'string' ? success(m.id, json) : successBytes(idText(m.id), json);
        }
        case 'tools/list':
          return Buffer.concat([this.#toolListHead, Buffer.from(`${idText(m.id)}}`)]);
        case 'ping':
          return success(m.id, '{}');
        case 'initialize': {
          const { protocolVersion } = readInitialize(m.params);
          const result =
            this.#initialized.get(protocolVersion) ??
            (this.#initialized.get(LATEST_PROTOCOL_VERSION) as string);
          return success(m.id, result);
        }
        default:
          return this.#transport.request(m).then((a) => JSON.stringify(a));
      }
    } catch (e) {
      if (e instanceof RpcError) return failure(m.id, e.code, e.message);
      // A fault of ours: logged (http/guard.ts), and JSON-RPC's internal error for this message.
      reportInternalError(e);
      return failure(m.id, -32603, 'Internal error');
    }
  }
}
