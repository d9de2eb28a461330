/**
 * Risk figures end to end (C38–C46): a real `fundreturns serve --benchmark` on a
 * generated universe (which carries a rates file, C41), over REST with keys and the
 * 422 style of C20, and over MCP with the SDK's own client, whose structuredContent is
 * validated against the tool's outputSchema. The figures themselves are checked
 * against an independent calculation in server/api/risk.test.ts.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCurrent } from '../core/snapshot/directory.js';
import { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import {
  E2E_DATA_END,
  generateAndBuild,
  type ServerProcess,
  schemaErrors,
  setupAccess,
  startServe,
  type TestAccess,
  tempDir,
} from './harness.js';

let dir: string;
let server: ServerProcess;
let access: TestAccess;
let client: Client;
let long: string[];
let bench: string;

beforeAll(async () => {
  dir = tempDir('risk');
  const { snapshots } = generateAndBuild(dir, 40);
  const lookup = new SnapshotLookup((await loadSnapshot(join(snapshots, readCurrent(snapshots)!))).columns);
  // Funds with more than ten years of history, so that every window has figures.
  const f = lookup.cols.funds;
  long = f.code.filter(
    (_, i) => lookup.cols.series.date[f.seriesOffset[i]] < lookup.cols.trailing.asOf[i] - 11 * 366,
  );
  bench = long[0];
  access = setupAccess(dir);
  server = await startServe([
    ...access.flags,
    '--snapshots',
    snapshots,
    '--threads',
    '1',
    '--benchmark',
    bench,
  ]);
  client = new Client({ name: 'fundreturns-risk-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: access.headers },
    }),
  );
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field in the assertions, their shape checked by schemaErrors
type Json = any;
const json = (r: Response): Promise<Json> => r.json();

const get = (path: string, headers = access.headers) => fetch(server.url + path, { headers });
const post = (path: string, body: unknown) =>
  fetch(server.url + path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { ...access.headers, 'content-type': 'application/json' },
  });

describe('GET /v1/funds/{code}/risk and POST /v1/risk/batch', () => {
  it('answers a RiskFigures row with every key, against the server default benchmark, with the data headers', async () => {
    expect(long.length).toBeGreaterThan(2);
    const r = await get(`/v1/funds/${long[1]}/risk`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-data-as-of')).toBe(E2E_DATA_END);
    expect(r.headers.get('ratelimit')).toMatch(/"burst";r=\d+/);
    const row = await json(r);
    expect(schemaErrors('RiskFigures', row)).toBeNull();
    expect(row.benchmark).toBe(bench);
    // The generated source carries rates (C41): a 10-year fund has every figure.
    for (const w of ['1y', '3y', '5y', '10y']) {
      expect(row.windows[w].volatility, w).toMatch(/^\d+\.\d{4}$/);
      expect(row.windows[w].sharpe, w).not.toBeNull();
      expect(row.windows[w].beta, w).not.toBeNull();
    }
    const self = await json(await get(`/v1/funds/${bench}/risk`));
    expect(self.windows['5y'].beta).toBe('1.0000');
  });

  it('as_of anchors on the last observation on or before it (C3); before the first one it is a 404', async () => {
    const r = await json(await get(`/v1/funds/${long[1]}/risk?as_of=2020-02-01&benchmark=${long[2]}`));
    expect(r.as_of_date).toBe('2020-01-31');
    expect(r.benchmark).toBe(long[2]);
    expect(r.windows['1y']).toMatchObject({ start_month: '2019-02', end_month: '2020-01' });
    const none = await get(`/v1/funds/${long[1]}/risk?as_of=1990-01-01`);
    expect(none.status).toBe(404);
    expect(await json(none)).toEqual({ detail: `Fund ${long[1]} has no data on or before 1990-01-01` });
  });

  it('bad input is a 422 naming the parameter; an unknown benchmark names the benchmark (C20, C45)', async () => {
    const bad = await get(`/v1/funds/${long[1]}/risk?as_of=2024-02-30&benchmark=NOPE`);
    expect(bad.status).toBe(422);
    const detail = (await json(bad)).detail;
    expect(detail.map((d: { loc: string[] }) => d.loc)).toEqual([['query', 'as_of']]);
    const unknown = await get(`/v1/funds/${long[1]}/risk?benchmark=NOPE`);
    expect(unknown.status).toBe(422);
    expect((await json(unknown)).detail).toEqual([
      {
        type: 'value_error',
        loc: ['query', 'benchmark'],
        msg: 'Value error, benchmark NOPE is not a fund of this universe',
        input: 'NOPE',
        ctx: { error: 'benchmark NOPE is not a fund of this universe' },
      },
    ]);
    const many = await post('/v1/risk/batch', { codes: Array.from({ length: 101 }, (_, i) => `C${i}`) });
    expect(many.status).toBe(422);
    expect((await json(many)).detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'codes'] });
  });

  it('needs a key like every /v1 route (C25)', async () => {
    const r = await get(`/v1/funds/${long[1]}/risk`, {});
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('the batch answers in request order, misses left out (C16), each row the single answer', async () => {
    const r = await post('/v1/risk/batch', {
      codes: [long[2], 'NOPE', long[1], long[2]],
      as_of: '2022-06-30',
    });
    expect(r.status).toBe(200);
    const rows = await json(r);
    expect(schemaErrors('RiskFiguresList', rows)).toBeNull();
    expect(rows.map((x: { code: string }) => x.code)).toEqual([long[2], long[1]]);
    expect(rows[1]).toEqual(await json(await get(`/v1/funds/${long[1]}/risk?as_of=2022-06-30`)));
  });

  it('is in the OpenAPI document with real examples', async () => {
    const doc = await json(await fetch(`${server.url}/openapi.json`));
    expect(doc.paths['/v1/funds/{code}/risk'].get.operationId).toBe('getRiskFigures');
    expect(doc.paths['/v1/risk/batch'].post.operationId).toBe('batchRiskFigures');
    const example =
      doc.paths['/v1/funds/{code}/risk'].get.responses['200'].content['application/json'].example;
    expect(schemaErrors('RiskFigures', example)).toBeNull();
  });
});

describe('the getRiskFigures MCP tool, through the SDK client', () => {
  const validate = async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'getRiskFigures');
    expect(tool).toBeDefined();
    const ajv = new Ajv2020({ strict: false });
    addFormatsModule.default(ajv);
    return ajv.compile(tool!.outputSchema!);
  };

  it('one code or up to 100: structuredContent valid against outputSchema, the rows REST gives', async () => {
    const check = await validate();
    const one = (await client.callTool({
      name: 'getRiskFigures',
      arguments: { code: long[1] },
    })) as CallToolResult;
    expect(one.isError).toBeFalsy();
    expect(check(one.structuredContent), JSON.stringify(check.errors)).toBe(true);
    const rest = await json(await get(`/v1/funds/${long[1]}/risk`));
    expect(one.structuredContent).toEqual({ rows: [rest] });
    const text = (one.content[one.content.length - 1] as { text: string }).text;
    expect(text).toContain(`${long[1]} as of ${E2E_DATA_END}`);
    expect(text).toMatch(/10y \d{4}-\d{2}\.\.\d{4}-\d{2}: volatility \d+\.\d{4}%/);

    const many = (await client.callTool({
      name: 'getRiskFigures',
      arguments: { codes: [long[1], 'NOPE', long[2]], as_of: '2021-03-31', benchmark: long[2] },
    })) as CallToolResult;
    expect(check(many.structuredContent), JSON.stringify(check.errors)).toBe(true);
    const rows = (many.structuredContent as { rows: { code: string }[] }).rows;
    expect(rows.map((r) => r.code)).toEqual([long[1], long[2]]);
    expect((many.content[many.content.length - 1] as { text: string }).text).toContain(
      'No row (unknown code or no data): NOPE',
    );
  });

  it('bad arguments are tool errors naming them: neither or both of code and codes, an unknown benchmark', async () => {
    const neither = (await client.callTool({ name: 'getRiskFigures', arguments: {} })) as CallToolResult;
    expect(neither.isError).toBe(true);
    expect((neither.content[0] as { text: string }).text).toMatch(/give `code` .* or `codes`/);
    const both = (await client.callTool({
      name: 'getRiskFigures',
      arguments: { code: long[1], codes: [long[1]] },
    })) as CallToolResult;
    expect(both.isError).toBe(true);
    const unknown = (await client.callTool({
      name: 'getRiskFigures',
      arguments: { code: long[1], benchmark: 'NOPE' },
    })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect((unknown.content[0] as { text: string }).text).toContain(
      'benchmark NOPE is not a fund of this universe',
    );
  });
});
