/**
 * A thread's own gauges for /metrics: event-loop delay over the last second, its V8
 * heap, and the Redis limiter's state. Written once a second into the thread's
 * counter array (metrics/counters.ts) by an unref'd timer, never by a request.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { Gauge, OFFSET } from './counters.js';

export interface RedisState {
  /** True while Redis is unreachable and limits are counted in this process. */
  readonly degraded: boolean;
}

const SAMPLE_MS = 1000;
/** The delay monitor's timer period, ms: each sample it takes includes it, so it is taken off. */
const RESOLUTION_MS = 10;

/** Sample into `slots` until the returned function is called; `redis` is null without Redis. */
export function startSampler(slots: Float64Array<ArrayBufferLike>, redis: RedisState | null): () => void {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  const set = (g: Gauge, v: number) => {
    slots[OFFSET.gauges + g] = v;
  };
  const sample = () => {
    // Nanoseconds, each the whole timer period: the delay is what exceeds RESOLUTION_MS.
    const late = (ns: number) => (delay.count > 0 ? Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1000 : 0);
    set(Gauge.LoopDelayMean, late(delay.mean));
    set(Gauge.LoopDelayP99, late(delay.percentile(99)));
    set(Gauge.LoopDelayMax, late(delay.max));
    delay.reset();
    const h = getHeapStatistics();
    set(Gauge.HeapUsed, h.used_heap_size);
    set(Gauge.HeapTotal, h.total_heap_size);
    set(Gauge.External, h.external_memory ?? Number.NaN);
    if (redis !== null) {
      set(Gauge.RedisUp, redis.degraded ? 0 : 1);
      set(Gauge.LocalCounting, redis.degraded ? 1 : 0);
    }
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
