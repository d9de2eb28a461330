/**
 * A lock file owned by a process: created with O_EXCL, holding {pid, host, at}, and
 * taken over when its owner is gone (a process of this host that no longer runs, or
 * an unreadable file older than a few seconds). A lock of another host is never
 * taken over: only its owner, or an operator, can tell it is stale.
 *
 * Used by `serve` (one server per embedded store) and `build` (one build at a time
 * per snapshots directory).
 */
import { readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

export interface LockHolder {
  readonly pid?: unknown;
  readonly host?: unknown;
  readonly at?: unknown;
}

/** The lock is held by a live process (or one of another host). */
export class LockHeld extends Error {
  constructor(
    readonly path: string,
    readonly holder: LockHolder | null,
  ) {
    super(`${path} is held by ${describeHolder(holder)}`);
    this.name = 'LockHeld';
  }
}

export function describeHolder(holder: LockHolder | null): string {
  return holder === null
    ? 'an unknown process'
    : `pid ${String(holder.pid)} on ${String(holder.host)}, since ${String(holder.at)}`;
}

/** A claim that cannot be read is taken to be half-written by its owner until it is this old. */
const UNREADABLE_GRACE_MS = 10_000;

/** Take the lock at `path`; resolves to its release. Throws LockHeld while a live owner holds it. */
export async function takePidLock(path: string): Promise<() => Promise<void>> {
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
    if (attempt > 0) throw new LockHeld(path, holder === 'gone' ? null : holder);
    if (holder === 'gone') continue;
    if (await isStale(path, holder)) {
      await unlink(path).catch(() => {});
      continue;
    }
    throw new LockHeld(path, holder);
  }
}

async function readHolder(path: string): Promise<LockHolder | null | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw e;
  }
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as LockHolder) : null;
  } catch {
    return null;
  }
}

async function isStale(path: string, holder: LockHolder | null): Promise<boolean> {
  if (holder === null) {
    const st = await stat(path).catch(() => null);
    return st === null || Date.now() - st.mtimeMs > UNREADABLE_GRACE_MS;
  }
  if (holder.host !== hostname() || typeof holder.pid !== 'number') return false;
  return !pidAlive(holder.pid);
}

/** Whether a process of this host runs under `pid` (ours always does; EPERM: someone else's). */
export function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
