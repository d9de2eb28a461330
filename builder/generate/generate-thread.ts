/** Worker entry: runs one shard and reports progress and the result to the parent. */
import { parentPort, workerData } from 'node:worker_threads';
import { runShard, type ShardResult, type ShardTask } from './shard.js';

export type WorkerMessage = { kind: 'progress'; done: number } | { kind: 'done'; result: ShardResult };

const port = parentPort;
if (port === null) throw new Error('builder/generate/worker must run as a worker thread');
const task = workerData as ShardTask;
let pending = 0;
const result = runShard(task, () => {
  // Batched so a 32,000-fund run sends hundreds of messages, not tens of thousands.
  if (++pending === 16) {
    port.postMessage({ kind: 'progress', done: pending } satisfies WorkerMessage);
    pending = 0;
  }
});
if (pending > 0) port.postMessage({ kind: 'progress', done: pending } satisfies WorkerMessage);
port.postMessage({ kind: 'done', result } satisfies WorkerMessage);
