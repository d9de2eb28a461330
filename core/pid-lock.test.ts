import { existsSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from '../builder/build.test-helper.js';
import { LockHeld, takePidLock } from './pid-lock.js';

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
      const failed = takePidLock(path, fullDisk(room));
      await expect(failed).rejects.toThrow(`.${process.pid}.tmp`);
      await expect(failed).rejects.toThrow(/ENOSPC/);
      expect(readdirSync(dir)).toEqual([]);
    }
    // Not "held by an unknown process" for ten seconds: nothing is there.
    const started = performance.now();
    const release = await takePidLock(path);
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
      const results = await Promise.allSettled([takePidLock(path), takePidLock(path)]);
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
