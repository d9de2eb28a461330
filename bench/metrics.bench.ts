/**
 * What counting one answer for /metrics costs on the request path (server/metrics/
 * counters.ts): the start time and `countReply` (route × status class, a 422 check,
 * a latency bucket and sum), with metrics on and off, next to the clock read alone.
 * The HTTP view of the same cost is `bench/http.bench.ts --metrics 1` against `--metrics 0`.
 *
 *   npx tsx bench/metrics.bench.ts
 */
import { Bench } from 'tinybench';
import {
  countRefusal,
  countReply,
  disableCounters,
  newCounterBuffer,
  requestStarted,
  routeIndex,
  useCounters,
} from '../server/metrics/counters.js';

const route = routeIndex('/v1/funds/{code}/trailing-returns');
const statuses = ['200 OK', '200 OK', '200 OK', '404 Not Found', '422 Unprocessable Content'];
let k = 0;
let sink = 0;

/** Each sample runs the case this many times: one is too short for the timer. */
const N = 1000;
const on = () => useCounters(newCounterBuffer());
const off = () => disableCounters();

const bench = new Bench({ time: 1000, warmupTime: 200 });
bench
  .add(
    'performance.now() alone',
    () => {
      for (let i = 0; i < N; i++) sink += performance.now();
    },
    { beforeAll: off },
  )
  .add(
    'metrics off: requestStarted + countReply',
    () => {
      for (let i = 0; i < N; i++) countReply(route, statuses[k++ % 5], requestStarted());
    },
    { beforeAll: off },
  )
  // Counting into shared memory, as a worker thread does.
  .add(
    'metrics on: requestStarted + countReply',
    () => {
      for (let i = 0; i < N; i++) countReply(route, statuses[k++ % 5], requestStarted());
    },
    { beforeAll: on },
  )
  .add(
    'metrics on: countRefusal',
    () => {
      for (let i = 0; i < N; i++) countRefusal(2);
    },
    { beforeAll: on },
  );

await bench.run();
console.log(`${'case'.padEnd(46)}${'ns/answer'.padStart(12)}${'p99 ns'.padStart(10)}`);
for (const task of bench.tasks) {
  const r = task.result;
  if (r.state !== 'completed') {
    console.log(`${task.name.padEnd(46)} ${r.state}`);
    continue;
  }
  // tinybench reports milliseconds per sample of N.
  const mean = ((r.latency.mean * 1e6) / N).toFixed(1);
  const p99 = ((r.latency.p99 * 1e6) / N).toFixed(1);
  console.log(`${task.name.padEnd(46)}${mean.padStart(12)}${p99.padStart(10)}`);
}
if (sink === 42) console.log('');
