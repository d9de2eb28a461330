import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from '../../builder/build.test-helper.js';
import { runChild } from './child.test-helper.js';
import { LockHeld, takeLock, UNREADABLE_GRACE_MS } from './lock.js';

const scratchDir = scratch('fr-lock-');
let made = 0;
const tempDir = () => scratchDir(String(made++));

/** A disk that fills up after `room` bytes: what a write to it does on a full disk. */
function fullDisk(room: number) {
  return {
    writeFile: async (path: string, data: string, opts: { flag: string; mode: number }) => {
      await writeFile(path, data.slice(0, room), opts);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    },
  };
}

describe('a lock written on a full disk', () => {
  it('leaves no lock and no temporary file, names the file in its error, and the next run takes the lock at once', async () => {
    const dir = tempDir();
    const path = join(dir, '.build.lock');
    for (const room of [0, 5]) {
      const failed = takeLock(path, { fs: fullDisk(room) });
      await expect(failed).rejects.toThrow(`.${process.pid}.tmp`);
      await expect(failed).rejects.toThrow(/ENOSPC/);
      expect(readdirSync(dir)).toEqual([]);
    }
    // Not "held by an unknown process" for ten seconds: nothing is there.
    const started = performance.now();
    const release = await takeLock(path);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['.build.lock']);
    await release();
    expect(existsSync(path)).toBe(false);
  });
});

describe('two takes of one lock in one process', () => {
  it('exactly one holds it; after its release the other takes it, whatever the interleaving', async () => {
    const dir = tempDir();
    const path = join(dir, '.build.lock');
    for (let round = 0; round < 50; round++) {
      const results = await Promise.allSettled([takeLock(path), takeLock(path)]);
      const held = results.filter((r) => r.status === 'fulfilled');
      expect(held).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')?.reason).toBeInstanceOf(LockHeld);
      await (held[0] as PromiseFulfilledResult<() => Promise<void>>).value();
      // The release removed the lock: a claim of the other take, linked in its place, would stay.
      expect(existsSync(path)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    }
  });
});

const lockOf = (pid: number, host: string, at: Date) => JSON.stringify({ pid, host, at: at.toISOString() });

describe('contention for one lock', () => {
  it('twenty takers that wait each hold it alone, one after another', async () => {
    const path = join(tempDir(), 'access.lock');
    let inside = 0;
    let most = 0;
    let turns = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const release = await takeLock(path, { waitMs: 10_000 });
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 2));
        inside--;
        turns++;
        await release();
      }),
    );
    expect(most).toBe(1);
    expect(turns).toBe(20);
    expect(existsSync(path)).toBe(false);
  });

  it('a taker that does not wait is told who holds it; one that waits gives up after its wait', async () => {
    const path = join(tempDir(), 'serve.lock');
    const release = await takeLock(path);
    await expect(takeLock(path)).rejects.toThrow(`${path} is held by pid ${process.pid} on ${hostname()}`);
    const started = Date.now();
    await expect(takeLock(path, { waitMs: 200 })).rejects.toBeInstanceOf(LockHeld);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    await release();
  });
});

describe('the staleness rule: a lock is taken over when its owner cannot still be using it', () => {
  it('a lock whose process was killed is taken over at once, whatever its age', async () => {
    const dir = tempDir();
    const path = join(dir, '.build.lock');
    // The child takes the lock and is killed holding it: no release ever runs.
    runChild(
      `import { takeLock } from './lock.ts'; await takeLock(${JSON.stringify(path)}); process.kill(process.pid, 'SIGKILL');`,
    );
    const left = JSON.parse(readFileSync(path, 'utf8')) as { pid: number };
    expect(left.pid).not.toBe(process.pid);
    const release = await takeLock(path);
    expect((JSON.parse(readFileSync(path, 'utf8')) as { pid: number }).pid).toBe(process.pid);
    await release();
  });

  it('a live holder keeps a lock of any age unless the lock declares how long it may be held', async () => {
    const path = join(tempDir(), 'access.lock');
    writeFileSync(path, lockOf(process.pid, hostname(), new Date(Date.now() - 86_400_000)));
    await expect(takeLock(path)).rejects.toBeInstanceOf(LockHeld);
    await expect(takeLock(path, { staleAfterMs: 90_000_000 })).rejects.toBeInstanceOf(LockHeld);
    const release = await takeLock(path, { staleAfterMs: 30_000 });
    await release();
    expect(existsSync(path)).toBe(false);
  });

  it("another host's lock is never taken over by pid, only by a declared age", async () => {
    const path = join(tempDir(), 'access.lock');
    // A pid that runs nowhere here: on this host it would be stale.
    writeFileSync(path, lockOf(2 ** 22 + 12345, `not-${hostname()}`, new Date(Date.now() - 60_000)));
    await expect(takeLock(path)).rejects.toThrow(`on not-${hostname()}`);
    const release = await takeLock(path, { staleAfterMs: 30_000 });
    await release();
  });

  it('an unreadable lock is left alone while it is new and taken over once older than the grace', async () => {
    const path = join(tempDir(), 'access.lock');
    writeFileSync(path, '');
    await expect(takeLock(path)).rejects.toThrow('held by an unknown process');
    const old = (Date.now() - UNREADABLE_GRACE_MS - 5_000) / 1000;
    utimesSync(path, old, old);
    const release = await takeLock(path);
    await release();
  });

  it('a lock that replaced the stale one meanwhile is put back, not removed', async () => {
    const path = join(tempDir(), 'access.lock');
    writeFileSync(path, lockOf(2 ** 22 + 12345, hostname(), new Date()));
    // Two takers see the same stale lock; exactly one wins, the other finds it held.
    const results = await Promise.allSettled([takeLock(path), takeLock(path)]);
    const held = results.filter((r) => r.status === 'fulfilled');
    expect(held).toHaveLength(1);
    expect(readdirSync(dirname(path))).toEqual(['access.lock']);
    await (held[0] as PromiseFulfilledResult<() => Promise<void>>).value();
  });
});
