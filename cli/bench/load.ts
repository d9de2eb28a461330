/**
 * Load generation for `fundreturns bench` (and bench/http.bench.ts): wrk with a Lua
 * script that rotates through pre-generated requests when wrk is installed, else
 * autocannon when it can be imported. Every run is bounded in time (its duration,
 * and a kill after it overruns) and in requests (a per-thread cap in the script).
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BenchRequest {
  method: 'GET' | 'POST';
  /** Path and query, starting with `/`. */
  path: string;
  body?: string;
}

export interface LoadResult {
  /** Answers per second over the run. */
  rps: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  /** Answers received. */
  requests: number;
  /** Connect, read, write errors and timeouts. */
  errors: number;
  /** Answers that were not 2xx or 3xx. */
  non2xx: number;
  /**
   * The run reached --max-requests before its duration: wrk's threads stopped early
   * while its clock ran on, so `rps` understates the server. Raise the cap or shorten the run.
   */
  capped?: boolean;
}

export type LoadTool = 'wrk' | 'autocannon';

export interface LoadOptions {
  /** Where the requests go: an origin, optionally with a path prefix. */
  url: string;
  requests: readonly BenchRequest[];
  /** Sent with every request (the API key). */
  headers: Readonly<Record<string, string>>;
  seconds: number;
  connections: number;
  /** Load-generator threads (wrk -t). */
  threads: number;
  /** Upper bound on requests in this run, whatever the duration. */
  maxRequests: number;
  /** Where the Lua script is written. */
  workDir: string;
  /** Names the script file. */
  name: string;
  /** Only `--url` sets it: anything else is loopback only. */
  allowRemote: boolean;
}

export class BenchError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BenchError';
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Refuse to aim load at anything but this machine unless the operator named the target (--url). */
export function checkTarget(url: string, allowRemote: boolean): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BenchError('BENCH_BAD_URL', `${JSON.stringify(url)} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new BenchError('BENCH_BAD_URL', `${url}: only http and https can be benchmarked`);
  if (!allowRemote && !LOOPBACK.has(u.hostname) && !/^127\./.test(u.hostname))
    throw new BenchError(
      'BENCH_NOT_LOOPBACK',
      `refusing to load ${u.host}: without --url the bench only talks to 127.0.0.1`,
    );
  return u;
}

const hasWrk = () => spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
const hasAutocannon = async () => {
  try {
    await import(AUTOCANNON);
    return true;
  } catch {
    return false;
  }
};
// A variable, so the build does not need autocannon's types (it ships none we use).
const AUTOCANNON = 'autocannon';

/** The tool asked for (`auto`: wrk when installed, else autocannon), or null when it cannot run here. */
export async function pickTool(wanted: 'auto' | LoadTool = 'auto'): Promise<LoadTool | null> {
  if (wanted !== 'autocannon' && hasWrk()) return 'wrk';
  if (wanted !== 'wrk' && (await hasAutocannon())) return 'autocannon';
  return null;
}

export async function runLoad(tool: LoadTool, o: LoadOptions): Promise<LoadResult> {
  checkTarget(o.url, o.allowRemote);
  if (o.requests.length === 0) throw new BenchError('BENCH_NO_REQUESTS', `${o.name}: no requests to send`);
  const r = tool === 'wrk' ? await runWrk(o) : await runAutocannon(o);
  // In-flight requests finish after a thread stops itself: near the cap is at it.
  return r.requests >= o.maxRequests - o.connections ? { ...r, capped: true } : r;
}

/** Milliseconds from one of wrk's figures (`812.00us`, `1.20ms`, `2.00s`). */
function ms(v: string, unit: string): number {
  const n = Number(v);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : n;
}

function percentile(out: string, p: number): number {
  const m = new RegExp(`\\b${p}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
  return m ? ms(m[1], m[2]) : Number.NaN;
}

/** What a `wrk --latency` run printed, as figures. */
export function parseWrk(out: string): LoadResult {
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50ms: percentile(out, 50),
    p90ms: percentile(out, 90),
    p99ms: percentile(out, 99),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

/**
 * A wrk Lua script cycling through pre-built requests. Requests formatted at load
 * time get no Host header from wrk, and uWS rightly drops HTTP/1.1 requests without
 * one, so it is set explicitly. Each wrk thread stops itself after `perThread`
 * requests, so a fast server cannot turn a time bound into millions of requests.
 */
export function luaScript(
  requests: readonly BenchRequest[],
  host: string,
  prefix: string,
  headers: Readonly<Record<string, string>>,
  perThread: number,
): string {
  const head = Object.entries({ Host: host, 'Content-Type': 'application/json', ...headers })
    .map(([k, v]) => `[${JSON.stringify(k)}]=${JSON.stringify(v)}`)
    .join(', ');
  return [
    `local h = {${head}}`,
    'local reqs = {}',
    ...requests.map(
      (r, i) =>
        `reqs[${i + 1}] = wrk.format(${JSON.stringify(r.method)}, ${JSON.stringify(prefix + r.path)}, h, ${r.body === undefined ? 'nil' : JSON.stringify(r.body)})`,
    ),
    'local n = #reqs',
    // Each thread starts at its own place in the list, so threads do not move in step.
    'local i = math.random(n) - 1',
    'local sent = 0',
    `local cap = ${Math.max(1, Math.floor(perThread))}`,
    'function request()',
    '  sent = sent + 1',
    '  if sent > cap then wrk.thread:stop() end',
    '  i = (i % n) + 1',
    '  return reqs[i]',
    'end',
    '',
  ].join('\n');
}

function runWrk(o: LoadOptions): Promise<LoadResult> {
  const u = new URL(o.url);
  const threads = Math.max(1, Math.min(o.threads, o.connections));
  const script = join(o.workDir, `${o.name.replace(/[^\w-]/g, '_')}.lua`);
  writeFileSync(
    script,
    luaScript(o.requests, u.host, u.pathname.replace(/\/$/, ''), o.headers, o.maxRequests / threads),
  );
  const args = [
    `-t${threads}`,
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    '--timeout',
    '5s',
    '--latency',
    '-s',
    script,
    u.origin,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    // A wrk that outlives its duration by far is stuck: killed, and said.
    const killer = setTimeout(() => child.kill('SIGKILL'), (o.seconds + 30) * 1000);
    child.on('error', (e) => {
      clearTimeout(killer);
      reject(new BenchError('BENCH_TOOL_FAILED', `wrk could not run: ${e.message}`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      if (code !== 0 || !/Requests\/sec/.test(out))
        return reject(
          new BenchError(
            'BENCH_TOOL_FAILED',
            `wrk ${o.name} failed (${signal ?? `exit ${code}`}): ${(err || out).trim().slice(0, 500)}`,
          ),
        );
      resolve(parseWrk(out));
    });
  });
}

/** What autocannon's result holds that we read (it ships no types we depend on). */
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

async function runAutocannon(o: LoadOptions): Promise<LoadResult> {
  const mod = (await import(AUTOCANNON)) as { default: Autocannon };
  const r = await mod.default({
    url: o.url,
    connections: o.connections,
    duration: o.seconds,
    // Not `amount`, which would override the duration: this ends the run at whichever comes first.
    maxOverallRequests: Math.max(o.connections, o.maxRequests),
    headers: { 'content-type': 'application/json', ...o.headers },
    requests: o.requests.map((q) => ({ method: q.method, path: q.path, body: q.body })),
  });
  const answered = r.requests.total;
  return {
    rps: answered / Math.max(0.001, r.duration),
    p50ms: r.latency.p50,
    p90ms: r.latency.p90,
    p99ms: r.latency.p99,
    requests: answered,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}
