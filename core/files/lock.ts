/**
 * Exclusive lock files: the one home of taking, waiting for, taking over and
 * releasing a lock, for the access store's write lock, one server per store and one
 * build per snapshots directory.
 *
 * A lock is a file holding {pid, host, at, nonce}. The claim is written whole to a
 * temp file (`<path>.<n>.<pid>.tmp`, as atomic.ts sweeps them) and linked to `path`;
 * link(2) fails when `path` exists, as O_EXCL does, and no lock is ever seen empty or
 * half-written, so a failed write (a full disk) leaves no lock behind.
 *
 * The staleness rule, one for every lock. A lock is taken over when its owner cannot
 * still be using it:
 *  - its holder is a process of this host that no longer runs (exact, whatever the age:
 *    a build or a server holds its lock for minutes or days, so age alone would let a
 *    second one in beside a live one);
 *  - or the lock has been held longer than `staleAfterMs`, for locks that declare one:
 *    the access store's write lock is held for one change (milliseconds), so one much
 *    older belongs to a process that crashed, even when a new process has since been
 *    given the same pid (a restarted container) or it was taken on another host;
 *  - or it cannot be read and is older than UNREADABLE_GRACE_MS (damage: this module
 *    never writes a partial lock).
 * A readable lock of another host without `staleAfterMs` is never taken over: only its
 * owner, or an operator, can tell that it is stale.
 *
 * Taking over moves the stale file aside first and checks what it moved: if another
 * process replaced the stale lock with its own in the meantime, its lock is put back,
 * so two processes that both saw the stale lock never both hold it.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
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

/** A lock that cannot be read is taken to be damage once it is this old. */
export const UNREADABLE_GRACE_MS = 10_000;

/** File-system calls takeLock makes, replaceable in tests (a full disk, say). */
interface LockFs {
  writeFile(path: string, data: string, opts: { flag: string; mode: number }): Promise<void>;
}

const realFs: LockFs = { writeFile };

export interface LockOptions {
  /** How long to wait for a live holder before throwing LockHeld (default 0: at once). */
  readonly waitMs?: number;
  /** A lock held longer than this is stale whoever holds it (default: never by age). */
  readonly staleAfterMs?: number;
  /** The lock file's mode (default 600: a lock in the access store is one of its files). */
  readonly mode?: number;
  readonly fs?: LockFs;
}

/** Takes made by this process, numbering each one's claim file. */
let takes = 0;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Take the lock at `path`; resolves to its release. Throws LockHeld while a live owner holds it. */
export async function takeLock(path: string, opts: LockOptions = {}): Promise<() => Promise<void>> {
  // Each take has its own claim file and token: two takes in one process sharing one
  // claim could link the other's, and the release, finding a token not its own, would
  // leave the lock held by a live pid forever.
  const take = ++takes;
  const token = JSON.stringify({
    pid: process.pid,
    host: hostname(),
    at: new Date().toISOString(),
    nonce: randomBytes(6).toString('hex'),
  });
  const claim = `${path}.${take}.${process.pid}.tmp`;
  try {
    await (opts.fs ?? realFs).writeFile(claim, token, { flag: 'w', mode: opts.mode ?? 0o600 });
  } catch (e) {
    await unlink(claim).catch(() => {});
    throw new Error(`cannot write the lock ${claim}: ${(e as Error).message}`, { cause: e });
  }
  try {
    await linkWhenFree(claim, path, opts);
  } finally {
    await unlink(claim).catch(() => {});
  }
  return async () => {
    const content = await readFile(path, 'utf8').catch(() => null);
    if (content === token) await unlink(path).catch(() => {});
  };
}

/** Link `claim` to `path` once `path` is free or stale, waiting up to `waitMs` for a live holder. */
async function linkWhenFree(claim: string, path: string, opts: LockOptions): Promise<void> {
  const deadline = Date.now() + (opts.waitMs ?? 0);
  let delay = 2;
  // A lock that keeps turning up stale (an operator's script?) is not fought over forever.
  for (let takeovers = 0; ; ) {
    try {
      await link(claim, path);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new Error(`cannot take the lock ${path}: ${(e as Error).message}`, { cause: e });
    }
    const seen = await readLock(path);
    if (seen === 'gone') continue;
    if (takeovers < 10 && isStale(seen, opts.staleAfterMs)) {
      takeovers++;
      await takeOver(path, seen.text);
      continue;
    }
    if (Date.now() >= deadline) throw new LockHeld(path, seen.holder);
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
}

interface SeenLock {
  readonly text: string;
  readonly holder: LockHolder | null;
  readonly mtimeMs: number;
}

async function readLock(path: string): Promise<SeenLock | 'gone'> {
  let text: string;
  let mtimeMs: number;
  try {
    text = await readFile(path, 'utf8');
    mtimeMs = (await stat(path)).mtimeMs;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw e;
  }
  let holder: LockHolder | null = null;
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null) holder = v as LockHolder;
  } catch {
    // Unreadable: only its age tells (isStale).
  }
  return { text, holder, mtimeMs };
}

/** The staleness rule of the module comment. */
function isStale(seen: SeenLock, staleAfterMs = Number.POSITIVE_INFINITY): boolean {
  const { holder } = seen;
  const at = holder !== null && typeof holder.at === 'string' ? Date.parse(holder.at) : Number.NaN;
  const age = Date.now() - (Number.isFinite(at) ? at : seen.mtimeMs);
  if (age > staleAfterMs) return true;
  if (holder === null) return age > UNREADABLE_GRACE_MS;
  if (holder.host !== hostname() || typeof holder.pid !== 'number') return false;
  return !pidAlive(holder.pid);
}

/** Remove a stale lock whose content was `content`, putting back a live one that replaced it meanwhile. */
async function takeOver(path: string, content: string): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    const moved = await readFile(aside, 'utf8');
    if (moved !== content) await link(aside, path).catch(() => {});
  } finally {
    await unlink(aside).catch(() => {});
  }
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
