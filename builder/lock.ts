/**
 * The builds' lock of a snapshots directory: one build, daily append or refresh
 * publishes at a time. Two at once would delete each other's staging directory, and
 * two appends would each start from the same CURRENT, so one day of one of them would
 * be lost.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeHolder, LockHeld, takeLock } from '../core/files/lock.js';

const BUILD_LOCK = '.build.lock';

/** Another build holds the lock and the caller asked not to wait. */
class BuildBusy extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuildBusy';
  }
}

/**
 * Take the lock of `snapshots`, waiting for another holder to finish (told once
 * through `say`), or, with `wait: false`, throwing BuildBusy at once.
 */
export async function takeBuildLock(
  snapshots: string,
  say: (line: string) => void,
  wait = true,
): Promise<() => Promise<void>> {
  mkdirSync(snapshots, { recursive: true });
  const path = join(snapshots, BUILD_LOCK);
  let told = false;
  for (;;) {
    try {
      return await takeLock(path);
    } catch (e) {
      if (!(e instanceof LockHeld)) throw e;
      const what = `another build (${describeHolder(e.holder)}) is working on ${snapshots}`;
      if (!wait) throw new BuildBusy(`${what}: not waiting`);
      if (!told) say(`waiting: ${what}`);
      told = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
