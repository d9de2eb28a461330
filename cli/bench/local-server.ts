/**
 * The server a local bench run starts: on a private snapshots directory linking to
 * the snapshot to serve, with a scratch store and a plans file no run reaches; and
 * what only such a server allows, a hot swap under load and a cold start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readCurrent, setCurrent } from '../../core/snapshot/directory.js';
import { BenchError, type BenchRequest, type LoadResult } from './load.js';
import { CLI_PATH, freePort, rssMiB, runCli, type Started, startProcess } from './processes.js';
import type { BenchOptions, BenchResult } from './result.js';

/** A plans file no run reaches, yet with small integers like every real plan's (C26). */
const PLANS = { business: { burst: 1_000_000_000, monthly: 1_000_000_000 } };

export interface Local {
  server: Started;
  url: string;
  key: string;
  served: string;
  current: string;
  serveArgs: (port: number, threads?: number) => string[];
}

/** A private snapshots directory linking to the snapshot to serve: the bench flips its CURRENT, never the operator's. */
export async function startLocal(o: BenchOptions, work: string): Promise<Local> {
  const source = resolve(o.snapshots);
  const current = readCurrent(source);
  if (current === null)
    throw new BenchError(
      'BENCH_NO_SNAPSHOT',
      `no snapshot published in ${source}: run \`make demo\` or \`fundreturns build\` first, or pass --snapshots DIR`,
    );
  const served = join(work, 'snapshots');
  runCli(['accounts', 'create', 'bench', '--plan', 'business', '--store', join(work, 'store'), '--json']);
  const key = (
    JSON.parse(runCli(['keys', 'create', 'bench', '--json', '--store', join(work, 'store')])) as {
      key: string;
    }
  ).key;
  writeFileSync(join(work, 'plans.json'), JSON.stringify(PLANS));
  mkdirSync(served);
  symlinkSync(join(source, current), join(served, current));
  setCurrent(served, current);
  const serveArgs = (port: number, threads = o.serverThreads) => [
    CLI_PATH,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--threads',
    String(threads),
    '--snapshots',
    served,
    '--store',
    join(work, 'store'),
    '--plans',
    join(work, 'plans.json'),
  ];
  const server = await startProcess(serveArgs(0), /serving on http:\/\/[^:]+:(\d+)/);
  return { server, url: `http://127.0.0.1:${server.match[1]}`, key, served, current, serveArgs };
}

async function healthId(url: string): Promise<string | null> {
  try {
    const h = (await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).json()) as {
      snapshot: { id: string } | null;
    };
    return h.snapshot?.id ?? null;
  } catch {
    return null;
  }
}

/**
 * Latest trailing under load while CURRENT names a second snapshot (a link to the
 * same files under another id, so it loads afresh) and then the first again: every
 * request must still be answered. /healthz is polled meanwhile to show the swaps happened.
 */
export async function hotSwapUnderLoad(
  local: Local,
  url: string,
  requests: readonly BenchRequest[],
  load: (requests: readonly BenchRequest[], seconds: number) => Promise<LoadResult>,
  seconds: number,
): Promise<NonNullable<BenchResult['hot_swap']>> {
  const other = `${local.current.slice(0, -4)}${local.current.endsWith('beef') ? 'cafe' : 'beef'}`;
  const target = readFileSync(join(local.served, 'CURRENT'), 'utf8').trim();
  symlinkSync(realpathSync(join(local.served, target)), join(local.served, other));
  const served: string[] = [];
  let swaps = 0;
  const watch = setInterval(async () => {
    const id = await healthId(url);
    if (id !== null && served[served.length - 1] !== id) served.push(id);
  }, 100);
  const timers = [
    setTimeout(
      () => {
        setCurrent(local.served, other);
        swaps++;
      },
      (seconds * 1000) / 3,
    ),
    setTimeout(
      () => {
        setCurrent(local.served, local.current);
        swaps++;
      },
      (seconds * 2000) / 3,
    ),
  ];
  try {
    const r = await load(requests, seconds);
    // The last swap may still be loading: wait (bounded) until it serves.
    for (let t = 0; t < 120 && (await healthId(url)) !== local.current; t++)
      await new Promise((res) => setTimeout(res, 250));
    const last = await healthId(url);
    if (last !== null && served[served.length - 1] !== last) served.push(last);
    return {
      requests: r.requests,
      errors: r.errors,
      non2xx: r.non2xx,
      swaps,
      served,
      rps: r.rps,
      p99ms: r.p99ms,
    };
  } finally {
    for (const t of timers) clearTimeout(t);
    clearInterval(watch);
  }
}

/** Process start to the first answered lookup, and RSS at that moment. */
export async function coldStartOf(
  local: Local,
  headers: Record<string, string>,
  path: string,
  loose: Set<ChildProcess>,
): Promise<NonNullable<BenchResult['cold_start']>> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, local.serveArgs(port), { stdio: 'ignore' });
  loose.add(child);
  try {
    const deadline = t0 + 300_000;
    while (performance.now() < deadline) {
      if (child.exitCode !== null)
        throw new BenchError('BENCH_START_FAILED', `cold start: serve exited ${child.exitCode}`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}${path}`, {
          headers,
          signal: AbortSignal.timeout(1000),
        });
        await r.arrayBuffer();
        if (r.status === 200) {
          const ms = performance.now() - t0;
          return { ms: Math.round(ms), rss_mib: Math.round(rssMiB(child.pid!)) };
        }
      } catch {
        // not listening yet
      }
      await new Promise((res) => setTimeout(res, 5));
    }
    throw new BenchError('BENCH_START_FAILED', 'cold start: no answer within 300 s');
  } finally {
    await new Promise<void>((res) => {
      if (child.exitCode !== null || child.signalCode !== null) return res();
      child.once('exit', () => res());
      child.kill('SIGTERM');
    });
    loose.delete(child);
  }
}
