/**
 * Server instructions per request, counted by valgrind's callgrind: the yardstick that
 * does not move with the machine's load. Wall-clock ratios on a shared 2-core machine
 * swing by ±15 % from run to run; the instructions a server executes for the same
 * requests repeat within about a percent (V8's background threads off with
 * `--single-threaded`, instrumentation on only for the measured requests, after a
 * warm-up, one server thread).
 *
 * A process runs under `valgrind --tool=callgrind --instr-atstart=no`; for each case
 * the counters are zeroed, instrumentation switched on (`callgrind_control -i on`),
 * the requests sent one after another on one keep-alive connection, instrumentation
 * switched off and the counters dumped; the dump's total over the request count is the
 * figure. Only what runs inside uSockets' dispatch of socket events is collected (the
 * request's whole path in the server, synchronous or in the microtasks it starts);
 * the report gives the spread of several runs.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { BenchError, type BenchRequest } from './load.js';

export function hasCallgrind(): boolean {
  return (
    spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0 &&
    spawnSync('callgrind_control', ['--version'], { stdio: 'ignore' }).status === 0
  );
}

export interface CountedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** stdout and stderr so far (valgrind's own lines included). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `node --single-threaded ARGS` under callgrind, instrumentation off; resolves once a
 * line of its output matches `ready` (valgrind makes start-up some 50 times slower).
 */
export async function startCounted(
  nodeArgs: readonly string[],
  outDir: string,
  ready: RegExp,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 600_000,
): Promise<CountedProcess> {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      // One dump file per dump, named by pid and a counter: read back by `countRequests`.
      `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`,
      // Node's JIT writes code at run time: valgrind must notice, or it runs stale translations.
      '--smc-check=all',
      // Count only inside uSockets' dispatch of a socket event: reading a request,
      // routing it, the JavaScript handler and the write (and the microtasks it runs),
      // not the timers and other threads that run meanwhile. Under valgrind a request
      // takes some 50 times longer, so a 500 ms poll would otherwise weigh on each.
      '--toggle-collect=us_internal_dispatch_ready_poll',
      process.execPath,
      '--single-threaded',
      ...nodeArgs,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new BenchError(
          'BENCH_VALGRIND',
          `not ready under valgrind within ${timeoutMs / 1000} s:\n${out.slice(-2000)}`,
        ),
      );
    }, timeoutMs);
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new BenchError(
          'BENCH_VALGRIND',
          `exited (${code}) under valgrind before it was ready:\n${out.slice(-2000)}`,
        ),
      );
    });
  });
  return {
    child,
    pid: child.pid as number,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0)
    throw new BenchError(
      'BENCH_VALGRIND',
      `callgrind_control ${args.join(' ')} failed: ${r.stderr || r.stdout}`,
    );
}

/** One request on `agent`'s keep-alive connection; the body is read whole. Resolves to status and body size. */
function send(
  base: URL,
  agent: Agent,
  r: BenchRequest,
  headers: Record<string, string>,
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: r.path,
        method: r.method,
        agent,
        headers: {
          ...headers,
          ...(r.body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body) }),
          ...(r.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}),
        },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(120_000, () => req.destroy(new Error(`${r.method} ${r.path}: no answer in 120 s`)));
    req.end(r.body);
  });
}

/**
 * A callgrind dump's `totals:` line: the instructions (Ir) it counted. Not `summary:`,
 * which a dump made by callgrind_control leaves at 0.
 */
function dumpTotal(text: string): number {
  const m = /^totals:\s+(\d+)/m.exec(text);
  if (m === null) throw new BenchError('BENCH_VALGRIND', 'a callgrind dump without a totals line');
  return Number(m[1]);
}

export interface CaseCount {
  /**
   * Instructions per request in each measured window, in order. A window that a
   * garbage collection (or a late JIT compile) falls into counts more: the smallest is
   * the request's own path, the median what a request costs with its share of GC.
   */
  windows: number[];
  requests: number;
  /** Mean answer body size, bytes. */
  bodyBytes: number;
}

/**
 * Warm up with `warmup` requests (not counted), then count `windows` windows of
 * `requests` each (cycling through the list), instrumentation on only while a window's
 * requests are sent. Every answer must have `status`.
 */
export async function countRequests(
  proc: CountedProcess,
  outDir: string,
  baseUrl: string,
  list: readonly BenchRequest[],
  opts: {
    warmup: number;
    requests: number;
    windows?: number;
    headers?: Record<string, string>;
    status?: number;
    label?: string;
  },
): Promise<CaseCount> {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = opts.headers ?? {};
  const want = opts.status ?? 200;
  let sent = 0;
  const go = async (n: number) => {
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const r = list[sent++ % list.length];
      const a = await send(base, agent, r, headers);
      if (a.status !== want)
        throw new BenchError('BENCH_VALGRIND', `${r.method} ${r.path} answered ${a.status}, not ${want}`);
      bytes += a.bytes;
    }
    return bytes;
  };
  try {
    await go(opts.warmup);
    const windows: number[] = [];
    let bytes = 0;
    for (let w = 0; w < (opts.windows ?? 5); w++) {
      const before = new Set(readdirSync(outDir));
      control(proc.pid, '--zero');
      control(proc.pid, '-i', 'on');
      bytes += await go(opts.requests);
      control(proc.pid, '-i', 'off');
      control(proc.pid, '--dump');
      const dumps = readdirSync(outDir).filter(
        (f) => f.startsWith(`callgrind.out.${proc.pid}.`) && !before.has(f),
      );
      if (dumps.length === 0) throw new BenchError('BENCH_VALGRIND', 'callgrind wrote no dump');
      let total = 0;
      for (const f of dumps) {
        total += dumpTotal(readFileSync(join(outDir, f), 'utf8'));
        // Kept for callgrind_annotate when asked (FUNDRETURNS_KEEP_CALLGRIND=1), named by the case.
        if (process.env.FUNDRETURNS_KEEP_CALLGRIND === '1')
          renameSync(join(outDir, f), join(outDir, `${opts.label ?? 'case'}.w${w + 1}.${f}`));
        else rmSync(join(outDir, f));
      }
      windows.push(total / opts.requests);
    }
    return { windows, requests: opts.requests, bodyBytes: bytes / (opts.requests * windows.length) };
  } finally {
    agent.destroy();
  }
}
