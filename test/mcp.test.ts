/**
 * The MCP endpoint end to end: a real `fundreturns serve` process spoken to by the
 * SDK's own Client over StreamableHTTPClientTransport (real HTTP), and `fundreturns
 * mcp --stdio` through the SDK's stdio client. Every tool's answer is compared with
 * the REST answer for the same input: one implementation behind both (C30, SPEC 4).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCurrent } from '../core/snapshot/directory.js';
import { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import {
  CLI,
  cli,
  E2E_DATA_END,
  generateAndBuild,
  rawConnection,
  type ServerProcess,
  schemaErrors,
  setupAccess,
  spawnCli,
  startServe,
  type TestAccess,
  tempDir,
  waitFor,
} from './harness.js';

const TOOL_NAMES = [
  'searchFunds',
  'getFund',
  'getTrailingReturns',
  'batchTrailingReturns',
  'getCalendarReturns',
  'batchCalendarReturns',
  'getRiskFigures',
  'screenFunds',
  'compareFunds',
  'getGrowth',
];
const MCP_ACCEPT = 'application/json, text/event-stream';

let dir: string;
let snapshots: string;
let server: ServerProcess;
let empty: ServerProcess;
let lookup: SnapshotLookup;
let codes: string[];
let client: Client;
let access: TestAccess;
let emptyAccess: TestAccess;

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'fundreturns-test', version: '0.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return c;
}

beforeAll(async () => {
  dir = tempDir('mcp');
  ({ snapshots } = generateAndBuild(dir, 120));
  lookup = new SnapshotLookup((await loadSnapshot(join(snapshots, readCurrent(snapshots)!))).columns);
  codes = lookup.cols.funds.code;
  const none = join(dir, 'none');
  mkdirSync(none);
  access = setupAccess(dir);
  // One server per embedded store: the snapshot-less server has its own.
  emptyAccess = setupAccess(join(dir, 'empty'));
  [server, empty] = await Promise.all([
    startServe([...access.flags, '--snapshots', snapshots, '--threads', '2']),
    startServe([...emptyAccess.flags, '--snapshots', none, '--threads', '1']),
  ]);
  client = await connect(server.url, access.headers);
});

afterAll(async () => {
  await client?.close();
  await Promise.all([server?.stop(), empty?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

async function rest(path: string, body?: unknown): Promise<unknown> {
  const r = await fetch(
    server.url + path,
    body === undefined
      ? { headers: access.headers }
      : {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { ...access.headers, 'content-type': 'application/json' },
        },
  );
  expect(r.status, path).toBe(200);
  return r.json();
}

async function call(name: string, args: Record<string, unknown>, c = client): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

/** The rendering: the last text block (a success's first is its structured content as JSON). */
const textOf = (r: CallToolResult) =>
  (r.content[r.content.length - 1] as { type: 'text'; text: string }).text;

/** A fund with a calendar row for 2020. */
function richFund(): string {
  return codes.find((c) => lookup.calendarYearJson(lookup.find(c), 2020) !== null)!;
}

/** Funds with data on or before `day`. */
function fundsSince(day: string, n: number): string[] {
  return codes
    .filter((c) => {
      const f = JSON.parse(lookup.fundJson(lookup.find(c))) as { min_return_date: string | null };
      return f.min_return_date !== null && f.min_return_date <= day;
    })
    .slice(0, n);
}

describe('protocol', () => {
  it('initialize gives our name, version, instructions and the tools capability', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'fundreturns', version: '1.0.0' });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toMatch(/percent/);
    expect(instructions).toMatch(/not investment advice/);
    expect(instructions).toMatch(/searchFunds first/);
  });

  it('ping answers', async () => {
    expect(await client.ping()).toEqual({});
  });

  it('tools/list: every tool, valid JSON Schemas from schemas/, read-only annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    const ajv = new Ajv2020({ strict: false });
    for (const t of tools) {
      expect(ajv.validateSchema(t.inputSchema), `${t.name} input`).toBe(true);
      expect(ajv.validateSchema(t.outputSchema!), `${t.name} output`).toBe(true);
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema!.type).toBe('object');
      expect(t.annotations).toMatchObject({
        readOnlyHint: true,
        idempotentHint: true,
        openWorldHint: false,
        destructiveHint: false,
      });
      expect(t.description).toMatch(/not investment advice|searchFunds/);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('getTrailingReturns')!.description).toMatch(/percent/);
    expect(byName.get('getTrailingReturns')!.description).toMatch(/batchTrailingReturns/);
    expect(byName.get('getTrailingReturns')!.inputSchema.required).toEqual(['code']);
    expect(byName.get('batchTrailingReturns')!.inputSchema.properties!.codes).toMatchObject({
      maxItems: 100,
    });
    expect(byName.get('searchFunds')!.outputSchema!.required).toEqual(['data', 'next_cursor']);
  });

  it('GET, DELETE and PUT on /mcp are 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const r = await fetch(`${server.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
      expect(await r.json()).toEqual({ detail: 'Method Not Allowed' });
    }
  });

  it('HEAD answers have no body and keep the connection: /mcp and a POST-only route (405), /healthz (200)', async () => {
    const conn = await rawConnection(server.port);
    // Two HEADs then a GET on one connection: a body after a HEAD would be read as the next response.
    conn.write(
      'HEAD /mcp HTTP/1.1\r\nHost: x\r\n\r\n' +
        'HEAD /v1/trailing-returns/batch HTTP/1.1\r\nHost: x\r\n\r\n' +
        'HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    await waitFor(() => /"status":/.test(conn.received()), 10_000, 'the third response');
    conn.close();
    const heads = conn.received().split('HTTP/1.1 ').slice(1);
    expect(heads.map((h) => h.slice(0, 3))).toEqual(['405', '405', '200', '200']);
    expect(heads[2]).toMatch(/Content-Length: \d+\r\n/i);
    expect(heads[0]).toMatch(/\r\n\r\n$/);
    expect(heads[0]).toMatch(/Allow: POST/i);
    expect(heads[1]).toMatch(/\r\n\r\n$/);
  });

  it('a malformed Host header does not matter: the call is answered (RFC 9112 leaves it to us; REST ignores it too)', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const conn = await rawConnection(server.port);
    conn.write(
      `POST /mcp HTTP/1.1\r\nHost: a b\r\nAuthorization: Bearer ${access.key}\r\n` +
        `Content-Type: application/json\r\nAccept: ${MCP_ACCEPT}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await waitFor(() => conn.received().includes('"jsonrpc"'), 10_000, 'the answer');
    conn.close();
    const got = conn.received();
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got).toContain('"result":{}');
    expect(server.logs()).not.toMatch(/Failed to parse URL/);
  });

  it('a large answer (tools/list) is gzip-compressed when the client accepts it, like REST', async () => {
    const post = (encoding: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          ...access.headers,
          'content-type': 'application/json',
          accept: MCP_ACCEPT,
          'accept-encoding': encoding,
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      });
    const zipped = await post('gzip');
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    const plain = await post('identity');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await zipped.json()).toEqual(await plain.json());
  });

  it('any Accept that takes JSON is enough (answers are always JSON); one that refuses JSON is 406', async () => {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const post = (accept?: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          ...access.headers,
          'content-type': 'application/json',
          ...(accept === undefined ? {} : { accept }),
        },
        body: ping,
      });
    for (const accept of [
      undefined,
      '*/*',
      'APPLICATION/JSON, TEXT/EVENT-STREAM',
      'application/json',
      'application/*',
    ]) {
      const r = await post(accept);
      expect(r.status, String(accept)).toBe(200);
      expect(await r.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    }
    for (const accept of ['text/event-stream', 'application/json;q=0', 'application/msgpack']) {
      const r = await post(accept);
      expect(r.status, accept).toBe(406);
      // Not the SDK's "must accept both application/json and text/event-stream": JSON is all it takes.
      const body = (await r.json()) as { error: { code: number; message: string } };
      expect(body.error.message).toMatch(/application\/json only/);
      expect(body.error.message).not.toMatch(/both/);
      // Counted like any answered request (C30): it carries the RateLimit fields.
      expect(r.headers.get('ratelimit')).not.toBeNull();
    }
  });

  it("a browser Origin other than the base URL's is 403 before the key is checked, and counts nothing (MCP DNS-rebinding rule)", async () => {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const post = (origin?: string, key = true) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          ...(key ? access.headers : {}),
          'content-type': 'application/json',
          accept: MCP_ACCEPT,
          ...(origin === undefined ? {} : { origin }),
        },
        body: ping,
      });
    const quotaLeft = (r: Response) => Number(/"quota";r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')![1]);
    const before = quotaLeft(await post());
    for (const origin of ['http://evil.example', 'null', 'not an origin', `${server.url}.evil.example`]) {
      for (const key of [true, false]) {
        const r = await post(origin, key);
        expect(r.status, origin).toBe(403);
        expect(r.headers.get('content-type')).toBe('application/json');
        expect(r.headers.get('ratelimit')).toBeNull();
        const body = (await r.json()) as {
          jsonrpc: string;
          id: unknown;
          error: { code: number; message: string };
        };
        expect(body.jsonrpc).toBe('2.0');
        expect(body.id).toBeNull();
        expect(body.error.code).toBe(-32000);
        expect(body.error.message).toContain(JSON.stringify(origin));
        expect(body.error.message).toMatch(/--mcp-origins/);
      }
    }
    // The API's own origin, in any case and with its port spelled out, is a browser page of ours.
    const own = new URL(server.url);
    for (const origin of [own.origin, own.origin.toUpperCase()]) {
      const r = await post(origin);
      expect(r.status, origin).toBe(200);
      expect(await r.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    }
    // Only the three admitted requests after the first counted.
    expect(quotaLeft(await post())).toBe(before - 3);
  });

  it('a batch is answered with one entry per request: invalid elements get their own -32600, the rest are served (JSON-RPC 2.0 §6)', async () => {
    const headers = { ...access.headers, 'content-type': 'application/json', accept: MCP_ACCEPT };
    const post = async (body: unknown) => {
      const r = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as unknown };
    };
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const mixed = await post([ping(1), { jsonrpc: '1.0', id: 2, method: 'ping' }, 5]);
    expect(mixed.status).toBe(200);
    expect(mixed.body).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, error: { code: -32600, message: expect.stringMatching(/batch element 1/) } },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/batch element 2/) },
      },
    ]);
    // One request and a notification: still an array, not the bare object the SDK sends.
    const one = await post([ping(7), { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(one).toEqual({ status: 200, body: [{ jsonrpc: '2.0', id: 7, result: {} }] });
    // initialize must come alone (MCP lifecycle), and the refusal says so.
    const init = {
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'a', version: '1' } },
    };
    const withInit = await post([ping(1), init]);
    expect(withInit.status).toBe(400);
    expect(withInit.body).toMatchObject({
      error: { code: -32600, message: /initialize must be sent alone/ },
    });
  });

  it('initialize with missing or wrong params is -32602 Invalid params naming the field, not -32603', async () => {
    const headers = { ...access.headers, 'content-type': 'application/json', accept: MCP_ACCEPT };
    for (const [params, field] of [
      [undefined, /params: /],
      [{ protocolVersion: '2025-03-26' }, /params\.clientInfo: /],
      [
        { protocolVersion: 7, capabilities: {}, clientInfo: { name: 'a', version: '1' } },
        /params\.protocolVersion: /,
      ],
    ] as const) {
      const r = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params }),
      });
      const body = (await r.json()) as { id: number; error: { code: number; message: string } };
      expect(body.id).toBe(9);
      expect(body.error.code, JSON.stringify(params)).toBe(-32602);
      expect(body.error.message).toMatch(/^Invalid params: /);
      expect(body.error.message).toMatch(field);
      expect(body.error.message).not.toContain('\n');
    }
  });

  it('a body that is not JSON is a JSON-RPC parse error; over 1 MiB is 413', async () => {
    const headers = { ...access.headers, 'content-type': 'application/json', accept: MCP_ACCEPT };
    const bad = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: '{nope' });
    expect(bad.status).toBe(400);
    const parseError = (await bad.json()) as { error: { code: number } };
    expect(parseError.error.code).toBe(-32700);
    // As /openapi.json documents it.
    expect(schemaErrors('JsonRpcError', parseError)).toBeNull();
    // JSON, but not a JSON-RPC message: Invalid Request (JSON-RPC 2.0 §5.1), not a parse error.
    for (const text of ['{}', '[]', '"ping"', '{"jsonrpc":"2.0","id":null,"method":"ping"}']) {
      const r = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: text });
      expect(r.status, text).toBe(400);
      expect(await r.json(), text).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    }
    // A batch of nothing valid: one error per element, in an array (JSON-RPC 2.0 §6).
    const none = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: '[{"foo":1},2]' });
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject([
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: /batch element 0/ } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: /batch element 1/ } },
    ]);
    const big = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: 'x'.repeat((1 << 20) + 1),
    });
    expect(big.status).toBe(413);
    // Bytes that are not UTF-8 are a parse error, as REST's json_invalid (C21), not a call about U+FFFD.
    const latin = Buffer.concat([
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"',
      ),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}}'),
    ]);
    const notUtf8 = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: latin });
    expect(notUtf8.status).toBe(400);
    expect(await notUtf8.json()).toMatchObject({
      id: null,
      error: { code: -32700, message: /not valid UTF-8/ },
    });
  });

  it('responses carry X-Data-As-Of and Server-Timing', async () => {
    const r = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        ...access.headers,
        'content-type': 'application/json',
        accept: MCP_ACCEPT,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(await r.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(r.headers.get('x-data-as-of')).toBe(E2E_DATA_END);
    expect(r.headers.get('server-timing')).toMatch(/^mcp;dur=\d+\.\d{3}$/);
  });
});

describe('tools equal REST', () => {
  it('searchFunds equals GET /v1/funds, cursor included', async () => {
    const name = lookup.fundJson(5);
    const word = (JSON.parse(name) as { name: string }).name.split(' ')[0];
    const first = await call('searchFunds', { q: word, limit: 3 });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toEqual(await rest(`/v1/funds?q=${encodeURIComponent(word)}&limit=3`));
    const all = await call('searchFunds', { type: 'ETF', limit: 5 });
    const page = (await rest('/v1/funds?type=ETF&limit=5')) as { next_cursor: string };
    expect(all.structuredContent).toEqual(page);
    expect(textOf(all)).toContain(`cursor "${page.next_cursor}"`);
    const next = await call('searchFunds', { type: 'ETF', limit: 5, cursor: page.next_cursor });
    expect(next.structuredContent).toEqual(
      await rest(`/v1/funds?type=ETF&limit=5&cursor=${encodeURIComponent(page.next_cursor)}`),
    );
  });

  it('screenFunds, compareFunds and getGrowth equal their REST routes, validated by the SDK against outputSchema', async () => {
    // After tools/list the SDK's client checks each call's structuredContent against the tool's outputSchema.
    await client.listTools();
    const screen = await call('screenFunds', {
      return_1y_min: -20,
      sort: '-return_5y',
      limit: 5,
      fields: ['return_5y', 'history_years'],
    });
    expect(screen.isError, textOf(screen)).toBeFalsy();
    expect(screen.structuredContent).toEqual(
      await rest('/v1/screen?return_1y_min=-20&sort=-return_5y&limit=5&fields=return_5y,history_years'),
    );
    const some = codes.slice(0, 3);
    const compared = await call('compareFunds', { codes: some, fields: ['return_1y', 'return_3y'] });
    expect(compared.structuredContent).toEqual({
      rows: await rest(
        `/v1/compare?codes=${some.map(encodeURIComponent).join(',')}&fields=return_1y,return_3y`,
      ),
    });
    const growth = await call('getGrowth', { code: codes[0], interval: 'week' });
    expect(growth.structuredContent).toEqual(
      await rest(`/v1/funds/${encodeURIComponent(codes[0])}/growth?interval=week`),
    );
    const bad = await call('screenFunds', { sort: '-volatility_2y' });
    expect(bad.isError).toBe(true);
    // The snapshot has risk figures: a window that does not exist is named with the valid ones (C54).
    expect(textOf(bad)).toBe(
      'Invalid arguments for screenFunds: sort: Value error, volatility has no window 2y; its windows are 1y, 3y, 5y, 10y.',
    );
  });

  it('every answer also carries its structured content serialized, as the first text block (MCP 2025-06-18)', async () => {
    const code = codes[3];
    for (const [name, args] of [
      ['searchFunds', { limit: 2 }],
      ['getFund', { code }],
      ['getTrailingReturns', { code }],
      ['batchTrailingReturns', { codes: [code, 'NO-SUCH'] }],
      ['getCalendarReturns', { code: richFund() }],
      ['batchCalendarReturns', { codes: [code] }],
    ] as const) {
      const r = await call(name, args);
      expect(r.isError, name).toBeFalsy();
      expect(r.content, name).toHaveLength(2);
      expect(JSON.parse((r.content[0] as { text: string }).text), name).toEqual(r.structuredContent);
    }
  });

  it('getFund equals GET /v1/funds/{code}', async () => {
    const code = codes[3];
    const r = await call('getFund', { code, market: 'US' });
    expect(r.structuredContent).toEqual(await rest(`/v1/funds/${encodeURIComponent(code)}`));
    expect(textOf(r)).toContain(code);
  });

  it('getTrailingReturns equals REST, latest and as_of; the text has the figures in percent', async () => {
    const some = fundsSince('2020-06-12', 5);
    expect(some).toHaveLength(5);
    for (const code of some) {
      const r = await call('getTrailingReturns', { code });
      const row = (await rest(`/v1/funds/${encodeURIComponent(code)}/trailing-returns`)) as Record<
        string,
        unknown
      >;
      expect(r.structuredContent).toEqual(row);
      expect(textOf(r)).toContain(`${code} as of ${row.as_of_date}`);
      if (row.return_1y !== null) expect(textOf(r)).toContain(`1Y ${row.return_1y}%`);
      const at = await call('getTrailingReturns', { code, as_of: '2020-06-13' });
      expect(at.structuredContent).toEqual(
        await rest(`/v1/funds/${encodeURIComponent(code)}/trailing-returns?as_of=2020-06-13`),
      );
    }
  });

  it('batchTrailingReturns equals the REST batch under rows, and names the misses', async () => {
    const [a, b] = fundsSince('2021-03-01', 2);
    const body = { codes: [b, 'NO-SUCH', codes[0], a, b], as_of: '2021-03-31' };
    const r = await call('batchTrailingReturns', body);
    expect(r.structuredContent).toEqual({ rows: await rest('/v1/trailing-returns/batch', body) });
    expect(textOf(r)).toContain('NO-SUCH');
    const latest = await call('batchTrailingReturns', { codes: codes.slice(0, 10) });
    expect(latest.structuredContent).toEqual({
      rows: await rest('/v1/trailing-returns/batch', { codes: codes.slice(0, 10) }),
    });
  });

  it('getCalendarReturns equals REST, default and explicit year', async () => {
    const code = richFund();
    const path = `/v1/funds/${encodeURIComponent(code)}/calendar-returns`;
    expect((await call('getCalendarReturns', { code })).structuredContent).toEqual(await rest(path));
    const y = await call('getCalendarReturns', { code, year: 2020 });
    expect(y.structuredContent).toEqual(await rest(`${path}?year=2020`));
    expect(textOf(y)).toMatch(new RegExp(`^${code} 2020 total return (-?\\d+\\.\\d{4}%|n/a)`));
  });

  it('batchCalendarReturns equals the REST batch under rows', async () => {
    const body = { codes: codes.slice(0, 20), year: 2020 };
    const r = await call('batchCalendarReturns', body);
    expect(r.structuredContent).toEqual({ rows: await rest('/v1/calendar-returns/batch', body) });
    const plain = await call('batchCalendarReturns', { codes: codes.slice(0, 3) });
    expect(plain.structuredContent).toEqual({
      rows: await rest('/v1/calendar-returns/batch', { codes: codes.slice(0, 3) }),
    });
  });
});

describe('arguments written as REST would take them', () => {
  it('are read as REST reads the same text in its query (Pydantic lax mode): limit "5", year " 2020 "', async () => {
    const code = richFund();
    const asNumber = await call('getCalendarReturns', { code, year: 2020 });
    expect((await call('getCalendarReturns', { code, year: ' 2020 ' })).structuredContent).toEqual(
      asNumber.structuredContent,
    );
    const page = await call('searchFunds', { limit: '5' });
    expect(page.isError).toBeUndefined();
    expect(page.structuredContent).toEqual(await rest('/v1/funds?limit=5'));
    const batch = await call('batchCalendarReturns', { codes: codes.slice(0, 5), year: '2020' });
    expect(batch.structuredContent).toEqual({
      rows: await rest('/v1/calendar-returns/batch', { codes: codes.slice(0, 5), year: 2020 }),
    });
    // The rules still hold once read: "0" is below the minimum, as 0 is.
    expect(textOf(await call('searchFunds', { limit: '0' }))).toMatch(/limit: must be >= 1/);
    // Any size is capped as REST caps it, as a string or as a number JSON cannot print plainly.
    const capped = await rest('/v1/funds?limit=1000');
    for (const limit of ['9007199254740993', 1e21, 1e308])
      expect((await call('searchFunds', { limit })).structuredContent, String(limit)).toEqual(capped);
  });

  it('a date written as a midnight datetime is read as REST reads it; any other time is still refused', async () => {
    const code = richFund();
    const path = `/v1/funds/${encodeURIComponent(code)}/trailing-returns`;
    const r = await call('getTrailingReturns', { code, as_of: '2020-06-30T00:00:00Z' });
    expect(r.structuredContent).toEqual(await rest(`${path}?as_of=2020-06-30T00:00:00Z`));
    expect(r.structuredContent).toEqual(await rest(`${path}?as_of=2020-06-30`));
    const batch = await call('batchTrailingReturns', { codes: codes.slice(0, 5), as_of: '2020-06-30 00:00' });
    expect(batch.structuredContent).toEqual({
      rows: await rest('/v1/trailing-returns/batch', { codes: codes.slice(0, 5), as_of: '2020-06-30' }),
    });
    // A JSON number is a Unix timestamp, as REST's batch body reads it: 2020-06-30T00:00:00Z.
    const stamped = await call('batchTrailingReturns', { codes: codes.slice(0, 5), as_of: 1593475200 });
    expect(stamped.structuredContent).toEqual(batch.structuredContent);
    expect(await rest('/v1/trailing-returns/batch', { codes: codes.slice(0, 5), as_of: 1593475200 })).toEqual(
      (batch.structuredContent as { rows: unknown }).rows,
    );
    const late = await call('getTrailingReturns', { code, as_of: '2020-06-30T09:30:00' });
    expect(late.isError).toBe(true);
    expect(textOf(late)).toMatch(
      /as_of: must be a calendar date YYYY-MM-DD: Datetimes provided to dates should have zero time/,
    );
  });
});

describe('errors', () => {
  it('bad arguments are a tool error naming the field and the rule', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['getTrailingReturns', {}, /code: is required/],
      [
        'getTrailingReturns',
        { code: 'A', as_of: '2024-02-30' },
        /as_of: must be a calendar date YYYY-MM-DD: day value is outside expected range/,
      ],
      ['getFund', { code: '' }, /code: must NOT have fewer than 1 characters/],
      ['getCalendarReturns', { code: 'A', year: 1800 }, /year: must be >= 1900/],
      ['getCalendarReturns', { code: 'A', year: '20x0' }, /year: must be an integer \(got "20x0"\)/],
      ['searchFunds', { limit: '2.5' }, /limit: must be an integer \(got "2.5"\)/],
      ['searchFunds', { limit: 0 }, /limit: must be >= 1/],
      ['searchFunds', { type: 'STOCK' }, /type: must be one of "ETF", "FUND" \(got "STOCK"\)/],
      ['searchFunds', { cursor: '!!!' }, /cursor: .*next_cursor/],
      ['batchTrailingReturns', { codes: [] }, /codes: must have at least 1 item\(s\)/],
      [
        'batchTrailingReturns',
        { codes: Array.from({ length: 101 }, (_, i) => `C${i}`) },
        /codes: must have at most 100 items/,
      ],
      ['batchCalendarReturns', { codes: ['A', 7] }, /codes\[1\]: must be a string/],
    ];
    for (const [name, args, re] of cases) {
      const r = await call(name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(textOf(r)).toMatch(/^Invalid arguments for /);
      expect(textOf(r)).toMatch(re);
    }
  });

  it('an unknown tool is a JSON-RPC error (-32602)', async () => {
    const e = await client.callTool({ name: 'getPrices', arguments: {} }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((e as McpError).message).toBe('MCP error -32602: Unknown tool: getPrices');
  });

  it('a malformed tools/call (no name, arguments not an object) is -32602 Invalid params, not -32603', async () => {
    for (const params of [{ arguments: [] }, { name: 5 }, { name: 'getFund', arguments: 'x' }, undefined]) {
      const r = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { ...access.headers, 'content-type': 'application/json', accept: MCP_ACCEPT },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
      });
      const body = (await r.json()) as { id: number; error: { code: number; message: string } };
      expect(body.id, JSON.stringify(params)).toBe(7);
      expect(body.error.code, JSON.stringify(params)).toBe(ErrorCode.InvalidParams);
      // One line naming the fields, not the SDK's Zod dump.
      expect(body.error.message, JSON.stringify(params)).toMatch(/^Invalid params: params[.\w]*: [^\n{]+$/);
    }
  });

  it('an unknown fund or a missing row is a tool error with a sentence', async () => {
    const unknown = await call('getFund', { code: 'NO-SUCH' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^No fund with code NO-SUCH\. Use searchFunds/);
    const early = await call('getTrailingReturns', { code: codes[0], as_of: '1980-01-02' });
    expect(early.isError).toBe(true);
    expect(textOf(early)).toMatch(/has no data on or before 1980-01-02/);
    const year = await call('getCalendarReturns', { code: codes[0], year: 1950 });
    expect(year.isError).toBe(true);
    expect(textOf(year)).toMatch(/no calendar-year return for 1950/);
  });

  it('no snapshot: initialize and tools/list work, tools/call is HTTP 503 No data loaded (C24)', async () => {
    const c = await connect(empty.url, emptyAccess.headers);
    try {
      expect((await c.listTools()).tools).toHaveLength(TOOL_NAMES.length);
      const e = await c.callTool({ name: 'getFund', arguments: { code: 'A' } }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StreamableHTTPError);
      expect((e as StreamableHTTPError).code).toBe(503);
    } finally {
      await c.close();
    }
    const r = await fetch(`${empty.url}/mcp`, {
      method: 'POST',
      headers: { ...emptyAccess.headers, 'content-type': 'application/json', accept: MCP_ACCEPT },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getFund' } }),
    });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('30');
    expect(await r.json()).toEqual({ detail: 'No data loaded' });
    // A tool that does not exist is -32602 with or without data: retrying would not help.
    const unknown = await fetch(`${empty.url}/mcp`, {
      method: 'POST',
      headers: { ...emptyAccess.headers, 'content-type': 'application/json', accept: MCP_ACCEPT },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getPrices' } }),
    });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({
      error: { code: -32602, message: 'Unknown tool: getPrices' },
    });
  });
});

/** The same keys and limits as REST (C22, C29, C30). */
describe('keys and metering', () => {
  const ready = true;
  let authed: ServerProcess;
  let key = '';

  beforeAll(async () => {
    if (!ready) return;
    const store = join(dir, 'store2');
    expect(cli(['accounts', 'create', 'acme', '--plan', 'free', '--store', store]).status).toBe(0);
    const k = cli(['keys', 'create', 'acme', '--json', '--store', store]);
    expect(k.status).toBe(0);
    key = (JSON.parse(k.stdout) as { key: string }).key;
    authed = await startServe(['--snapshots', snapshots, '--threads', '1', '--store', store]);
  });

  afterAll(async () => {
    await authed?.stop();
  });

  it.skipIf(!ready)(
    'a missing or wrong key is 401 problem+json with WWW-Authenticate, before MCP',
    async () => {
      for (const auth of [undefined, 'Bearer fr_live_wrong']) {
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: MCP_ACCEPT };
        if (auth) headers.authorization = auth;
        // A body MCP would reject: the 401 must come first.
        const r = await fetch(`${authed.url}/mcp`, { method: 'POST', headers, body: '{nope' });
        expect(r.status).toBe(401);
        expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
        const p = (await r.json()) as { status: number; instance: string; type: string };
        expect(p.status).toBe(401);
        expect(p.instance).toBe('/mcp');
        expect(p.type).toMatch(/\/problems\/unauthorized$/);
      }
      await expect(connect(authed.url)).rejects.toThrow();
    },
  );

  it.skipIf(!ready)('every HTTP request to /mcp counts one (C29, C30)', async () => {
    const left: number[] = [];
    const c = new Client({ name: 'meter', version: '0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${authed.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (input, init) => {
        const r = await fetch(input, init);
        const m = /"burst";r=(\d+)/.exec(r.headers.get('ratelimit') ?? '');
        if (init?.method === 'POST') {
          expect(r.headers.get('ratelimit-policy')).toMatch(/"burst";q=100;w=60/);
          left.push(Number(m![1]));
        }
        return r;
      },
    });
    await c.connect(transport); // initialize + notifications/initialized: two POSTs
    await c.listTools();
    await call('getTrailingReturns', { code: codes[0] }, c);
    await call('batchTrailingReturns', { codes: codes.slice(0, 50) }, c);
    await c.close();
    expect(left).toHaveLength(5);
    for (let k = 1; k < left.length; k++) expect(left[k]).toBe(left[k - 1] - 1);
  });
});

describe('stdio mode', () => {
  it('`fundreturns mcp --stdio` serves the same tools from a local snapshot, stdout JSON-RPC only', async () => {
    const errors: Error[] = [];
    const c = new Client({ name: 'desktop', version: '0' });
    c.onerror = (e) => errors.push(e);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--stdio', '--snapshots', snapshots],
      stderr: 'pipe',
    });
    await c.connect(transport);
    try {
      expect(c.getServerVersion()?.name).toBe('fundreturns');
      expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      const code = codes[1];
      const r = (await c.callTool({ name: 'getTrailingReturns', arguments: { code } })) as CallToolResult;
      expect(r.structuredContent).toEqual(
        await rest(`/v1/funds/${encodeURIComponent(code)}/trailing-returns`),
      );
      const b = (await c.callTool({
        name: 'batchCalendarReturns',
        arguments: { codes: codes.slice(0, 5), year: 2020 },
      })) as CallToolResult;
      expect(b.structuredContent).toEqual({
        rows: await rest('/v1/calendar-returns/batch', { codes: codes.slice(0, 5), year: 2020 }),
      });
      const bad = (await c.callTool({ name: 'getFund', arguments: { code: 'NO-SUCH' } })) as CallToolResult;
      expect(bad.isError).toBe(true);
    } finally {
      await c.close();
    }
    expect(errors).toEqual([]);
  });

  it('stdio: a line that is not one JSON-RPC message gets an error with id null, and the session goes on', async () => {
    const { child, stdout, exited } = spawnCli(['mcp', '--stdio', '--snapshots', snapshots]);
    child.stdin!.write(
      [
        'not json',
        '{}',
        '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
        '{"jsonrpc":"2.0","id":null,"method":"ping"}',
        '{"jsonrpc":"2.0","id":3,"method":"ping"}',
      ].join('\n') + '\n',
    );
    await waitFor(() => stdout().includes('"id":3'), 15_000, 'the answer to id 3');
    child.stdin!.end();
    expect(await exited).toEqual([0, null]);
    const lines = stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number } });
    expect(lines.map((l) => [l.id, l.error?.code ?? 'ok'])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
      [null, -32600],
      [3, 'ok'],
    ]);
    // The message says what a message must be, and that a batch is not one here.
    const messages = lines.slice(1, 4).map((l) => (l as { error?: { message: string } }).error!.message);
    for (const m of messages)
      expect(m).toMatch(/^Invalid Request: not a JSON-RPC 2\.0 message .*no batches over stdio$/);
  });

  it('stdio: a last message without a newline is answered; the instructions speak of no HTTP limits', async () => {
    const { child, stdout, exited } = spawnCli(['mcp', '--stdio', '--snapshots', snapshots]);
    child.stdin!.end(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      })}\n{"jsonrpc":"2.0","id":2,"method":"ping"}`,
    );
    expect(await exited).toEqual([0, null]);
    const lines = stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result: { instructions?: string } });
    expect(lines.map((l) => l.id)).toEqual([1, 2]);
    expect(lines[0].result.instructions).toMatch(/searchFunds/);
    expect(lines[0].result.instructions).not.toMatch(/HTTP|plan limits/);
  });

  it('stdio: a line over 10 MiB ends the process with a message and exit 1, not silence', async () => {
    const { child, stderr, exited } = spawnCli(['mcp', '--stdio', '--snapshots', snapshots]);
    child.stdin!.write('x'.repeat(11 * 1024 * 1024));
    expect(await exited).toEqual([1, null]);
    expect(stderr()).toMatch(/a message over 10 MiB/);
  });

  it('`fundreturns mcp` without --stdio is a usage error', () => {
    const r = cli(['mcp', '--snapshots', snapshots]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--stdio/);
    expect(r.stdout).toBe('');
  });
});
