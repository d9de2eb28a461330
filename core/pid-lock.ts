/**
 * A lock file owned by a process: created with O_EXCL, holding {pid, host, at}, and
 * taken over when its owner is gone (a process of this host that no longer runs, or
 * an unreadable file older than a few seconds). A lock of another host is never
 * taken over: only its owner, or an operator, can tell it is stale.
 *
 * Used by `serve` (one server per embedded store) and `build` (one build at a time
 * per snapshots directory).
 *
 * The claim is written whole to `<path>.<n>.<pid>.tmp` (the pid last, as store-file's sweep of dead writers' files reads it) and then linked to `path` (link(2)
 * fails when `path` exists, as O_EXCL does), so a write that fails (a full disk) leaves
 * no lock behind: an empty lock would make the next run wait on "an unknown process".
 * Mode 600: a lock in the access store is one of its files (store-perms.ts).
 */
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
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

/** File-system calls takePidLock makes, replaceable in tests (a full disk, say). */
export interface LockFs {
  writeFile(path: string, data: string, opts: { flag: string; mode: number }): Promise<void>;
}

const realFs: LockFs = { writeFile };

/** Takes made by this process, numbering each one's claim. */
let takes = 0;

/** Take the lock at `path`; resolves to its release. Throws LockHeld while a live owner holds it. */
export async function takePidLock(path: string, fs: LockFs = realFs): Promise<() => Promise<void>> {
  // Each take has its own claim file and token: two takes in one process (two refreshes
  // started together) sharing one claim file could link the other's claim, and the
  // release, finding a token not its own, would leave the lock held by a live pid forever.
  const take = ++takes;
  const token = JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString(), take });
  const tmp = `${path}.${take}.${process.pid}.tmp`;
  try {
    await fs.writeFile(tmp, token, { flag: 'w', mode: 0o600 });
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw new Error(`cannot write the lock ${tmp}: ${(e as Error).message}`, { cause: e });
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(tmp, path);
        return async () => {
          const content = await readFile(path, 'utf8').catch(() => null);
          if (content === token) await unlink(path).catch(() => {});
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
          throw new Error(`cannot take the lock ${path}: ${(e as Error).message}`, { cause: e });
      }
      await checkHolder(path, attempt);
    }
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** Returns when `path` may be tried again (gone, or stale and removed); throws LockHeld otherwise. */
async function checkHolder(path: string, attempt: number): Promise<void> {
  const holder = await readHolder(path);
  if (attempt > 0) throw new LockHeld(path, holder === 'gone' ? null : holder);
  if (holder === 'gone') return;
  if (await isStale(path, holder)) {
    await unlink(path).catch(() => {});
    return;
  }
  throw new LockHeld(path, holder);
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
