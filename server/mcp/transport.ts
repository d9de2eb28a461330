/**
 * The SDK's `Transport` between one long-lived MCP `Server` per event loop and the
 * POSTs to /mcp (rpc.ts), in place of a `WebStandardStreamableHTTPServerTransport`
 * and a `Server` built for every request. rpc.ts answers tools/call, tools/list,
 * ping and initialize itself; what it hands over here (other methods, notifications)
 * gets the SDK's own handling and error semantics (-32601 Method not found).
 *
 * Many clients share the one server, and two of them may use the same request id at
 * once, so each request goes in under an id of the transport's own and its response
 * comes back under the client's.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Message, RequestId } from './messages.js';

type Pending = { id: RequestId; resolve: (answer: Message) => void };

export class UwsTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    // A request still waiting is answered rather than left hanging.
    for (const [, p] of this.#pending)
      p.resolve({ jsonrpc: '2.0', id: p.id, error: { code: -32000, message: 'Connection closed' } });
    this.#pending.clear();
    this.onclose?.();
  }

  /**
   * What the server sends: the answer to a request handed in by `request`. A request
   * or notification of the server's own has no HTTP response to ride on (stateless,
   * JSON answers, no stream): it is dropped, as the SDK's transport drops it then.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if ('method' in message || !('id' in message) || typeof message.id !== 'number') return;
    const p = this.#pending.get(message.id);
    if (p === undefined) return;
    this.#pending.delete(message.id);
    p.resolve({ ...(message as Message), id: p.id });
  }

  /** A request for the server; resolves to its answer, under the client's id. */
  request(message: Message & { id: RequestId; method: string }): Promise<Message> {
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      this.#pending.set(id, { id: message.id, resolve });
      this.onmessage?.({ ...message, id } as JSONRPCMessage);
    });
  }

  /**
   * A notification for the server. `notifications/cancelled` is not passed on: it
   * names the client's id, which the server never saw, and every request is answered
   * within its own POST anyway.
   */
  notify(message: Message): void {
    if (message.method === 'notifications/cancelled') return;
    this.onmessage?.(message as JSONRPCMessage);
  }
}
