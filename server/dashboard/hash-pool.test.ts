import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { HashBusy, type Hasher, HashPool } from './hash-pool.js';
import { SCRYPT_N, threadPoolHasher } from './password.js';

const pools: HashPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});
function pool(threads: number, queue: number): HashPool {
  const p = new HashPool({ threads, queue, retryAfterS: 3 });
  pools.push(p);
  return p;
}

const job = (i: number) => ({
  password: `password ${i}`,
  salt: Buffer.alloc(16, i),
  keyBytes: 32,
  n: SCRYPT_N,
  r: 8,
  p: 1,
  maxmem: 128 * SCRYPT_N * 8 * 2 + 2 ** 20,
});

/**
 * Six hashes asked for, then eight file reads: the order in which they finish. A hash
 * on libuv's pool (4 threads) holds a thread the reads need; a hash on a thread of its
 * own holds none.
 */
async function order(h: Hasher): Promise<string[]> {
  const done: string[] = [];
  const hashes = Array.from({ length: 6 }, (_, i) => h.scrypt(job(i)).then(() => done.push(`hash ${i}`)));
  const reads = Array.from({ length: 8 }, (_, i) =>
    readFile(new URL(import.meta.url)).then(() => done.push(`read ${i}`)),
  );
  await Promise.all([...hashes, ...reads]);
  return done;
}

describe('the password-hashing pool', () => {
  it("hashes on threads of its own, not libuv's pool: file reads asked for after six hashes finish before any hash does", async () => {
    const p = pool(1, 8);
    await p.niced;
    const ours = await order(p);
    expect(ours.slice(0, 8).every((x) => x.startsWith('read'))).toBe(true);
    // The control: node:crypto's scrypt (what the server used) makes the reads wait for hashes.
    const shared = await order(threadPoolHasher);
    expect(shared.findIndex((x) => x.startsWith('hash'))).toBeLessThan(shared.indexOf('read 7'));
  });

  it('does a fixed number of hashes at once with a short queue, and refuses the next at once (HashBusy, Retry-After)', async () => {
    const p = pool(1, 2);
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => p.scrypt(job(i))));
    // One running, two waiting: three hashed; the other three refused without waiting for them.
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'rejected',
    ]);
    for (const o of outcomes.slice(3)) {
      const e = (o as PromiseRejectedResult).reason as HashBusy;
      expect(e).toBeInstanceOf(HashBusy);
      expect(e.retryAfterS).toBe(3);
    }
    expect(p.load).toEqual({ running: 0, waiting: 0 });
    // The refusal is at once: it settles before the hash running ahead of it.
    const running = [p.scrypt(job(7)), p.scrypt(job(8)), p.scrypt(job(9))];
    const first = running[0].then(() => 'a hash');
    const refused = p.scrypt(job(10)).then(
      () => 'hashed',
      (e: unknown) => (e instanceof HashBusy ? 'refused' : String(e)),
    );
    expect(await Promise.race([first, refused])).toBe('refused');
    await Promise.all(running);
  });

  it('derives what node:crypto derives', async () => {
    const p = pool(1, 1);
    expect((await p.scrypt(job(1))).equals(await threadPoolHasher.scrypt(job(1)))).toBe(true);
  });

  it.runIf(process.platform === 'linux')(
    'its threads run at the lowest CPU priority (nice 19), so serving threads keep the cores',
    async () => {
      expect(await pool(2, 0).niced).toBe(true);
    },
  );

  it('refuses what is asked after it is closed, and ends what was waiting', async () => {
    const p = pool(1, 4);
    const waiting = [p.scrypt(job(1)), p.scrypt(job(2))];
    const settled = Promise.allSettled(waiting);
    await p.close();
    for (const o of await settled)
      expect((o as PromiseRejectedResult).reason).toEqual(new Error('the hash pool is closed'));
    await expect(p.scrypt(job(3))).rejects.toThrow(/closed/);
  });
});
