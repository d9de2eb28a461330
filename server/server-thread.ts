/**
 * One uWS event loop in a worker thread: all threads listen on the same port
 * (SO_REUSEPORT) and serve from snapshots the main thread loaded into shared
 * memory. Messages from the main thread: `snapshot` (swap to it), `problem` (a
 * newer snapshot was refused), `shutdown` (stop accepting, finish, exit).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Limiter, PlanLimits, PlanName } from '../accounts/model.js';
import { openStore } from '../accounts/open-store.js';
import { now } from '../core/clock.js';
import { escapeControls } from '../core/escape.js';
import { KeyCounts } from './access/key-counts.js';
import { AccessGate } from './access/key-gate.js';
import { type LimiterShared, LocalLimiter } from './access/limiter-local.js';
import { LOOK_DEADLINE_MS, LOOK_INTERVAL_MS, Lookout } from './access/lookout.js';
import type { KeyTableData } from './access/table.js';
import { createApp } from './app.js';
import type { AppContext, StaticResource } from './app-context.js';
import type { ServeConfig } from './config.js';
import { Dashboard } from './dashboard/dashboard.js';
import { HASHES_AT_ONCE, HASHES_WAITING, HashPool } from './dashboard/hash-pool.js';
import { mailerFrom } from './dashboard/mailer.js';
import { inflight } from './http/body.js';
import { closeConnectionsAfterReplies, onReply, trustProxies } from './http/call.js';
import { parseTrustedProxies } from './http/client-address.js';
import { onInternalError } from './http/guard.js';
import { loadUws, type us_listen_socket } from './http/uws.js';
import { serverLogger } from './log.js';
import { originPolicy } from './mcp/origin.js';
import { serverInfo } from './mcp/server.js';
import { useCounters } from './metrics/counters.js';
import { type RedisState, startSampler } from './metrics/sampler.js';
import { healthBody } from './public/health.js';
import { GROWTH_SVG_PATH, growthSvgResource, openApiResource, staticResources } from './resources.js';
import { ServingSnapshot, type SnapshotMessage } from './snapshot/serving.js';

export interface WorkerInput {
  config: ServeConfig;
  /** The port to listen on (0 only for the first worker; the others reuse what it got). */
  port: number;
  version: string;
  /** Fixed clock for tests (ms since epoch), else null. */
  fixedNow: number | null;
  access: {
    limiter: LimiterShared;
    table: KeyTableData;
    /** Set in multi-machine mode: limits are counted in this Redis. */
    redis: string | null;
    /** The plan limits this server enforces (C26, --plans): the dashboard's plans page. */
    plans: Readonly<Record<PlanName, PlanLimits>>;
    /** This thread's requests per key (key-counts.ts), which the main thread flushes daily counts from. */
    keyCounts: SharedArrayBuffer;
  };
  /** The snapshot to serve from the start (null: none loaded), and the problem to report. */
  snapshot: SnapshotMessage | null;
  problem: string | null;
  /** This thread's counters for /metrics (metrics/counters.ts), or null when metrics are off. */
  metrics: SharedArrayBuffer | null;
}

export type ToWorker =
  | SnapshotMessage
  | { type: 'problem'; message: string | null }
  | { type: 'collect' }
  | { type: 'keys'; table: KeyTableData }
  /** The look asked for by `look` `id` is done: any newer table was sent before this. */
  | { type: 'looked'; id: number }
  | { type: 'shutdown' };

export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'listen-failed'; message: string }
  | { type: 'swapped'; id: string }
  | { type: 'swap-failed'; id: string; message: string }
  /** A request carries a well-formed key this thread does not know: read the store's new changes. */
  | { type: 'look'; id: number }
  | { type: 'stopped' };

/**
 * How long a stopping server keeps answering on open connections (with Connection:
 * close) before closing the rest. A client that got an answer just before the stop and
 * sends again within this is told to go, not reset; a second covers a client whose
 * own process stalls (a loaded machine; 250 ms was seen to be too short in CI).
 */
const DRAIN_MS = 1000;

const input = workerData as WorkerInput;
const config = input.config;
const uws = loadUws();
const resources = staticResources(config);
let current: ServingSnapshot | null = null;
let problem: string | null = input.problem;
if (input.snapshot !== null) {
  // Attached before listening; a snapshot the main thread verified but this thread cannot attach fails the start.
  current = new ServingSnapshot(input.snapshot, config.benchmark);
  resources.set('/openapi.json', openApiResource(config, current));
  resources.set(GROWTH_SVG_PATH, growthSvgResource(current));
  // workerData lives as long as the thread: without this the first snapshot's buffers never go after a swap.
  input.snapshot = null;
}

const localLimiter = new LocalLimiter(input.access.limiter);
const redis = input.access.redis === null ? null : await redisLimiter(input.access.redis, localLimiter);
const limiter: Limiter = redis ?? localLimiter;
/**
 * Looks at the store for a key this thread does not know (read-your-writes, lookout.ts):
 * the main thread reads the store's new changes and sends the table, then says `looked`.
 * At most one a LOOK_INTERVAL_MS from this thread; one unanswered for LOOK_DEADLINE_MS
 * (a store that does not answer) ends anyway, and the key is refused.
 */
const looksWaiting = new Map<number, () => void>();
let lookId = 0;
const lookout = new Lookout(
  () =>
    new Promise<void>((resolve) => {
      const id = ++lookId;
      const timer = setTimeout(() => {
        looksWaiting.delete(id);
        resolve();
      }, LOOK_DEADLINE_MS);
      looksWaiting.set(id, () => {
        clearTimeout(timer);
        looksWaiting.delete(id);
        resolve();
      });
      parentPort!.postMessage({ type: 'look', id } satisfies FromWorker);
    }),
  LOOK_INTERVAL_MS,
);
if (input.metrics !== null) {
  useCounters(input.metrics);
  // The Redis limiter says whether it counts locally (an outage); without Redis there is nothing to say.
  startSampler(new Float64Array(input.metrics), redis);
}
const gate = new AccessGate(
  config.baseUrl,
  limiter,
  now,
  () => lookout.request(),
  new KeyCounts(input.access.keyCounts),
);
gate.setTable(input.access.table);

/** Limiter slots by account, from the latest key table (the dashboard's usage figures). */
let accountSlots = slotsOf(input.access.table);
function slotsOf(table: KeyTableData): Map<string, number> {
  return new Map(table.entries.map(([, e]) => [e.accountId, e.slot]));
}

/** The dashboard reads and writes the store from this thread: pages are rare, the store is shared. */
let hashPool: HashPool | null = null;
const dashboard = config.dashboard ? await startDashboard() : null;

async function startDashboard(): Promise<Dashboard> {
  const log = serverLogger();
  const store = await openStore(config.store, (level, msg, fields) => log[level](fields ?? {}, msg));
  const hasher = new HashPool({
    threads: HASHES_AT_ONCE,
    queue: HASHES_WAITING,
    onError: (e) => log.error({ error: e.stack ?? e.message }, 'a password-hashing thread failed'),
  });
  hashPool = hasher;
  return new Dashboard({
    hasher,
    store,
    mailer: mailerFrom(config, (line) => log.info(line)),
    plans: input.access.plans,
    baseUrl: config.baseUrl,
    maxKeys: config.maxKeys,
    now,
    limiter,
    slotOf: (id) => accountSlots.get(id),
    log: (level, msg, fields) => log[level](fields ?? {}, msg),
  });
}

/** Redis counts for every server; the shared-memory limiter takes over while Redis is unreachable. */
async function redisLimiter(url: string, fallback: LocalLimiter): Promise<Limiter & RedisState> {
  const { RedisLimiter } = await import('./access/limiter-redis.js');
  const log = serverLogger();
  const r = new RedisLimiter(url, {
    fallback,
    log: (level, msg, fields) => log[level](fields ?? {}, msg),
  });
  await r.connect();
  return r;
}

const ctx: AppContext = {
  gate,
  snapshot: () => current,
  health: () => {
    const h = healthBody({
      snapshot: current
        ? { id: current.id, funds: current.funds, loadedAt: current.loadedAt, asOf: current.asOf }
        : null,
      now: new Date(input.fixedNow ?? now()),
      freshnessMaxAgeHours: config.freshnessHours,
      version: input.version,
      problem,
    });
    return { status: h.status, body: JSON.stringify(h.body) };
  },
  resource: (path: string): StaticResource | undefined => resources.get(path),
  dashboard,
  mcp: {
    info: serverInfo(input.version),
    originAllowed: originPolicy(config.baseUrl, config.mcpOrigins),
  },
};

if (config.trustProxy.length > 0) {
  // Validated by the CLI already (serve-config.ts): a BlockList does not cross threads, so each builds its own.
  const trust = parseTrustedProxies(config.trustProxy.join(','));
  if (typeof trust !== 'string') trustProxies(trust);
}

if (config.accessLogSample > 0) {
  // One line in N requests: enough to see traffic without paying for a log write per request.
  const log = serverLogger();
  onReply(
    (method, path, status, client) =>
      log.info(
        // The path is the client's bytes: JSON escapes C0 only, so DEL, C1 and bidi are escaped here.
        {
          method,
          path: escapeControls(path),
          status: Number.parseInt(status, 10),
          client,
          sample: config.accessLogSample,
        },
        'request',
      ),
    config.accessLogSample,
  );
}

{
  const log = serverLogger();
  onInternalError((error, suppressed) =>
    log.error(
      { error: error instanceof Error ? (error.stack ?? error.message) : String(error), suppressed },
      'request failed: answered 500',
    ),
  );
}

const app = createApp(ctx);
let listenSocket: us_listen_socket | null = null;

app.listen(config.host, input.port, (socket) => {
  if (!socket) {
    parentPort!.postMessage({
      type: 'listen-failed',
      message: `cannot listen on ${config.host}:${input.port}`,
    } satisfies FromWorker);
    return;
  }
  listenSocket = socket;
  parentPort!.postMessage({ type: 'listening', port: uws.us_socket_local_port(socket) } satisfies FromWorker);
});

parentPort!.on('message', (m: ToWorker) => {
  if (m.type === 'snapshot') {
    try {
      const next = new ServingSnapshot(m, config.benchmark);
      resources.set('/openapi.json', openApiResource(config, next));
      resources.set(GROWTH_SVG_PATH, growthSvgResource(next));
      current = next;
      parentPort!.postMessage({ type: 'swapped', id: m.id } satisfies FromWorker);
    } catch (e) {
      parentPort!.postMessage({
        type: 'swap-failed',
        id: m.id,
        message: (e as Error).message,
      } satisfies FromWorker);
    }
  } else if (m.type === 'problem') {
    problem = m.message;
  } else if (m.type === 'keys') {
    gate.setTable(m.table);
    accountSlots = slotsOf(m.table);
  } else if (m.type === 'looked') {
    looksWaiting.get(m.id)?.();
  } else if (m.type === 'collect') {
    // gc is exposed by the main thread (v8 flag set before this worker started).
    (globalThis as { gc?: () => void }).gc?.();
  } else if (m.type === 'shutdown') {
    if (listenSocket) uws.us_listen_socket_close(listenSocket);
    listenSocket = null;
    // Keep-alive clients still send on their open connections: for a short while each
    // is answered with Connection: close and closed after it, so a busy client is told
    // to go, not reset mid-request (an idle connection is closed at the end).
    closeConnectionsAfterReplies();
    // Every request is answered synchronously once its body is in: wait only for bodies.
    const deadline = Date.now() + 10_000;
    const finish = () => {
      if (inflight.bodies > 0 && Date.now() < deadline) {
        setTimeout(finish, 5);
        return;
      }
      setTimeout(async () => {
        // close() exists on this uWS build (it ends every open connection) but is missing from its types.
        (app as unknown as { close(): void }).close();
        // What pages left to do after their answers (an email, a new account) ends first.
        if (dashboard !== null) {
          await Promise.race([dashboard.afterAnswer.settle(), new Promise((r) => setTimeout(r, 10_000))]);
        }
        await hashPool?.close();
        parentPort!.postMessage({ type: 'stopped' } satisfies FromWorker);
      }, DRAIN_MS);
    };
    finish();
  }
});
