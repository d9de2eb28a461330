/**
 * What MCP costs on top of a lookup, for one fund's latest trailing returns:
 *   (a) a whole tools/call through the endpoint minus the network and uWS: the body's
 *       bytes to McpEndpoint.answer (server/mcp/rpc.ts: JSON parse, the ajv checks of
 *       the message and the params, our argument check, the lookup, the text
 *       rendering, the answer's JSON);
 *   (b) the lookup alone: answers.getTrailing, as the REST route calls it.
 * (a) − (b) is the per-request MCP overhead. Parts of (a) are measured too, to
 * show where it goes. With `--url http://host:port`, also the p50 of tools/call
 * over real HTTP against a running `fundreturns serve` (sequential fetches).
 *
 *   npm run build && npx tsx bench/mcp.bench.ts [--snapshots /tmp/fr-bench/snapshots] [--url http://127.0.0.1:8080]
 */
import { Bench } from 'tinybench';
import * as answers from '../server/api/answers.js';
import { McpEndpoint } from '../server/mcp/rpc.js';
import { serverInfo } from '../server/mcp/server.js';
import { callTool } from '../server/mcp/tools.js';
import { benchArgs, servingSnapshot } from './setup.js';

const args = benchArgs();
const { snap, id: current } = await servingSnapshot(args);
const codes = snap.lookup.cols.funds.code;
const n = codes.length;
const info = serverInfo('bench');
let k = 0;
let sink = 0;

const endpoint = new McpEndpoint(info, () => snap);

/** The headers an SDK client sends after initialize. */
const HEADERS: Array<[string, string]> = [
  ['host', '127.0.0.1:8080'],
  ['accept', 'application/json, text/event-stream'],
  ['content-type', 'application/json'],
  ['mcp-protocol-version', '2025-11-25'],
  ['authorization', 'Bearer fr_live_0123456789abcdef0123456789abcdef'],
  ['user-agent', 'node'],
];
const message = (code: string) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'getTrailingReturns', arguments: { code } },
});
const bodyOf = (code: string) => Buffer.from(JSON.stringify(message(code)));

const bench = new Bench({ time: 2000, warmup: true });
bench
  .add('(a) tools/call getTrailingReturns through the endpoint (no network)', () => {
    const reply = endpoint.answer(bodyOf(codes[k++ % n]), 'application/json', '2025-11-25');
    if (reply instanceof Promise) throw new Error('tools/call went to the SDK server');
    sink += reply.body.length;
  })
  .add('(b) lookup alone: answers.getTrailing', () => {
    const a = answers.getTrailing(snap, codes[k++ % n], {});
    sink += a.status;
  })
  .add('part: callTool (argument check + lookup + parse + text)', () => {
    sink += callTool(snap, 'getTrailingReturns', { code: codes[k++ % n] }).content.length;
  });
await bench.run();

const rows = bench.tasks.map((t) => {
  const r = t.result as { latency?: { p50?: number; mean?: number }; throughput?: { mean?: number } };
  return {
    task: t.name,
    'p50 µs': ((r.latency?.p50 ?? Number.NaN) * 1000).toFixed(1),
    'mean µs': ((r.latency?.mean ?? Number.NaN) * 1000).toFixed(1),
    'ops/s': Math.round(r.throughput?.mean ?? 0),
  };
});
console.table(rows);
const p50 = (name: string) =>
  ((bench.tasks.find((t) => t.name.startsWith(name))!.result as { latency: { p50: number } }).latency.p50 ??
    0) * 1000;
console.log(
  `MCP overhead per tools/call (p50 of (a) − p50 of (b)): ${(p50('(a)') - p50('(b)')).toFixed(1)} µs ` +
    `on ${n} funds (${current})`,
);

const url = args.get('url');
if (url !== undefined) {
  const samples: number[] = [];
  const server: number[] = [];
  const rest: number[] = [];
  const post = (code: string) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: Object.fromEntries(HEADERS.filter(([h]) => h !== 'host')),
      body: bodyOf(code),
    });
  for (let i = 0; i < 200; i++) await (await post(codes[i % n])).arrayBuffer();
  for (let i = 0; i < 3000; i++) {
    const t0 = performance.now();
    const r = await post(codes[i % n]);
    await r.arrayBuffer();
    samples.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    server.push(Number(/dur=([\d.]+)/.exec(r.headers.get('server-timing') ?? '')?.[1]));
    // The same lookup over REST, as the floor of client + network + uWS.
    const t1 = performance.now();
    const g = await fetch(`${url}/v1/funds/${encodeURIComponent(codes[i % n])}/trailing-returns`, {
      headers: { authorization: HEADERS[4][1] },
    });
    await g.arrayBuffer();
    rest.push(performance.now() - t1);
  }
  const q = (xs: number[], p: number) => {
    const s = [...xs].sort((x, y) => x - y);
    return (s[Math.floor(p * (s.length - 1))] * 1000).toFixed(0);
  };
  const line = (xs: number[]) => `p50 ${q(xs, 0.5)} µs, p90 ${q(xs, 0.9)} µs, p99 ${q(xs, 0.99)} µs`;
  console.log(`tools/call server time (Server-Timing): ${line(server)}`);
  console.log(`tools/call client round trip (fetch, keep-alive, sequential): ${line(samples)}`);
  console.log(`REST GET trailing-returns round trip, same client: ${line(rest)}`);
}
if (sink === 42) console.log('');
