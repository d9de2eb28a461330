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
import { baselineCommand, freePort, stopChild } from './processes.js';
import type { ScenarioName } from './workload.js';

export function hasCallgrind(): boolean {
  return (
    spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0 &&
    spawnSync('callgrind_control', ['--version'], { stdio: 'ignore' }).status === 0
  );
}

interface CountedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** stdout and stderr so far (valgrind's own lines included). */
  output(): string;
  stop(): Promise<void>;
}

/** valgrind's arguments to run `node --single-threaded ARGS` under callgrind, instrumentation off. */
function callgrindArgs(nodeArgs: readonly string[], outDir: string): string[] {
  return [
    '--tool=callgrind',
    '--instr-atstart=no',
    // One dump file per dump, named by pid and a counter: read back by `countRequests`.
    `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`,
    // Node's JIT writes code at run time into anonymous memory: valgrind must notice,
    // or it runs stale translations. Code from files (node itself) never changes, and
    // not checking it makes a run several times faster.
    '--smc-check=all-non-file',
    // Count only inside uSockets' dispatch of a socket event: reading a request,
    // routing it, the JavaScript handler and the write (and the microtasks it runs),
    // not the timers and other threads that run meanwhile. Under valgrind a request
    // takes some 50 times longer, so a 500 ms poll would otherwise weigh on each.
    '--toggle-collect=us_internal_dispatch_ready_poll',
    process.execPath,
    '--single-threaded',
    // A young generation large enough that a window of requests seldom holds a
    // scavenge: with the default one, windows of 150 lookups held 0 or 1 and their
    // least spread by 15 % from run to run. Collections are counted in the median
    // window; the least is the request's own path.
    '--min-semi-space-size=64',
    '--max-semi-space-size=64',
    // The memory reducer starts a full collection once a process looks idle, which
    // under valgrind's slowness falls at a time set by the machine's speed; that
    // collection throws away compiled code that held on to objects now dead, and the
    // windows after it count recompiling. Without it collections come from allocation
    // alone: the same requests meet the same collections on any machine.
    '--no-memory-reducer',
    ...nodeArgs,
  ];
}

/** Resolves once the child's output so far matches `ready`; rejects if it exits first or takes longer than `timeoutMs`. */
function untilReady(
  child: ChildProcess,
  output: () => string,
  ready: RegExp,
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new BenchError(
          'BENCH_VALGRIND',
          `not ready under valgrind within ${timeoutMs / 1000} s:\n${output().slice(-2000)}`,
        ),
      );
    }, timeoutMs);
    const check = () => {
      if (ready.test(output())) {
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
          `exited (${code}) under valgrind before it was ready:\n${output().slice(-2000)}`,
        ),
      );
    });
  });
}

/**
 * `node --single-threaded ARGS` under callgrind, instrumentation off; resolves once a
 * line of its output matches `ready` (valgrind makes start-up some 50 times slower).
 */
async function startCounted(
  nodeArgs: readonly string[],
  outDir: string,
  ready: RegExp,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 600_000,
): Promise<CountedProcess> {
  const child = spawn('valgrind', callgrindArgs(nodeArgs, outDir), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  await untilReady(child, () => out, ready, timeoutMs);
  return { child, pid: child.pid as number, output: () => out, stop: () => stopChild(child, 60_000) };
}

/** callgrind_control's options as the vgdb monitor commands it sends. */
const MONITOR: Record<string, string> = {
  '--zero': 'zero',
  '-i on': 'instrumentation on',
  '-i off': 'instrumentation off',
  '--dump': 'dump',
};

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8', timeout: 120_000 });
  if (r.status === 0) return;
  // vgdb gives a process blocked in a system call (an idle server) 100 ms to look for
  // commands, then forces it with ptrace, which a container may forbid ("error attach
  // main pid"); without forcing, the server's one-second timers wake it soon enough.
  // The command may have been left pending and run twice: zero and instrumentation do
  // the same again, and a second dump holds only what ran since the first (counted in
  // the sum of the dumps).
  const monitor = MONITOR[args.join(' ')];
  const again =
    monitor === undefined
      ? r
      : spawnSync('vgdb', [`--pid=${pid}`, '--max-invoke-ms=0', ...monitor.split(' ')], {
          encoding: 'utf8',
          timeout: 120_000,
        });
  if (again.status !== 0)
    throw new BenchError(
      'BENCH_VALGRIND',
      `callgrind_control ${args.join(' ')} failed: ${r.stderr || r.stdout}${again === r ? '' : `; vgdb then: ${again.stderr || again.stdout}`}`,
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

/**
 * Windows counted per case; the least is the figure. A window that a collection falls
 * into counts up to ten times more, and after the warm-up as few as one window in five
 * was clean: nine leave several clean ones, for 4 × N more requests than five.
 */
export const INSTRUCTION_WINDOWS = 9;

interface CaseCount {
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
async function countRequests(
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
    for (let w = 0; w < (opts.windows ?? INSTRUCTION_WINDOWS); w++) {
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

/** One kind of request to count: its requests, cycled through. */
export interface CountCase {
  name: string;
  requests: readonly BenchRequest[];
  /**
   * A batch runs its inner functions 100 times a request: a tenth of the warm-up and
   * a quarter of the requests per window give the same settled JIT.
   */
  heavy?: boolean;
}

export interface CountSettings {
  /** Requests before counting (JIT warm-up); heavy cases a tenth. */
  warmup: number;
  /** Requests per window; heavy cases a quarter. */
  requests: number;
  windows?: number;
}

/** Per case, each window's instructions per request, and the mean answer size. */
export interface CountedCase {
  name: string;
  windows: number[];
  bodyBytes: number;
}

const caseSettings = (c: CountCase, s: CountSettings) => ({
  warmup: c.heavy ? Math.round(s.warmup / 10) : s.warmup,
  requests: c.heavy ? Math.max(1, Math.round(s.requests / 4)) : s.requests,
  windows: s.windows,
});

const TOOLS_LIST: BenchRequest = {
  method: 'POST',
  path: '/mcp',
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
};

/**
 * A request with a body before anything is counted. uWS detaches each body piece's
 * ArrayBuffer once its handler returns; V8 then drops every compiled function that
 * read a typed array on the promise that none ever would be (its ArrayBufferDetaching
 * protector), and compiles them again with the check. A serving process meets its
 * first POST within seconds, so that is the code to count, and no case after the
 * first POST counts a recompile of all the others. Both servers answer this one
 * (ours tools/list, the baseline any POST).
 */
async function prime(url: string, headers: Record<string, string>): Promise<void> {
  const agent = new Agent({ keepAlive: false });
  try {
    const a = await send(new URL(url), agent, TOOLS_LIST, headers);
    if (a.status !== 200)
      throw new BenchError(
        'BENCH_VALGRIND',
        `${TOOLS_LIST.method} ${TOOLS_LIST.path} answered ${a.status}, not 200`,
      );
  } finally {
    agent.destroy();
  }
}

/**
 * Start `nodeArgs(port)` under callgrind, count every case in turn on it, stop it.
 * `cases` is asked once the server listens (the requests may depend on its universe).
 */
export async function countServer(
  nodeArgs: (port: number) => string[],
  ready: RegExp,
  cases: (url: string) => Promise<readonly CountCase[]> | readonly CountCase[],
  settings: CountSettings,
  dumps: string,
  headers: Record<string, string> = {},
  onCase?: (c: CountedCase) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CountedCase[]> {
  const port = await freePort();
  const proc = await startCounted(nodeArgs(port), dumps, ready, env);
  // A run stopped half-way (an error, Ctrl-C) leaves no valgrind behind.
  const kill = () => proc.child.kill('SIGKILL');
  process.once('exit', kill);
  try {
    const url = `http://127.0.0.1:${port}`;
    await prime(url, headers);
    const out: CountedCase[] = [];
    for (const c of await cases(url)) {
      const counted = await countRequests(proc, dumps, url, c.requests, {
        ...caseSettings(c, settings),
        headers,
        label: c.name,
      });
      const row = { name: c.name, windows: counted.windows, bodyBytes: Math.round(counted.bodyBytes) };
      onCase?.(row);
      out.push(row);
    }
    return out;
  } finally {
    await proc.stop();
    process.off('exit', kill);
  }
}

/**
 * The trivial uWS server (baseline-server.ts) under callgrind answering, for each
 * counted case, a body of the same size (/sized/N) with the same method: the
 * instructions any server spends on such a request.
 */
export function countBaseline(
  counted: readonly CountedCase[],
  like: readonly CountCase[],
  settings: CountSettings,
  dumps: string,
): Promise<CountedCase[]> {
  const cases = counted.map((k) => {
    const c = like.find((x) => x.name === k.name) as CountCase;
    const r = c.requests[0];
    return { ...c, requests: [{ method: r.method, path: `/sized/${k.bodyBytes}`, body: r.body }] };
  });
  return countServer(
    (port) => [...baselineCommand(), String(port), '1', '0'],
    /baseline listening/,
    () => cases,
    settings,
    dumps,
  );
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Several runs' windows of one case: per run its least window (the request's own
 * path: no collection fell into it) and its median window (with the share of GC a
 * request brings); across runs the median of each and its spread ((max − min) / median).
 */
export function summarize(runs: readonly (readonly number[])[]) {
  const least = runs.map((w) => Math.min(...w));
  const typical = runs.map(median);
  const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
  return {
    least: median(least),
    leastSpread: spread(least),
    typical: median(typical),
    typicalSpread: spread(typical),
  };
}

/** What can be counted: each kind `fundreturns bench` sends, and MCP's tools/list. */
export const INSTRUCTION_CASES: ReadonlyArray<{
  name: string;
  label: string;
  from: ScenarioName | 'mcp-list';
}> = [
  { name: 'trailing', label: 'latest trailing', from: 'trailing' },
  { name: 'as-of', label: 'trailing as_of a random date', from: 'as-of' },
  { name: 'fund', label: 'fund metadata', from: 'fund' },
  { name: 'calendar', label: 'calendar returns', from: 'calendar' },
  { name: 'search', label: 'search q, 10 rows', from: 'search' },
  { name: 'batch-trailing', label: 'batch of 100 trailing', from: 'batch-trailing' },
  { name: 'batch-calendar', label: 'batch of 100 calendar', from: 'batch-calendar' },
  { name: 'mcp', label: 'MCP tools/call (a lookup)', from: 'mcp' },
  { name: 'mcp-list', label: 'MCP tools/list', from: 'mcp-list' },
  { name: 'screen', label: 'screen: 2 filters, sort, 20 rows', from: 'screen' },
  { name: 'compare', label: 'compare 10 funds × 6 figures', from: 'compare' },
];

/** The cases named, in the table's order; an unknown name is an error. */
export function instructionCases(names: readonly string[]): typeof INSTRUCTION_CASES {
  for (const n of names)
    if (!INSTRUCTION_CASES.some((c) => c.name === n))
      throw new BenchError(
        'BENCH_BAD_CASE',
        `no instruction case ${JSON.stringify(n)}; there are ${INSTRUCTION_CASES.map((c) => c.name).join(', ')}`,
      );
  return INSTRUCTION_CASES.filter((c) => names.includes(c.name));
}

/** The cases' requests, from the scenarios' lists (workload.ts). */
export function casesOf(
  cases: typeof INSTRUCTION_CASES,
  lists: Record<ScenarioName, BenchRequest[]>,
): CountCase[] {
  return cases.map((c) => ({
    name: c.name,
    requests: c.from === 'mcp-list' ? [TOOLS_LIST] : lists[c.from],
    heavy: c.name.startsWith('batch'),
  }));
}
