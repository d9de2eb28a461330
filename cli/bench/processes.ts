/**
 * The processes a local bench starts (our server, the trivial baseline, a cold
 * start), where they come from, and what is read of them (/proc RSS).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchError } from './load.js';

/** The package's root: the nearest folder above this module with a package.json (source or dist). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('no package.json above the bench library');
    dir = up;
  }
  return dir;
}

export const CLI_PATH = join(packageRoot(), 'bin', 'fundreturns.js');

/** Node arguments that run the baseline server, from dist or (under tsx) from source. */
export function baselineCommand(): string[] {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return ['--import', 'tsx', join(dirname(here), 'baseline-server.ts')];
  return [join(dirname(here), 'baseline-server.js')];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

/** Resident memory of a process, MiB (Linux /proc; NaN elsewhere). */
export function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** The short commit of the checkout the bench runs from, `-dirty` when tracked files changed; null outside git. */
export function commitOf(root: string): string | null {
  const head = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  if (head.status !== 0) return null;
  const dirty = spawnSync('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no'], {
    encoding: 'utf8',
  });
  return `${head.stdout.trim()}${dirty.stdout.trim() === '' ? '' : '-dirty'}`;
}

export interface Started {
  child: ChildProcess;
  /** What it said, last 64 KiB, for an error that says why. */
  output: () => string;
  /** The first match of `ready` in its output. */
  match: RegExpExecArray;
  stop(): Promise<void>;
}

/**
 * Start `node ARGS` and wait until its output matches `ready` (within `timeoutMs`).
 * Its output keeps being read (an access log must never fill a pipe and stall it).
 */
export function startProcess(args: string[], ready: RegExp, timeoutMs = 120_000): Promise<Started> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const on = (d: Buffer) => {
    out = (out + d).slice(-65536);
  };
  child.stdout!.on('data', on);
  child.stderr!.on('data', on);
  const stop = () => stopChild(child, 10_000);
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearInterval(poll);
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(
        new BenchError(
          'BENCH_START_FAILED',
          `${why}; its last lines:\n${out.trim().split('\n').slice(-15).join('\n')}`,
        ),
      );
    };
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs / 1000} s`), timeoutMs);
    const poll = setInterval(() => {
      const m = ready.exec(out);
      if (m === null) return;
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ child, output: () => out, match: m, stop });
    }, 5);
    child.once('exit', (code) => {
      if (ready.exec(out) === null) fail(`exited with ${code}`);
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has exited. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Run the CLI to completion (store administration), or throw with its stderr. */
export function runCli(args: string[]): string {
  const r = spawnSync(process.execPath, [CLI_PATH, ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0)
    throw new BenchError(
      'BENCH_SETUP_FAILED',
      `fundreturns ${args[0]} failed: ${r.stderr || r.error?.message}`,
    );
  return r.stdout;
}
