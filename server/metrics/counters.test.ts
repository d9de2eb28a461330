import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS } from '../mcp/tool-list.js';
import {
  BUCKET_SLOTS,
  countReply,
  disableCounters,
  LATENCY_BUCKETS,
  newCounterBuffer,
  OFFSET,
  ROUTE_UNMATCHED,
  routeIndex,
  TOOL_LABELS,
  useCounters,
} from './counters.js';

afterEach(() => disableCounters());

describe('a thread’s counters', () => {
  it('name every MCP tool tools/list offers, so no tools/call goes uncounted', () => {
    expect([...TOOL_LABELS].sort()).toEqual(TOOLS.map((t) => t.name).sort());
  });

  it('count an answer by route and status class, a 422 apart, and its latency in one bucket', () => {
    const buffer = newCounterBuffer();
    const slots = new Float64Array(buffer);
    useCounters(buffer);
    const r = routeIndex('/v1/funds/{code}');
    countReply(r, '200 OK', performance.now());
    countReply(r, '422 Unprocessable Content', performance.now());
    countReply(r, '404 Not Found', performance.now() - 3000);
    countReply(ROUTE_UNMATCHED, '503 Service Unavailable', performance.now());
    expect(slots[OFFSET.requests + r * 5 + 1]).toBe(1);
    expect(slots[OFFSET.requests + r * 5 + 3]).toBe(2);
    expect(slots[OFFSET.unprocessable + r]).toBe(1);
    expect(slots[OFFSET.requests + ROUTE_UNMATCHED * 5 + 4]).toBe(1);
    const buckets = slots.subarray(
      OFFSET.buckets + r * BUCKET_SLOTS,
      OFFSET.buckets + (r + 1) * BUCKET_SLOTS,
    );
    expect(buckets.reduce((a, b) => a + b, 0)).toBe(3);
    // The 3-second one lands in the 5 s bucket (le=5), the last finite one.
    expect(buckets[LATENCY_BUCKETS.length - 1]).toBe(1);
    expect(slots[OFFSET.latencySum + r]).toBeGreaterThanOrEqual(3);
  });

  it('count nothing while metrics are off', () => {
    const buffer = newCounterBuffer();
    useCounters(buffer);
    disableCounters();
    countReply(0, '200 OK', 0);
    expect(new Float64Array(buffer).subarray(0, OFFSET.gauges).every((v) => v === 0)).toBe(true);
  });
});
