/**
 * One server per embedded store. Two servers on one store directory would each
 * count alone from the saved usage and overwrite each other's usage file (the last
 * writer wins), and each would grant every account its whole burst: limits doubled,
 * counts lost. So `serve` claims the directory for its lifetime; several servers
 * share one Redis store instead (--store redis://…).
 */
import { join } from 'node:path';
import { describeHolder, LockHeld, takeLock } from '../core/files/lock.js';

export const SERVE_LOCK = 'serve.lock';

/** Claim `dir` for this server; resolves to the release. Refuses while another live server holds it. */
export async function claimStore(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, SERVE_LOCK);
  try {
    return await takeLock(path);
  } catch (e) {
    if (!(e instanceof LockHeld)) throw e;
    throw new Error(
      `another server (${describeHolder(e.holder)}) serves the store ${dir}: one server per embedded store, ` +
        'because each counts on its own. Run several servers on one Redis store (--store redis://HOST:PORT). ' +
        `If no server is running, delete ${path}.`,
    );
  }
}
