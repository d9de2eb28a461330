/**
 * One password-hashing thread of a HashPool (hash-pool.ts): scrypt runs here
 * synchronously, one hash at a time, so it never takes a thread of libuv's pool, which
 * the store's file I/O and everything else asynchronous in the server needs. The
 * thread asks the kernel for the lowest CPU priority first: under a flood of sign-ins
 * the serving threads still get the cores, and the hashes take what is left.
 */
import { scryptSync } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { HashJob, HashResult } from './hash-pool.js';

/** This thread's own id (Linux: /proc/thread-self is `<pid>/task/<tid>`), or null elsewhere. */
function threadId(): number | null {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

const tid = threadId();
let niced = false;
if (tid !== null) {
  try {
    // On Linux setpriority on a thread id sets that thread alone, not the process.
    setPriority(tid, 19);
    niced = true;
  } catch {
    // Not allowed here: the hashes still run off the event loop and off libuv's pool.
  }
}
parentPort!.postMessage({ ready: true, niced } satisfies HashResult);

parentPort!.on('message', (job: HashJob) => {
  let result: HashResult;
  try {
    const key = scryptSync(job.password, job.salt, job.keyBytes, {
      N: job.n,
      r: job.r,
      p: job.p,
      maxmem: job.maxmem,
    });
    result = { id: job.id, key: new Uint8Array(key) };
  } catch (e) {
    result = { id: job.id, error: (e as Error).message };
  }
  parentPort!.postMessage(result);
});
