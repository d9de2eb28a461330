/**
 * End-to-end helpers: real `fundreturns` processes (the compiled CLI, as an
 * operator runs it) over small generated universes in temporary directories.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { readCurrent } from '../core/snapshot/directory.js';
import { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { SCHEMAS } from '../schemas/index.js';
import { track, watchUwsWarnings } from './processes.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = join(ROOT, 'bin', 'fundreturns.js');

/**
 * The instant every end-to-end process starts from, whatever day the suite runs:
 * Monday 2026-11-23, 10:00 in New York, before the close, so the fixtures' last
 * session (Friday 2026-11-20) is the last closed one and 66 hours old (fresh, C31).
 * All processes of one test file share one clock (core/clock.ts): the instant is
 * anchored to the real time this file loaded, and runs on from there.
 */
export const E2E_START = '2026-11-23T15:00:00Z';
export const E2E_DATA_END = '2026-11-20';
const E2E_ANCHOR = Date.now();

/** A FUNDRETURNS_TEST_CLOCK value for a clock that reads `instant` now and runs on. */
export function clockAt(instant: string): string {
  return `${instant}@${Date.now()}`;
}

/** The end-to-end processes' clock, for what a test computes from "now" (a month, a reset). */
export function testNow(): number {
  return Date.parse(E2E_START) + (Date.now() - E2E_ANCHOR);
}

/** The environment of every process the harness starts: this one's, on the suite's clock, plus `extra`. */
export function testEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, FUNDRETURNS_TEST_CLOCK: `${E2E_START}@${E2E_ANCHOR}`, ...extra };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `fr-${prefix}-`));
}

/** A loopback port free now (for a server that must be told its port before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
}

/** A raw HTTP/1.1 connection, for what fetch cannot send: pipelined requests, odd headers, a body in pieces. */
export async function rawConnection(
  port: number,
): Promise<{ write(text: string): void; received(): string; closed(): boolean; close(): void }> {
  const sock = connect(port, '127.0.0.1');
  let got = '';
  let ended = false;
  sock.on('data', (d) => {
    got += d;
  });
  sock.on('close', () => {
    ended = true;
  });
  // A reset after the server closed is an ending like any other here.
  sock.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', () => resolve());
    sock.once('error', reject);
  });
  return {
    write: (text) => void sock.write(text),
    received: () => got,
    closed: () => ended,
    close: () => void sock.destroy(),
  };
}

/** Run the CLI to completion (killed after two minutes: a hang must not hang the suite). */
export function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: testEnv(env),
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Like cli() but without blocking this process's event loop (watchers, proxies keep running). */
export function cliAsync(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 60_000,
): Promise<{ status: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = track(
      spawn(process.execPath, [CLI, ...args], { env: testEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }),
      `fundreturns ${args[0] ?? ''}`,
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // A hang is a bug to report, never a hung suite.
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (status) => {
      clearTimeout(killer);
      resolve({ status, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export function generateAndBuild(
  dir: string,
  funds: number,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): { source: string; snapshots: string } {
  const source = join(dir, 'source');
  const snapshots = join(dir, 'snapshots');
  const g = cli(
    [
      'generate',
      '--out',
      source,
      '--funds',
      String(funds),
      '--seed',
      '7',
      '--from',
      '1995-01-01',
      '--to',
      E2E_DATA_END,
      '--threads',
      '1',
      ...extra,
    ],
    env,
  );
  if (g.status !== 0) throw new Error(g.stderr);
  const b = cli(['build', '--source', source, '--snapshots', snapshots], env);
  if (b.status !== 0) throw new Error(b.stderr);
  return { source, snapshots };
}

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  logs: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface CliProcess {
  child: ChildProcess;
  /** stdout only (a JSON-RPC stream, for `mcp --stdio`). */
  stdout: () => string;
  /** stderr only. */
  stderr: () => string;
  /** stdout and stderr as they arrived. */
  output: () => string;
  /** Exit code and signal. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** `fundreturns ARGS` as a running process (stdin a pipe), its output collected. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = track(
    spawn(process.execPath, [CLI, ...args], { env: testEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }),
    `fundreturns ${args[0] ?? ''}`,
  );
  watchUwsWarnings(child, `fundreturns ${args[0] ?? ''}`);
  let out = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
    out += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
    out += d;
  });
  // A child that exits before reading all of its stdin must not fail the test with EPIPE.
  child.stdin!.on('error', () => {});
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    child.once('exit', (code, signal) => r([code, signal])),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => out, exited };
}

/** Start `fundreturns serve --port 0` and wait for its listening line. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const proc = spawnCli(['serve', '--port', '0', ...args], env);
  const child = proc.child;
  proc.child.stdin!.end();
  const out = proc.output;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 60 s; its last lines:\n${lastLines(out())}`));
    }, 60_000);
    const onData = () => {
      const m = /serving on http:\/\/[^:]+:(\d+)/.exec(out());
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}; its last lines:\n${lastLines(out())}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    logs: out,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        // A server ended by a signal (test/setup.ts ends a test's servers after it) has
        // no exit code but a signal code: it is gone, and 'exit' will not fire again.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule.default;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
for (const [name, schema] of Object.entries(SCHEMAS))
  ajv.addSchema(schema as object, `#/components/schemas/${name}`);

/** Validate a parsed body against a named schema; returns the error text or null. */
export function schemaErrors(name: keyof typeof SCHEMAS, value: unknown): string | null {
  const v = ajv.getSchema(`#/components/schemas/${name}`)!;
  return v(value) ? null : ajv.errorsText(v.errors);
}

/** The last `n` lines of a process's output, for an error that says why it waited in vain. */
export function lastLines(output: string, n = 30): string {
  return output.trimEnd().split('\n').slice(-n).join('\n');
}

/**
 * Poll `cond` until true; on timeout the error names `what` and, when given, the
 * output of the process being waited on (`logs`: e.g. a server's), last lines first.
 */
export async function waitFor(
  cond: () => Promise<boolean> | boolean,
  timeoutMs = 15_000,
  what = 'condition',
  logs?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  const tail = logs === undefined ? '' : `; the process's last lines:\n${lastLines(logs())}`;
  throw new Error(`timed out waiting for ${what}${tail}`);
}

export interface TestAccess {
  store: string;
  plans: string;
  key: string;
  /** Headers carrying the key (C25). */
  headers: Record<string, string>;
  /** serve flags for this store and plans. */
  flags: string[];
}

/**
 * An embedded store with one active account and key, and a plans file whose
 * limits tests do not hit unless they mean to.
 */
export function setupAccess(
  dir: string,
  plan = 'business',
  limits: Record<string, { burst: number; monthly: number }> = {
    business: { burst: 1_000_000, monthly: 100_000_000 },
  },
  account = 'tester',
): TestAccess {
  const store = join(dir, 'store');
  const plans = join(dir, 'plans.json');
  mkdirSync(dir, { recursive: true });
  writeFileSync(plans, JSON.stringify(limits));
  const a = cli(['accounts', 'create', account, '--plan', plan, '--store', store]);
  if (a.status !== 0) throw new Error(a.stderr);
  const k = cli(['keys', 'create', account, '--json', '--store', store]);
  if (k.status !== 0) throw new Error(k.stderr);
  const key = (JSON.parse(k.stdout) as { key: string }).key;
  return {
    store,
    plans,
    key,
    headers: { authorization: `Bearer ${key}` },
    flags: ['--store', store, '--plans', plans],
  };
}

/** A served universe for end-to-end tests: its directory, snapshot, codes, key and server. */
export interface ServedUniverse {
  dir: string;
  snapshots: string;
  lookup: SnapshotLookup;
  codes: string[];
  access: TestAccess;
  server: ServerProcess;
}

/**
 * 120 generated funds built into a snapshot, an account with a key, and a server
 * with two threads and a public base URL: what the REST tests talk to.
 */
export async function startServedUniverse(name: string): Promise<ServedUniverse> {
  const dir = tempDir(name);
  const { snapshots } = generateAndBuild(dir, 120);
  const lookup = new SnapshotLookup((await loadSnapshot(join(snapshots, readCurrent(snapshots)!))).columns);
  const access = setupAccess(dir);
  const server = await startServe([
    ...access.flags,
    '--snapshots',
    snapshots,
    '--threads',
    '2',
    '--base-url',
    'https://api.example.test',
  ]);
  return { dir, snapshots, lookup, codes: lookup.cols.funds.code, access, server };
}
