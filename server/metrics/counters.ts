/**
 * What one thread counts for /metrics (docs/monitoring.md), kept in a Float64Array
 * over a SharedArrayBuffer the main thread reads when /metrics is scraped: the
 * request path only adds one to a slot whose index it computes from integers (a
 * route index fixed when routes are registered, the status line's first digit, a
 * latency bucket), with no allocation, no lock and no prom-client object. Float64
 * slots count exactly up to 2^53, far past any server's life.
 *
 * Only this thread writes its array, so plain increments are safe; the reader may see
 * a count one request behind, which a scrape tolerates. While metrics are off (no
 * --admin-port), `enabled` is false and the request path skips all of it.
 */
import { MCP_TOOL_INPUT_SCHEMAS, type McpToolName } from '../../schemas/mcp.js';
import { ROUTES } from '../../schemas/routes.js';

/** The `route` label: each route's path template, then `unmatched` (C21's 404 for any other path). */
export const ROUTE_LABELS: readonly string[] = [...ROUTES.map((r) => r.path), 'unmatched'];
export const ROUTE_UNMATCHED = ROUTES.length;
const NR = ROUTE_LABELS.length;

/** Route index by path template, for the registrations (server/app.ts) and MCP. */
export function routeIndex(path: string): number {
  const i = ROUTE_LABELS.indexOf(path);
  if (i < 0) throw new Error(`no route ${path}`);
  return i;
}

/** Status classes 1xx..5xx. */
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/**
 * Upper bounds of the latency buckets, seconds: from 100 µs (a prepared row answers
 * in some 10 µs of server time) to 5 s (the longest a refused gate or an MCP batch
 * should ever take); one more slot counts what is above the last.
 */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
] as const;
const NB = LATENCY_BUCKETS.length + 1;

/** Gate refusals, by reason (server/access/key-gate.ts). */
export const GATE_REASONS = ['unauthorized', 'forbidden', 'rate-limited', 'quota-exceeded'] as const;

/** MCP tools in the order of their schemas (schemas/mcp.ts), each counted ok and error. */
export const TOOL_LABELS = Object.keys(MCP_TOOL_INPUT_SCHEMAS) as readonly McpToolName[];

/** Per-thread gauges the thread's sampler writes (metrics/sampler.ts); NaN: not known. */
export const Gauge = {
  LoopDelayMean: 0,
  LoopDelayP99: 1,
  LoopDelayMax: 2,
  HeapUsed: 3,
  HeapTotal: 4,
  External: 5,
  /** 1 when the Redis limiter is connected, 0 while it is not; NaN without Redis. */
  RedisUp: 6,
  /** 1 while limits are counted in this process because Redis is unreachable. */
  LocalCounting: 7,
} as const;
export type Gauge = (typeof Gauge)[keyof typeof Gauge];
const GAUGES = 8;

export const OFFSET = {
  requests: 0,
  unprocessable: NR * STATUS_CLASSES.length,
  buckets: NR * STATUS_CLASSES.length + NR,
  latencySum: NR * STATUS_CLASSES.length + NR + NR * NB,
  gate: NR * STATUS_CLASSES.length + NR + NR * NB + NR,
  tools: NR * STATUS_CLASSES.length + NR + NR * NB + NR + GATE_REASONS.length,
  /** 500s answered by the guard (http/guard.ts) for a handler that threw: their route is not known there. */
  internal: NR * STATUS_CLASSES.length + NR + NR * NB + NR + GATE_REASONS.length + TOOL_LABELS.length * 2,
  gauges: NR * STATUS_CLASSES.length + NR + NR * NB + NR + GATE_REASONS.length + TOOL_LABELS.length * 2 + 1,
} as const;
export const SLOTS = OFFSET.gauges + GAUGES;
export const BUCKET_SLOTS = NB;

/** A thread's counters, zeroed, over shared memory the main thread keeps a view of. */
export function newCounterBuffer(): SharedArrayBuffer {
  const b = new SharedArrayBuffer(SLOTS * Float64Array.BYTES_PER_ELEMENT);
  new Float64Array(b).fill(Number.NaN, OFFSET.gauges);
  return b;
}

let slots: Float64Array<ArrayBufferLike> = new Float64Array(SLOTS);
let enabled = false;

/** Count into `buffer` from now on (a worker thread, with metrics on). */
export function useCounters(buffer: SharedArrayBuffer): void {
  slots = new Float64Array(buffer);
  enabled = true;
}

/** Stop counting (tests). */
export function disableCounters(): void {
  enabled = false;
  slots = new Float64Array(SLOTS);
}

/** When the request started (ms, performance.now()); 0 while metrics are off, which costs nothing. */
export function requestStarted(): number {
  return enabled ? performance.now() : 0;
}

/**
 * Count one answer: its route, status class (from the status line's first digit),
 * a 422 apart, and its latency since `started` in its bucket.
 */
export function countReply(route: number, status: string, started: number): void {
  if (!enabled) return;
  const c = status.charCodeAt(0) - 49;
  const s = slots;
  s[route * 5 + (c >= 0 && c < 5 ? c : 4)]++;
  // '422': the one 4xx that says the request itself was wrong (C15).
  if (c === 3 && status.charCodeAt(1) === 50 && status.charCodeAt(2) === 50)
    s[OFFSET.unprocessable + route]++;
  const seconds = (performance.now() - started) / 1000;
  let b = 0;
  while (b < NB - 1 && seconds > LATENCY_BUCKETS[b]) b++;
  s[OFFSET.buckets + route * NB + b]++;
  s[OFFSET.latencySum + route] += seconds;
}

/** Count a gate refusal (index into GATE_REASONS). */
export function countRefusal(reason: number): void {
  if (enabled) slots[OFFSET.gate + reason]++;
}

/** Count one MCP tools/call of tool `tool` (index into TOOL_LABELS), and whether its result was an error. */
export function countToolCall(tool: number, isError: boolean): void {
  if (enabled) slots[OFFSET.tools + tool * 2 + (isError ? 1 : 0)]++;
}

/** Count a 500 the guard answered for a handler that threw. */
export function countInternalError(): void {
  if (enabled) slots[OFFSET.internal]++;
}
