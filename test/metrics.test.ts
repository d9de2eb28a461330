/**
 * /metrics end to end (docs/monitoring.md): a real `fundreturns serve` with
 * an admin listener, sent a known set of requests; the scrape must parse with
 * Prometheus's own parser (`promtool check metrics`) and count exactly what was sent,
 * and the public port must not serve it.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRefresh } from '../core/refresh-stats.js';
import { readCurrent } from '../core/snapshot/directory.js';
import { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import {
  cli,
  clockAt,
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  type TestAccess,
  tempDir,
  waitFor,
} from './harness.js';
import { startServeWithMetrics } from './metrics-server.js';
import { toolForTest } from './system-tool.js';

let dir: string;
let server: ServerProcess;
let access: TestAccess;
let limitedKey: string;
let adminPort: number;
let codes: string[];
let snapshotsDir: string;
let sourceDir: string;

beforeAll(async () => {
  dir = tempDir('metrics');
  const { source, snapshots } = generateAndBuild(dir, 40);
  snapshotsDir = snapshots;
  sourceDir = source;
  codes = new SnapshotLookup((await loadSnapshot(join(snapshots, readCurrent(snapshots)!))).columns).cols
    .funds.code;
  // `business` never limits the test; `free` here allows one request a minute, so a second is a 429 (burst).
  access = setupAccess(dir, 'business', {
    business: { burst: 1_000_000, monthly: 100_000_000 },
    free: { burst: 1, monthly: 1000 },
  });
  const store = ['--store', access.store];
  expect(cli(['accounts', 'create', 'limited', '--plan', 'free', ...store]).status).toBe(0);
  const k = cli(['keys', 'create', 'limited', '--json', ...store]);
  limitedKey = (JSON.parse(k.stdout) as { key: string }).key;
  ({ server, adminPort } = await startServeWithMetrics([...access.flags, '--snapshots', snapshots]));
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const scrape = async () => {
  const r = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
};

/** The value of one sample, by metric name and exact label set as the text shows it. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n'))
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return undefined;
}

describe('the admin listener', () => {
  it('is not the public port: /metrics there is a 404 like any unknown path', async () => {
    const r = await fetch(`${server.url}/metrics`);
    expect(r.status).toBe(404);
    expect(server.logs()).toContain(`metrics on http://127.0.0.1:${adminPort}/metrics`);
  });

  it('counts exactly what it was sent: 3 trailing 200s, a 404, a 401, a 429, a 422 and one MCP tools/call', async () => {
    const code = codes[0];
    const trailing = `${server.url}/v1/funds/${code}/trailing-returns`;
    const auth = access.headers;
    // Two answered straight from the route callback (prepared row), one through the general path (MessagePack).
    expect((await fetch(trailing, { headers: auth })).status).toBe(200);
    expect((await fetch(trailing, { headers: auth })).status).toBe(200);
    expect((await fetch(trailing, { headers: { ...auth, accept: 'application/msgpack' } })).status).toBe(200);
    expect((await fetch(`${server.url}/no/such/path`, { headers: auth })).status).toBe(404);
    expect((await fetch(trailing)).status).toBe(401);
    expect((await fetch(`${trailing}?as_of=yesterday`, { headers: auth })).status).toBe(422);
    const limited = { authorization: `Bearer ${limitedKey}` };
    expect((await fetch(`${server.url}/v1/funds/${code}`, { headers: limited })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/funds/${code}`, { headers: limited })).status).toBe(429);
    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'getFund', arguments: { code } },
      }),
    });
    expect(mcp.status).toBe(200);
    expect(((await mcp.json()) as { result?: { isError?: boolean } }).result?.isError).not.toBe(true);

    const text = await scrape();
    const t = '/v1/funds/{code}/trailing-returns';
    const f = '/v1/funds/{code}';
    expect(sample(text, `fundreturns_http_requests_total{route="${t}",status_class="2xx"}`)).toBe(3);
    expect(sample(text, `fundreturns_http_requests_total{route="${t}",status_class="4xx"}`)).toBe(2);
    expect(sample(text, `fundreturns_http_unprocessable_total{route="${t}"}`)).toBe(1);
    expect(sample(text, `fundreturns_http_request_duration_seconds_count{route="${t}"}`)).toBe(5);
    expect(sample(text, `fundreturns_http_request_duration_seconds_bucket{route="${t}",le="+Inf"}`)).toBe(5);
    expect(sample(text, `fundreturns_http_requests_total{route="${f}",status_class="2xx"}`)).toBe(1);
    expect(sample(text, `fundreturns_http_requests_total{route="${f}",status_class="4xx"}`)).toBe(1);
    // The unknown path, and /metrics asked of the public port by the test before.
    expect(sample(text, 'fundreturns_http_requests_total{route="unmatched",status_class="4xx"}')).toBe(2);
    expect(sample(text, 'fundreturns_http_requests_total{route="/mcp",status_class="2xx"}')).toBe(1);
    expect(sample(text, 'fundreturns_gate_refusals_total{reason="unauthorized"}')).toBe(1);
    expect(sample(text, 'fundreturns_gate_refusals_total{reason="rate-limited"}')).toBe(1);
    expect(sample(text, 'fundreturns_gate_refusals_total{reason="forbidden"}')).toBe(0);
    expect(sample(text, 'fundreturns_gate_refusals_total{reason="quota-exceeded"}')).toBe(0);
    expect(sample(text, 'fundreturns_mcp_tool_calls_total{tool="getFund",result="ok"}')).toBe(1);
    expect(sample(text, 'fundreturns_mcp_tool_calls_total{tool="getFund",result="error"}')).toBe(0);
    expect(sample(text, 'fundreturns_http_internal_errors_total')).toBe(0);
    // Nothing else was answered: the classes over every route add up to the 11 requests.
    const all = text
      .split('\n')
      .filter((l) => l.startsWith('fundreturns_http_requests_total{'))
      .reduce((n, l) => n + Number(l.split(' ')[1]), 0);
    expect(all).toBe(10);
  });

  it('describes the snapshot, the build and every thread', async () => {
    const text = await scrape();
    const id = /fundreturns_snapshot_info\{id="([^"]+)",as_of="(\d{4}-\d{2}-\d{2})"\} 1/.exec(text);
    expect(id).not.toBeNull();
    expect(sample(text, 'fundreturns_snapshot_funds')).toBe(40);
    expect(sample(text, 'fundreturns_snapshot_freshness_limit_seconds')).toBe(120 * 3600);
    expect(sample(text, 'fundreturns_snapshot_as_of_timestamp_seconds')).toBe(
      Date.parse(`${id![2]}T00:00:00Z`) / 1000,
    );
    expect(sample(text, 'fundreturns_snapshot_age_seconds')).toBeGreaterThan(0);
    // The clock reads Monday 10:00 New York, the data ends Friday: no session is missing yet.
    expect(sample(text, 'fundreturns_snapshot_missing_sessions')).toBe(0);
    expect(text).not.toMatch(/^fundreturns_snapshot_first_missing_close_timestamp_seconds /m);
    expect(sample(text, 'fundreturns_snapshot_refused{reason=""}')).toBe(0);
    expect(text).toMatch(
      /^fundreturns_build_info\{version="[^"]+",node_version="\d+\.\d+\.\d+",commit="[^"]+"\} 1$/m,
    );
    for (const thread of ['main', 'worker-1', 'worker-2']) {
      expect(
        sample(text, `fundreturns_event_loop_delay_seconds{thread="${thread}",stat="p99"}`),
      ).toBeGreaterThanOrEqual(0);
      expect(sample(text, `fundreturns_heap_bytes{thread="${thread}",kind="used"}`)).toBeGreaterThan(0);
    }
    // No Redis here: nothing to say about it.
    expect(text).not.toMatch(/^fundreturns_redis_up\{/m);
  });

  it('counts the closed sessions the data lacks, from the first one’s close: what the overdue alert reads', async () => {
    // Data as of Friday; the clock at Tuesday 18:00 New York: Monday and Tuesday are missing.
    // Its own store: the suite's server holds the embedded one.
    const lateAccess = setupAccess(join(dir, 'late'));
    const late = await startServeWithMetrics([...lateAccess.flags, '--snapshots', snapshotsDir], {
      FUNDRETURNS_TEST_CLOCK: clockAt('2026-11-24T18:00:00-05:00'),
    });
    try {
      const text = await late.scrape();
      expect(sample(text, 'fundreturns_snapshot_missing_sessions')).toBe(2);
      expect(sample(text, 'fundreturns_snapshot_first_missing_close_timestamp_seconds')).toBe(
        Date.parse('2026-11-23T16:00:00-05:00') / 1000,
      );
    } finally {
      await late.server.stop();
    }
  });

  it("parses with Prometheus's own parser (promtool check metrics), our names lint-clean", async (ctx) => {
    if (!toolForTest('promtool', 'prometheus', true)) return ctx.skip();
    const text = await scrape();
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // 1: the text did not parse; 3: lint findings. Neither, for our names and the defaults alike.
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
  });

  it('shows the refresh runs recorded in the snapshots directory (the hook `fundreturns refresh` calls)', async () => {
    expect(await scrape()).not.toMatch(/^fundreturns_refresh_runs_total/m);
    const at = Date.parse('2026-11-23T22:30:00Z');
    recordRefresh(snapshotsDir, { outcome: 'ok', seconds: 12.5, rows: 3000 }, at);
    recordRefresh(snapshotsDir, { outcome: 'failed', seconds: 2, rows: 0 }, at + 3_600_000);
    const text = await scrape();
    expect(sample(text, 'fundreturns_refresh_runs_total{outcome="ok"}')).toBe(1);
    expect(sample(text, 'fundreturns_refresh_runs_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'fundreturns_refresh_duration_seconds_total{outcome="ok"}')).toBe(12.5);
    expect(sample(text, 'fundreturns_refresh_last_success_timestamp_seconds')).toBe(at / 1000);
    expect(sample(text, 'fundreturns_refresh_last_run_timestamp_seconds{outcome="failed"}')).toBe(
      at / 1000 + 3600,
    );
    expect(sample(text, 'fundreturns_refresh_last_rows')).toBe(0);
    // The served snapshot is untouched by the stats file beside it.
    expect(sample(text, 'fundreturns_snapshot_refused{reason=""}')).toBe(0);
  });

  it('counts a swap, then a refused snapshot with its reason while the older one keeps serving', async () => {
    const before = readCurrent(snapshotsDir);
    expect(cli(['build', '--source', sourceDir, '--snapshots', snapshotsDir]).status).toBe(0);
    const swapped = readCurrent(snapshotsDir)!;
    expect(swapped).not.toBe(before);
    await waitFor(async () => (await scrape()).includes(`id="${swapped}"`), 15_000, 'the swap', server.logs);
    expect(sample(await scrape(), 'fundreturns_snapshot_swaps_total')).toBe(1);
    // A newer snapshot whose file no longer matches its manifest's checksum (same size).
    const other = join(dir, 'other');
    expect(cli(['build', '--source', sourceDir, '--snapshots', other]).status).toBe(0);
    const bad = readCurrent(other)!;
    cpSync(join(other, bad), join(snapshotsDir, bad), { recursive: true });
    const file = join(snapshotsDir, bad, 'funds.arrow');
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(file, bytes);
    writeFileSync(join(snapshotsDir, 'CURRENT.part'), `${bad}\n`);
    renameSync(join(snapshotsDir, 'CURRENT.part'), join(snapshotsDir, 'CURRENT'));
    await waitFor(
      async () => sample(await scrape(), 'fundreturns_snapshot_refused{reason="CHECKSUM_MISMATCH"}') === 1,
      15_000,
      'the refusal',
      server.logs,
    );
    const text = await scrape();
    expect(sample(text, 'fundreturns_snapshot_refusals_total{reason="CHECKSUM_MISMATCH"}')).toBe(1);
    expect(text).toContain(`fundreturns_snapshot_info{id="${swapped}"`);
  });

  it('a port in use for it refuses the start, naming the flag, before any thread listens', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const taken = (holder.address() as AddressInfo).port;
    try {
      const r = cli([
        'serve',
        '--port',
        '0',
        '--admin-port',
        String(taken),
        '--snapshots',
        snapshotsDir,
        '--store',
        join(dir, 'other-store'),
      ]);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(`--admin-port ${taken} on 127.0.0.1 is in use`);
    } finally {
      holder.close();
    }
  });

  it('answers only /metrics: another path there is a 404', async () => {
    expect((await fetch(`http://127.0.0.1:${adminPort}/`)).status).toBe(404);
  });
});
