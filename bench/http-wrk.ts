/**
 * The HTTP benchmark's load runs (bench/http.bench.ts): wrk on loopback, and around
 * each run the server's CPU time and involuntary context switches read from /proc for
 * every thread of its process, so a run reports them per request beside req/s.
 * With `pin`, wrk runs on CPU 0 and the servers on CPU 1 (taskset).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { parseWrk } from '../cli/bench/load.js';

export interface WrkSettings {
  connections: number;
  /** Length of a run unless one says otherwise. */
  seconds: number;
  /** wrk on CPU 0, servers on CPU 1. */
  pin: boolean;
}

const onCpu = (pin: boolean, cpu: number, cmd: string, argv: string[]): [string, string[]] =>
  pin ? ['taskset', ['-c', String(cpu), cmd, ...argv]] : [cmd, argv];

/** `node ARGS` (on the servers' CPU when pinned), once its output matches `ready`. */
export async function startProcess(s: WrkSettings, cmd: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn(...onCpu(s.pin, 1, process.execPath, cmd), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const on = (d: Buffer) => {
      out += d;
      if (ready.test(out)) resolve();
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return child;
}

export interface WrkResult {
  rps: number;
  /** Server CPU (user + system, all threads) per request, µs; NaN when not measured. */
  cpuUs: number;
  /**
   * Times per request a server thread was preempted while it could still run
   * (involuntary context switches); NaN when not measured. On a 2-core machine
   * shared with wrk this grows with the CPU a request takes, and each costs more
   * than the switch itself: caches and TLB are refilled afterwards.
   */
  preemptions: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  non2xx: number;
  requests: number;
}

/** CPU ticks (user + system) of every thread of a process. */
function cpuTicks(pid: number): number {
  let ticks = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const fields = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1].split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks;
}
/** Involuntary context switches of every thread of a process. */
function preemptions(pid: number): number {
  let n = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
    n += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return n;
}
const TICK_US = 1e6 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** One wrk run of `script` against `port`; with `pid`, that server's CPU and preemptions per request. */
export function wrk(
  s: WrkSettings,
  port: number,
  script: string,
  duration = s.seconds,
  pid?: number,
): WrkResult {
  const before = pid === undefined ? 0 : cpuTicks(pid);
  const switchesBefore = pid === undefined ? 0 : preemptions(pid);
  const r = spawnSync(
    ...onCpu(s.pin, 0, 'wrk', [
      '-t2',
      `-c${s.connections}`,
      `-d${duration}s`,
      '--latency',
      '-s',
      script,
      `http://127.0.0.1:${port}`,
    ]),
    {
      encoding: 'utf8',
    },
  );
  const { rps, p50ms, p99ms, errors, non2xx, requests } = parseWrk(r.stdout);
  const cpuUs = pid === undefined ? Number.NaN : ((cpuTicks(pid) - before) * TICK_US) / Math.max(1, requests);
  const preempted =
    pid === undefined ? Number.NaN : (preemptions(pid) - switchesBefore) / Math.max(1, requests);
  return {
    rps,
    cpuUs,
    preemptions: preempted,
    p50ms,
    p99ms,
    errors,
    non2xx,
    requests,
  };
}

/** Two runs of the same case as one: rates and times averaged, p99 the worse, counts summed. */
export const mean = (a: WrkResult, b: WrkResult): WrkResult => ({
  rps: (a.rps + b.rps) / 2,
  cpuUs: (a.cpuUs + b.cpuUs) / 2,
  preemptions: (a.preemptions + b.preemptions) / 2,
  p50ms: (a.p50ms + b.p50ms) / 2,
  p99ms: Math.max(a.p99ms, b.p99ms),
  errors: a.errors + b.errors,
  non2xx: a.non2xx + b.non2xx,
  requests: a.requests + b.requests,
});
