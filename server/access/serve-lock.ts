/**
 * One server per embedded store. Two servers on one store directory would each
 * count alone from the saved usage and overwrite each other's usage file (the last
 * writer wins), and each would grant every account its whole burst: limits doubled,
 * counts lost. So `serve` claims the directory for its lifetime; several servers
 * share one Redis store instead (--store redis://…).
 */
import { readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const SERVE_LOCK = 'serve.lock';

/** A claim that cannot be read is taken to be half-written by its owner until it is this old. */
const UNREADABLE_GRACE_MS = 10_000;

interface Holder {
  pid?: unknown;
  host?: unknown;
  at?: unknown;
}

/** Claim `dir` for this server; resolves to the release. Refuses while another live server holds it. */
export async function claimStore(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, SERVE_LOCK);
  const token = JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() });
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(path, token, { flag: 'wx' });
      return async () => {
        const content = await readFile(path, 'utf8').catch(() => null);
        if (content === token) await unlink(path).catch(() => {});
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = await readHolder(path);
    if (attempt === 0 && holder !== 'gone' && (await isStale(path, holder))) {
      await unlink(path).catch(() => {});
      continue;
    }
    if (holder === 'gone' && attempt === 0) continue;
    const who =
      holder !== 'gone' && holder !== null
        ? `pid ${String(holder.pid)} on ${String(holder.host)}, since ${String(holder.at)}`
        : 'unknown';
    throw new Error(
      `another server (${who}) serves the store ${dir}: one server per embedded store, because each ` +
        'counts on its own. Run several servers on one Redis store (--store redis://HOST:PORT). ' +
        `If no server is running, delete ${path}.`,
    );
  }
}

async function readHolder(path: string): Promise<Holder | null | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw e;
  }
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as Holder) : null;
  } catch {
    return null;
  }
}

/** A claim of a process of this host that is gone, or unreadable and old. Another host's is never stale. */
async function isStale(path: string, holder: Holder | null): Promise<boolean> {
  if (holder === null) {
    const st = await stat(path).catch(() => null);
    return st === null || Date.now() - st.mtimeMs > UNREADABLE_GRACE_MS;
  }
  if (holder.host !== hostname() || typeof holder.pid !== 'number') return false;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'EPERM';
  }
}
