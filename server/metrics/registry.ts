/**
 * /metrics as prom-client renders it (docs/monitoring.md lists every metric). Built
 * on the main thread, read only when scraped: every value comes from the threads'
 * counter arrays (metrics/counters.ts, summed over threads), the snapshot manager's
 * state the supervisor keeps, and the refresh stats file. Each metric overrides
 * `get()` to compute its values then, so nothing is kept twice and the request path
 * never touches a prom-client object.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RefreshStats } from '../../core/refresh-stats.js';
import { dataAgeHours, missingSessions } from '../public/health.js';
import {
  BUCKET_SLOTS,
  Gauge as G,
  GATE_REASONS,
  LATENCY_BUCKETS,
  OFFSET,
  ROUTE_LABELS,
  STATUS_CLASSES,
  TOOL_LABELS,
} from './counters.js';

export interface ThreadSlots {
  /** `main`, `worker-1`, …: the `thread` label. */
  readonly name: string;
  readonly slots: Float64Array<ArrayBufferLike>;
}

export interface SnapshotState {
  id: string;
  asOf: string;
  funds: number;
  loadedAt: number;
}

export interface MetricsSources {
  /** The main thread's gauges and each worker's counters (workers: counters and gauges). */
  threads(): readonly ThreadSlots[];
  snapshot(): SnapshotState | null;
  swaps(): number;
  /** Snapshot refusals so far, by reason (the problem's code). */
  refusals(): ReadonlyMap<string, number>;
  /** The reason a newer snapshot is refused now, or null. */
  refusedNow(): string | null;
  freshnessHours: number;
  now(): number;
  build: { version: string; node: string; commit: string };
  refresh(): RefreshStats | null;
}

type Labels = Record<string, string | number>;
type Value = { value: number; labels: Labels; metricName?: string };

/** prom-client's own `get()` result with our values in it. */
async function withValues<T extends { values: unknown[] }>(base: Promise<T>, values: Value[]): Promise<T> {
  return { ...(await base), values: values as T['values'] };
}

function counter(reg: Registry, name: string, help: string, labelNames: string[], read: () => Value[]) {
  const C = class extends Counter<string> {
    override get() {
      return withValues(super.get(), read());
    }
  };
  return new C({ name, help, labelNames, registers: [reg] });
}

function gauge(reg: Registry, name: string, help: string, labelNames: string[], read: () => Value[]) {
  const C = class extends Gauge<string> {
    override get() {
      return withValues(super.get(), read());
    }
  };
  return new C({ name, help, labelNames, registers: [reg] });
}

/** Sum of one slot over the threads. */
function sum(threads: readonly ThreadSlots[], slot: number): number {
  let n = 0;
  for (const t of threads) n += t.slots[slot];
  return n;
}

const HIST = 'fundreturns_http_request_duration_seconds';
const HIST_HELP = 'Server time of an HTTP answer (route callback to answer written), by route';

const finite = (values: Value[]) => values.filter((v) => Number.isFinite(v.value));

/** HTTP answers by route and status class, 422s and 500s. */
function httpMetrics(reg: Registry, workers: () => ThreadSlots[]): void {
  counter(
    reg,
    'fundreturns_http_requests_total',
    'HTTP answers by route (path template; unmatched: no route) and status class',
    ['route', 'status_class'],
    () => {
      const ts = workers();
      const out: Value[] = [];
      ROUTE_LABELS.forEach((route, r) => {
        STATUS_CLASSES.forEach((status_class, c) => {
          const value = sum(ts, OFFSET.requests + r * 5 + c);
          if (value > 0) out.push({ value, labels: { route, status_class } });
        });
      });
      return out;
    },
  );
  counter(
    reg,
    'fundreturns_http_unprocessable_total',
    'HTTP 422 answers (invalid parameters or body, C15) by route',
    ['route'],
    () => {
      const ts = workers();
      return ROUTE_LABELS.map((route, r) => ({
        value: sum(ts, OFFSET.unprocessable + r),
        labels: { route },
      })).filter((v) => v.value > 0);
    },
  );
  counter(
    reg,
    'fundreturns_http_internal_errors_total',
    'HTTP 500 answers for a handler that threw (each is also logged)',
    [],
    () => [{ value: sum(workers(), OFFSET.internal), labels: {} }],
  );
}

/** Server time of an answer by route, from the threads' bucket counters. */
function latencyHistogram(reg: Registry, workers: () => ThreadSlots[]): void {
  // Our own `get()` alone would not do: prom-client renders a histogram from its untyped
  // getForPromString(), which reads the observations this class never has.
  const H = class extends Histogram<string> {
    getForPromString() {
      return this.get();
    }

    override get() {
      const ts = workers();
      const out: Value[] = [];
      ROUTE_LABELS.forEach((route, r) => {
        let cumulative = 0;
        const base = OFFSET.buckets + r * BUCKET_SLOTS;
        const rows: Value[] = [];
        for (let b = 0; b < BUCKET_SLOTS; b++) {
          cumulative += sum(ts, base + b);
          const le = b < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[b] : '+Inf';
          rows.push({ value: cumulative, labels: { route, le }, metricName: `${HIST}_bucket` });
        }
        if (cumulative === 0) return;
        out.push(...rows);
        out.push({ value: sum(ts, OFFSET.latencySum + r), labels: { route }, metricName: `${HIST}_sum` });
        out.push({ value: cumulative, labels: { route }, metricName: `${HIST}_count` });
      });
      // Not super.get(): it calls getForPromString, which calls this.
      return Promise.resolve({
        name: HIST,
        help: HIST_HELP,
        type: 'histogram',
        values: out,
        aggregator: 'sum',
      } as unknown as Awaited<ReturnType<Histogram<string>['get']>>);
    }
  };
  new H({
    name: HIST,
    help: HIST_HELP,
    labelNames: ['route'],
    buckets: [...LATENCY_BUCKETS],
    registers: [reg],
  });
}

/** The gate's refusals by reason and MCP tool calls by tool and result. */
function gateAndToolMetrics(reg: Registry, workers: () => ThreadSlots[]): void {
  counter(
    reg,
    'fundreturns_gate_refusals_total',
    'Requests the access gate refused: unauthorized 401, forbidden 403, rate-limited 429 (burst), quota-exceeded 429 (monthly quota)',
    ['reason'],
    () => {
      const ts = workers();
      return GATE_REASONS.map((reason, i) => ({ value: sum(ts, OFFSET.gate + i), labels: { reason } }));
    },
  );
  counter(
    reg,
    'fundreturns_mcp_tool_calls_total',
    'MCP tools/call by tool and result (error: the tool answered isError)',
    ['tool', 'result'],
    () => {
      const ts = workers();
      const out: Value[] = [];
      TOOL_LABELS.forEach((tool, i) => {
        out.push({ value: sum(ts, OFFSET.tools + i * 2), labels: { tool, result: 'ok' } });
        out.push({ value: sum(ts, OFFSET.tools + i * 2 + 1), labels: { tool, result: 'error' } });
      });
      return out;
    },
  );
}

/** The snapshot in service and its age. */
function snapshotMetrics(reg: Registry, src: MetricsSources): void {
  const snap = (f: (s: SnapshotState) => Value[]) => () => {
    const s = src.snapshot();
    return s === null ? [] : f(s);
  };
  gauge(
    reg,
    'fundreturns_snapshot_info',
    'The snapshot in service: its id and as_of date (value 1)',
    ['id', 'as_of'],
    snap((s) => [{ value: 1, labels: { id: s.id, as_of: s.asOf } }]),
  );
  gauge(
    reg,
    'fundreturns_snapshot_as_of_timestamp_seconds',
    'The served data as_of date (its US close), unix seconds',
    [],
    snap((s) => [{ value: Date.parse(`${s.asOf}T00:00:00Z`) / 1000, labels: {} }]),
  );
  gauge(
    reg,
    'fundreturns_snapshot_age_seconds',
    "Seconds since the US close of the as_of date (/healthz's data_age_hours times 3600)",
    [],
    snap((s) => [{ value: Math.round(dataAgeHours(s.asOf, new Date(src.now())) * 3600), labels: {} }]),
  );
  gauge(
    reg,
    'fundreturns_snapshot_missing_sessions',
    'Closed NYSE trading sessions after the served as_of: 0 while the data is complete (weekends and holidays add none)',
    [],
    snap((s) => [{ value: missingSessions(s.asOf, src.now()).count, labels: {} }]),
  );
  gauge(
    reg,
    'fundreturns_snapshot_first_missing_close_timestamp_seconds',
    'The US close (16:00 New York) of the first closed session the served data lacks, unix seconds; absent when none',
    [],
    snap((s) => {
      const first = missingSessions(s.asOf, src.now()).firstCloseMs;
      return first === null ? [] : [{ value: first / 1000, labels: {} }];
    }),
  );
  gauge(
    reg,
    'fundreturns_snapshot_freshness_limit_seconds',
    'The age beyond which /healthz says stale (--freshness-hours times 3600)',
    [],
    () => [{ value: src.freshnessHours * 3600, labels: {} }],
  );
  gauge(
    reg,
    'fundreturns_snapshot_funds',
    'Funds in the snapshot in service',
    [],
    snap((s) => [{ value: s.funds, labels: {} }]),
  );
  gauge(
    reg,
    'fundreturns_snapshot_loaded_timestamp_seconds',
    'When the snapshot in service was loaded, unix seconds',
    [],
    snap((s) => [{ value: s.loadedAt / 1000, labels: {} }]),
  );
}

/** Snapshots swapped in and refused. */
function swapMetrics(reg: Registry, src: MetricsSources): void {
  counter(
    reg,
    'fundreturns_snapshot_swaps_total',
    'Snapshots swapped in after the first (every thread serves the new one)',
    [],
    () => [{ value: src.swaps(), labels: {} }],
  );
  counter(
    reg,
    'fundreturns_snapshot_refusals_total',
    'Newer snapshots refused (each distinct problem once), by reason (the /healthz problem code)',
    ['reason'],
    () => [...src.refusals()].map(([reason, value]) => ({ value, labels: { reason } })),
  );
  gauge(
    reg,
    'fundreturns_snapshot_refused',
    '1 while a newer snapshot is refused (the older one keeps serving), by reason; 0 otherwise',
    ['reason'],
    () => {
      const r = src.refusedNow();
      return [{ value: r === null ? 0 : 1, labels: { reason: r ?? '' } }];
    },
  );
}

/** Per-thread gauges: Redis, local counting, event-loop delay and heap. */
function threadMetrics(reg: Registry, src: MetricsSources): void {
  const perThread = (slot: number) => () =>
    finite(src.threads().map((t) => ({ value: t.slots[OFFSET.gauges + slot], labels: { thread: t.name } })));
  gauge(
    reg,
    'fundreturns_redis_up',
    'Per serving thread: 1 while its Redis limiter is connected, 0 while Redis is unreachable (absent without Redis)',
    ['thread'],
    perThread(G.RedisUp),
  );
  gauge(
    reg,
    'fundreturns_limits_local',
    'Per serving thread: 1 while limits are counted in this process because Redis is unreachable',
    ['thread'],
    perThread(G.LocalCounting),
  );
  gauge(
    reg,
    'fundreturns_event_loop_delay_seconds',
    'Event-loop delay per thread over the last second: mean, p99 and max',
    ['thread', 'stat'],
    () =>
      finite(
        src.threads().flatMap((t) =>
          (
            [
              ['mean', G.LoopDelayMean],
              ['p99', G.LoopDelayP99],
              ['max', G.LoopDelayMax],
            ] as const
          ).map(([stat, g]) => ({ value: t.slots[OFFSET.gauges + g], labels: { thread: t.name, stat } })),
        ),
      ),
  );
  gauge(
    reg,
    'fundreturns_heap_bytes',
    "Per thread: its V8 heap's used and total bytes and external memory (RSS is process-wide: process_resident_memory_bytes)",
    ['thread', 'kind'],
    () =>
      finite(
        src.threads().flatMap((t) =>
          (
            [
              ['used', G.HeapUsed],
              ['total', G.HeapTotal],
              ['external', G.External],
            ] as const
          ).map(([kind, g]) => ({ value: t.slots[OFFSET.gauges + g], labels: { thread: t.name, kind } })),
        ),
      ),
  );
}

function buildInfo(reg: Registry, src: MetricsSources): void {
  gauge(
    reg,
    'fundreturns_build_info',
    'The running build (value 1): package version, Node.js version and git commit (unknown if not known)',
    ['version', 'node_version', 'commit'],
    () => [
      {
        value: 1,
        labels: { version: src.build.version, node_version: src.build.node, commit: src.build.commit },
      },
    ],
  );
}

function refreshMetrics(reg: Registry, src: MetricsSources): void {
  // From `fundreturns refresh` (core/refresh-stats.ts): absent until a run is recorded.
  const refresh = (f: (s: RefreshStats) => Value[]) => () => {
    const s = src.refresh();
    return s === null ? [] : f(s);
  };
  counter(
    reg,
    'fundreturns_refresh_runs_total',
    'Refresh runs recorded in the snapshots directory, by outcome (ok, failed, …)',
    ['outcome'],
    refresh((s) => Object.entries(s.runs).map(([outcome, value]) => ({ value, labels: { outcome } }))),
  );
  counter(
    reg,
    'fundreturns_refresh_duration_seconds_total',
    'Seconds spent in refresh runs, by outcome',
    ['outcome'],
    refresh((s) => Object.entries(s.seconds).map(([outcome, value]) => ({ value, labels: { outcome } }))),
  );
  gauge(
    reg,
    'fundreturns_refresh_last_run_timestamp_seconds',
    'When the last refresh run ended, unix seconds, with its outcome',
    ['outcome'],
    refresh((s) => (s.last === null ? [] : [{ value: s.last.at, labels: { outcome: s.last.outcome } }])),
  );
  gauge(
    reg,
    'fundreturns_refresh_last_success_timestamp_seconds',
    'When the last refresh run that did not fail ended, unix seconds',
    [],
    refresh((s) => (s.lastSuccessAt === null ? [] : [{ value: s.lastSuccessAt, labels: {} }])),
  );
  gauge(
    reg,
    'fundreturns_refresh_last_duration_seconds',
    'How long the last refresh run took',
    [],
    refresh((s) => (s.last === null ? [] : [{ value: s.last.seconds, labels: {} }])),
  );
  gauge(
    reg,
    'fundreturns_refresh_last_rows',
    'Rows the last refresh run wrote',
    [],
    refresh((s) => (s.last === null ? [] : [{ value: s.last.rows, labels: {} }])),
  );
}

/** Every metric, registered in the order /metrics lists them. */
export function metricsRegistry(src: MetricsSources): Registry {
  const reg = new Registry();
  // The main thread's process figures (RSS, CPU, open files, GC): the standard names.
  collectDefaultMetrics({ register: reg });
  // Gauges whose names end in _total read as counters to Prometheus (promtool check
  // metrics warns); each is the sum of its typed twin (nodejs_active_handles{type}…).
  for (const name of [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ])
    reg.removeSingleMetric(name);
  const workers = () => src.threads().filter((t) => t.name !== 'main');
  httpMetrics(reg, workers);
  latencyHistogram(reg, workers);
  gateAndToolMetrics(reg, workers);
  snapshotMetrics(reg, src);
  swapMetrics(reg, src);
  threadMetrics(reg, src);
  buildInfo(reg, src);
  refreshMetrics(reg, src);
  return reg;
}
