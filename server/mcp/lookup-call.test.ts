/**
 * A lookup call read from its bytes (lookup-call.ts) is what JSON.parse reads, and
 * the /mcp endpoint answers it as it answers the same message through the general
 * path (rpc.ts).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../test/seeded-random.js';
import { syntheticServing } from '../../test/serving-snapshot.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { lookupReader } from './lookup-call.js';
import { McpEndpoint } from './rpc.js';
import { serverInfo } from './server.js';

const TOOLS = ['getFund', 'getTrailingReturns', 'getCalendarReturns'];
const readLookupCall = lookupReader(TOOLS);

const read = (body: string) => readLookupCall(Buffer.from(body));

/** What readLookupCall found, as values: the id, the tool and the code. */
function found(body: string): { id: unknown; tool: string; code: string } | null {
  const b = Buffer.from(body);
  const c = readLookupCall(b);
  if (c === null) return null;
  return {
    id: JSON.parse(b.subarray(c.idStart, c.idEnd).toString('latin1')),
    tool: TOOLS[c.tool],
    code: b.subarray(c.codeStart, c.codeEnd).toString('latin1'),
  };
}

/** What JSON.parse reads, when it is a lookup call of TOOLS with a plain code; else null. */
function parsed(body: string): { id: unknown; tool: string; code: string } | null {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return null;
  const keys = Object.keys(m).sort().join();
  const params = m.params as Record<string, unknown> | undefined;
  const args = params?.arguments as Record<string, unknown> | undefined;
  if (
    keys !== 'id,jsonrpc,method,params' ||
    m.jsonrpc !== '2.0' ||
    m.method !== 'tools/call' ||
    typeof params !== 'object' ||
    params === null ||
    Object.keys(params).sort().join() !== 'arguments,name' ||
    !TOOLS.includes(params.name as string) ||
    typeof args !== 'object' ||
    args === null ||
    Object.keys(args).join() !== 'code' ||
    typeof args.code !== 'string'
  )
    return null;
  return { id: m.id, tool: params.name as string, code: args.code };
}

const canonical = (id: unknown, tool: string, code: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { code } } });
/** The member order of the TypeScript SDK's client. */
const sdkOrder = (id: unknown, tool: string, code: string) =>
  JSON.stringify({ method: 'tools/call', params: { name: tool, arguments: { code } }, jsonrpc: '2.0', id });

describe('readLookupCall', () => {
  it('reads a lookup call with its members in any order and whitespace between tokens', () => {
    expect(found(canonical(7, 'getFund', 'VTI'))).toEqual({ id: 7, tool: 'getFund', code: 'VTI' });
    expect(found(sdkOrder(12, 'getTrailingReturns', 'A.B'))).toEqual({
      id: 12,
      tool: 'getTrailingReturns',
      code: 'A.B',
    });
    expect(found(sdkOrder('x', 'getCalendarReturns', 'C'))).toEqual({
      id: 'x',
      tool: 'getCalendarReturns',
      code: 'C',
    });
    expect(found(canonical('req-1', 'getCalendarReturns', 'F0000001.US'))).toEqual({
      id: 'req-1',
      tool: 'getCalendarReturns',
      code: 'F0000001.US',
    });
    const spaced =
      ' {\n\t"params" : { "arguments" : { "code" : "VTI" } , "name" : "getTrailingReturns" } ,\r\n "id" : 0 , "method" : "tools/call" , "jsonrpc" : "2.0" }\n';
    expect(found(spaced)).toEqual({ id: 0, tool: 'getTrailingReturns', code: 'VTI' });
  });

  it('leaves to JSON.parse what it does not read exactly: escapes, other members, duplicates, other ids and methods', () => {
    const refused = [
      canonical(7, 'getFund', 'V\\TI'),
      canonical(7, 'getFund', 'Vé'),
      canonical('a"b', 'getFund', 'VTI'),
      sdkOrder('a\\b', 'getFund', 'VTI'),
      sdkOrder(-1, 'getFund', 'VTI'),
      sdkOrder(7, 'getFund', 'V"TI'),
      `${sdkOrder(7, 'getFund', 'VTI')}}`,
      canonical(-1, 'getFund', 'VTI'),
      canonical(1.5, 'getFund', 'VTI'),
      canonical(1e20, 'getFund', 'VTI'),
      canonical(1234567890123456, 'getFund', 'VTI'),
      canonical(null, 'getFund', 'VTI'),
      canonical(7, 'searchFunds', 'VTI'),
      canonical(7, 'getFunds', 'VTI'),
      '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"name":"getFund","arguments":{"code":"VTI"}}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI","market":"US"}}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"A","code":"VTI"}}}',
      '{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"}}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"},"_meta":{}}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{}}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund"}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":7}}}',
      '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"}}}',
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"}},"x":1}',
      '{"jsonrpc":"1.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"}}}',
      '{"jsonrpc":"2.0","id":07,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"}}}',
      `[${canonical(7, 'getFund', 'VTI')}]`,
      `${canonical(7, 'getFund', 'VTI')},`,
      `${canonical(7, 'getFund', 'VTI')}x`,
      '',
      '{}',
    ];
    for (const body of refused) expect(read(body), body).toBeNull();
  });

  it('whatever it reads, JSON.parse reads the same, over bodies cut, spliced and mutated at random', () => {
    const rand = seededRandom(31);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
    const alphabet = [
      '"',
      '\\',
      '{',
      '}',
      ',',
      ':',
      ' ',
      '\n',
      '0',
      '9',
      '-',
      '.',
      'e',
      'a',
      'é',
      '[',
      ']',
      't',
    ];
    const seeds = [
      canonical(1, 'getFund', 'VTI'),
      canonical('x-1', 'getTrailingReturns', 'F0000001.US'),
      sdkOrder(99, 'getFund', 'F0000002.US'),
      ' { "params" : { "arguments" : { "code" : "AB" } , "name" : "getCalendarReturns" } , "id" : 12 , "method" : "tools/call" , "jsonrpc" : "2.0" } ',
    ];
    let read = 0;
    for (let k = 0; k < 20_000; k++) {
      let body = pick(seeds);
      const edits = 1 + Math.floor(rand() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * (body.length + 1));
        const op = rand();
        if (op < 0.3) body = body.slice(0, at) + body.slice(at + 1);
        else if (op < 0.6) body = body.slice(0, at) + pick(alphabet) + body.slice(at);
        else if (op < 0.8) body = body.slice(0, at) + pick(alphabet) + body.slice(at + 1);
        else body = body.slice(0, at);
      }
      const got = found(body);
      if (got !== null) read++;
      // What it reads, JSON.parse reads; what it does not, the general path answers.
      if (got !== null) expect(got, body).toEqual(parsed(body));
    }
    // Some mutations keep a valid call (a space, a digit in the id): the check is not vacuous.
    expect(read).toBeGreaterThan(100);
  });
});

describe('POST /mcp lookup calls', () => {
  let dir: string;
  let snap: ServingSnapshot;
  let codes: string[];

  beforeAll(async () => {
    ({ dir, snap, codes } = await syntheticServing(12));
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('are answered as the same message in a batch of one is, through the general path', () => {
    const endpoint = new McpEndpoint(serverInfo('test'), () => snap);
    const text = (r: ReturnType<McpEndpoint['answer']>) => {
      if (r instanceof Promise) throw new Error('a lookup is answered synchronously');
      expect(r.status).toBe(200);
      return Buffer.from(r.body).toString('utf8');
    };
    for (const tool of TOOLS)
      for (const [k, code] of codes.entries()) {
        const id = k % 2 === 0 ? k : `id-${k}`;
        const body = k % 3 === 0 ? sdkOrder(id, tool, code) : canonical(id, tool, code);
        // Read as a lookup of this fund, so the answer below is the lookup path's.
        const c = readLookupCall(Buffer.from(body))!;
        expect(snap.lookup.findBytes(Buffer.from(body), c.codeStart, c.codeEnd)).toBe(k);
        const one = text(endpoint.answer(Buffer.from(body), 'application/json', ''));
        const batch = text(endpoint.answer(Buffer.from(`[${body}]`), 'application/json', ''));
        expect(`[${one}]`, body).toBe(batch);
      }
  });

  it('an unsupported MCP-Protocol-Version is refused as on the general path', () => {
    const endpoint = new McpEndpoint(serverInfo('test'), () => snap);
    const r = endpoint.answer(
      Buffer.from(canonical(1, 'getFund', codes[0])),
      'application/json',
      '1999-01-01',
    );
    expect(r instanceof Promise ? null : r.status).toBe(400);
  });
});
