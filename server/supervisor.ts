/**
 * The serving process: N uWS event loops in worker threads on one port, fed by a
 * main thread that loads snapshots into shared memory and swaps them in. Stops on
 * SIGTERM/SIGINT: listeners close first, requests in flight finish, exit 0.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { loadPlans } from '../accounts/plans.js';
import { redactUrl } from '../accounts/redact-url.js';
import { now as clockNow, testClockShiftMs } from '../core/clock.js';
import { packageVersion } from '../core/package-version.js';
import { readRefreshStats } from '../core/refresh-stats.js';
import { startWorker } from '../core/start-thread.js';
import { startAccess } from './access/startup.js';
import { localBaseUrl, type ServeConfig } from './config.js';
import { describeMailer } from './dashboard/mailer.js';
import { loadUws } from './http/uws.js';
import { serverLogger } from './log.js';
import { prepareToolResults } from './mcp/tool-results.js';
import { type AdminListener, startAdmin } from './metrics/admin.js';
import { newCounterBuffer, SLOTS } from './metrics/counters.js';
import { metricsRegistry, type SnapshotState, type ThreadSlots } from './metrics/registry.js';
import { startSampler } from './metrics/sampler.js';
import { loadClaim } from './public/claim.js';
import { SnapshotManager } from './snapshot/manager.js';
import type { SnapshotMessage } from './snapshot/serving.js';
import { WorkerPool } from './worker-pool.js';

export interface RunningServer {
  port: number;
  /** Resolves once every worker has stopped. */
  stop(): Promise<void>;
  /** Resolves when every worker serves snapshot `id` (tests, benchmarks). */
  waitForSnapshot(id: string, timeoutMs?: number): Promise<void>;
  manager: SnapshotManager;
  /** Unrevoked API keys in the access store at start: 0 means every data request answers 401. */
  keys: number;
  /** The admin listener's port (/metrics), or null when metrics are off. */
  adminPort: number | null;
}

export interface StartOptions {
  /** Fixed clock for /healthz (tests). */
  fixedNow?: Date;
}

/**
 * Bind `port` (0: any) without SO_REUSEPORT and let it go. uWS's workers share their
 * port through SO_REUSEPORT, which would as gladly share it with another server
 * already listening there, splitting the traffic between two services in silence;
 * a plain bind fails on any port in use, so the server refuses to start instead.
 */
function probePort(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${host} is in use (another server is listening there)`)
          : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN'
            ? new Error(`--host ${host} is not a name this machine can resolve (${e.code})`)
            : e.code === 'EADDRNOTAVAIL'
              ? new Error(`--host ${host} is not an address of this machine (EADDRNOTAVAIL)`)
              : e,
      ),
    );
    s.listen({ port, host, exclusive: true }, () => {
      const a = s.address();
      const p = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(p));
    });
  });
}

const log = serverLogger();

/** What is checked and opened before anything listens: uWS, the claim file, the plans, the port. */
async function prepare(config: ServeConfig) {
  loadUws();
  // Refuse a bad claim file here, with its message, rather than in every worker.
  loadClaim({ name: config.claimName, file: config.claimFile ?? undefined });
  const plans = loadPlans(config.plansFile);
  const version = packageVersion();
  // Port 0 is resolved here too: uWS sets SO_REUSEPORT only for a fixed port.
  const port = await probePort(config.host, config.port);
  return { plans, version, port };
}

/**
 * The snapshot is loaded before any thread listens: a server that answers at all
 * answers from its data, never "No data loaded" (C24) while that data is loading.
 */
function snapshotManager(config: ServeConfig, pool: WorkerPool, metrics: MetricsState | null) {
  return new SnapshotManager(
    config.snapshots,
    config.pollMs,
    {
      onSnapshot: (msg) => {
        pool.latest = msg;
        metrics?.onSnapshot(msg);
        pool.send(msg);
      },
      onProblem: (message) => {
        pool.problem = message;
        metrics?.onProblem(message);
        pool.send({ type: 'problem', message });
      },
      log: (level, msg, fields) => log[level](fields ?? {}, msg),
    },
    prepareToolResults,
  );
}

/** /metrics on the admin listener, or null when metrics are off. */
async function startMetrics(
  config: ServeConfig,
  metrics: MetricsState | null,
  version: string,
  opts: StartOptions,
): Promise<AdminListener | null> {
  if (metrics === null || config.adminPort === null) return null;
  return startAdmin(
    metricsRegistry({
      ...metrics.sources(),
      freshnessHours: config.freshnessHours,
      now: () => opts.fixedNow?.getTime() ?? clockNow(),
      build: { version, node: process.versions.node, commit: buildCommit() },
      refresh: () => readRefreshStats(config.snapshots),
    }),
    config.adminHost,
    config.adminPort,
  );
}

/** What the operator should know once the server listens. */
function logStarted(
  config: ServeConfig,
  started: {
    port: number;
    snapshot: string | null;
    problem: string | null;
    keys: number;
    admin: AdminListener | null;
  },
): void {
  const { admin, keys } = started;
  log.info(
    {
      port: started.port,
      threads: config.threads,
      snapshot: started.snapshot,
      problem: started.problem,
      keys,
      admin: admin === null ? null : `${config.adminHost}:${admin.port}`,
    },
    'listening',
  );
  if (config.threads > availableParallelism())
    log.warn(
      { threads: config.threads, cores: availableParallelism() },
      'more threads than cores: each holds its own copy of the served rows and they take turns on the cores',
    );
  const shift = testClockShiftMs();
  if (shift !== null)
    log.warn(
      { now: new Date(clockNow()).toISOString(), shift_ms: shift },
      'FUNDRETURNS_TEST_CLOCK is set: this server runs on a moved clock (for tests only)',
    );
  if (config.dashboard)
    log.info(
      { dashboard: `${config.baseUrl}/account`, max_keys: config.maxKeys },
      `account dashboard on; ${describeMailer(config)}`,
    );
  if (keys === 0)
    log.warn(
      { store: redactUrl(config.store) },
      'the access store has no API keys: every /v1 and /mcp request answers 401 until one is created',
    );
}

export async function startServer(given: ServeConfig, opts: StartOptions = {}): Promise<RunningServer> {
  let config = given;
  const { plans, version, port } = await prepare(config);
  const access = await startAccess(config.store, plans, log);
  const metrics = config.adminPort === null ? null : new MetricsState();
  if (config.baseUrlDerived) config = { ...config, baseUrl: localBaseUrl(config.host, port) };
  const pool = new WorkerPool({
    config,
    version,
    fixedNow: opts.fixedNow ? opts.fixedNow.getTime() : null,
    access,
    plans,
    addMetrics: () => metrics?.addWorker() ?? null,
    startWorker: (input) => startWorker(import.meta.url, 'server-thread', { workerData: input }),
    log,
  });
  access.onTable((table) => pool.send({ type: 'keys', table }));
  const manager = snapshotManager(config, pool, metrics);
  let listeningPort = port;
  let admin: AdminListener | null = null;
  try {
    // Before any thread: a port in use refuses the start before a worker listens (a
    // listening uWS worker cannot be terminated cleanly).
    admin = await startMetrics(config, metrics, version, opts);
    await manager.start();
    listeningPort = await pool.start(port, config.threads);
  } catch (e) {
    await admin?.close();
    metrics?.stop();
    manager.stop();
    pool.terminate();
    await access.stop();
    throw e;
  }
  const keys = access.table().entries.length;
  logStarted(config, {
    port: listeningPort,
    snapshot: manager.currentId,
    problem: pool.problem,
    keys,
    admin,
  });

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await admin?.close();
      metrics?.stop();
      manager.stop();
      await pool.stop();
      // After the threads: what they counted while draining is saved too (usage, daily counts).
      await access.stop();
      log.info('stopped');
    })();
    return stopping;
  };

  return {
    port: listeningPort,
    stop,
    waitForSnapshot: pool.waitAll.bind(pool),
    manager,
    keys,
    adminPort: admin?.port ?? null,
  };
}

/**
 * What /metrics reads on the main thread: each worker's counters (shared memory),
 * this thread's own gauges, and the snapshot manager's events as they came.
 */
class MetricsState {
  readonly #threads: ThreadSlots[] = [];
  #snapshot: SnapshotState | null = null;
  #swaps = 0;
  readonly #refusals = new Map<string, number>();
  #refusedNow: string | null = null;
  readonly #stopSampler: () => void;

  constructor() {
    const main = new Float64Array(SLOTS).fill(Number.NaN);
    this.#threads.push({ name: 'main', slots: main });
    this.#stopSampler = startSampler(main, null);
  }

  addWorker(): SharedArrayBuffer {
    const b = newCounterBuffer();
    this.#threads.push({ name: `worker-${this.#threads.length}`, slots: new Float64Array(b) });
    return b;
  }

  onSnapshot(msg: SnapshotMessage): void {
    if (this.#snapshot !== null) this.#swaps++;
    const m = msg.manifest;
    this.#snapshot = { id: msg.id, asOf: m.as_of, funds: m.counts.funds, loadedAt: Date.parse(msg.loadedAt) };
  }

  /** A problem is `CODE: sentence` (snapshot/manager.ts): the code is the reason label. */
  onProblem(message: string | null): void {
    if (message === null) {
      this.#refusedNow = null;
      return;
    }
    const reason = /^[A-Z_]+(?=:)/.exec(message)?.[0] ?? 'OTHER';
    this.#refusals.set(reason, (this.#refusals.get(reason) ?? 0) + 1);
    this.#refusedNow = reason;
  }

  sources() {
    return {
      threads: () => this.#threads,
      snapshot: () => this.#snapshot,
      swaps: () => this.#swaps,
      refusals: () => this.#refusals,
      refusedNow: () => this.#refusedNow,
    };
  }

  stop(): void {
    this.#stopSampler();
  }
}

/**
 * The build's git commit: FUNDRETURNS_COMMIT if set (packaged builds), else the `COMMIT`
 * file `make install` writes (an install has no .git), else the checkout's, else `unknown`.
 */
function buildCommit(): string {
  const given = process.env.FUNDRETURNS_COMMIT;
  if (given !== undefined && /^[0-9a-f]{4,40}$/.test(given)) return given;
  const root = new URL('../..', import.meta.url);
  let installed = '';
  try {
    installed = readFileSync(new URL('COMMIT', root), 'utf8').trim();
  } catch {
    // Not an install: ask git.
  }
  if (/^[0-9a-f]{4,40}$/.test(installed)) return installed;
  const r = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 2000,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const out = r.status === 0 ? r.stdout.trim() : '';
  return /^[0-9a-f]{4,40}$/.test(out) ? out : 'unknown';
}
