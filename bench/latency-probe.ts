/**
 * A worker thread of a benchmark that asks one path again and again on one kept-alive
 * connection, a request every `intervalMs` (or as soon as the last is answered when
 * it took longer), for `seconds`, and posts each answer's time (ms) and status. Kept
 * off the benchmark's own event loop, so the load it makes meanwhile does not delay it.
 */
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

export interface ProbeInput {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly intervalMs: number;
  readonly seconds: number;
}

export interface ProbeResult {
  readonly ms: number[];
  /** When each request was sent (epoch ms, performance.timeOrigin + now: every thread agrees). */
  readonly at: number[];
  readonly statuses: Record<string, number>;
}

const input = workerData as ProbeInput;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(input.url, { agent, headers: input.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const ms: number[] = [];
const at: number[] = [];
const statuses: Record<string, number> = {};
const end = performance.now() + input.seconds * 1000;
while (performance.now() < end) {
  const t = performance.now();
  at.push(performance.timeOrigin + t);
  const status = await once();
  ms.push(performance.now() - t);
  statuses[status] = (statuses[status] ?? 0) + 1;
  const wait = input.intervalMs - (performance.now() - t);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
agent.destroy();
parentPort!.postMessage({ ms, at, statuses } satisfies ProbeResult);
