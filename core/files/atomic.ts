/**
 * Files replaced whole: written beside their final name, then renamed over it, so a
 * reader (or a run after a crash or a kill) sees the old content or the new, never a
 * part. The one home of "write a temp file, then rename", of fsync for a file's
 * directory, and of sweeping the temp files killed writers left.
 *
 * A temp file is `<final name>.<n>.<pid>.tmp`: the pid last, so a sweep can tell a
 * killed writer's file (a pid that no longer runs on this host) from one a live
 * writer is still filling; `n` keeps two writes of one file in one process apart.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { type FileHandle, open, readdir, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { namedIoError, namingPath, namingPathAsync } from './io-error.js';
import { pidAlive } from './lock.js';

/** A file-system error's code (ENOENT, …), or undefined. */
export function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

export interface AtomicOptions {
  /** The file's mode when created (default 0o666 less the umask). */
  readonly mode?: number;
  /**
   * fsync the file before the rename and its directory after (default true): the new
   * content survives a power cut once the write returns. Files that are rebuilt from
   * others, or whose loss costs a retry, skip the two flushes.
   */
  readonly durable?: boolean;
  /** The temp file's path, when a reader of the directory must recognise it (default tempPath). */
  readonly temp?: string;
}

/** Run between the write and the rename: what must happen before the file appears (a journal line, a time stamp). */
type BeforeRename<T> = (temp: string) => T;

let written = 0;

/** A fresh temp path beside `path` (see the module comment for its shape). */
function tempPath(path: string): string {
  return `${path}.${++written}.${process.pid}.tmp`;
}

/** A temp file's name: its writer's pid is the last number. */
const TEMP_FILE = /\.(\d+)\.tmp$/;

/** Replace `path` with `data`, atomically; a failed write removes its temp file and names it. */
export async function writeAtomic(
  path: string,
  data: string | Uint8Array,
  opts: AtomicOptions & { readonly beforeRename?: BeforeRename<Promise<void>> } = {},
): Promise<void> {
  const temp = opts.temp ?? tempPath(path);
  const durable = opts.durable ?? true;
  try {
    await namingPathAsync(temp, async () => {
      const fh = await open(temp, 'w', opts.mode ?? 0o666);
      try {
        await fh.writeFile(data);
        if (durable) await fh.sync();
      } finally {
        await fh.close();
      }
    });
    await opts.beforeRename?.(temp);
  } catch (e) {
    await unlink(temp).catch(() => {});
    throw e;
  }
  await rename(temp, path);
  if (durable) await fsyncDir(dirname(path));
}

/** writeAtomic for synchronous callers (the builder, the snapshot directory). */
export function writeAtomicSync(
  path: string,
  data: string | Uint8Array,
  opts: AtomicOptions & { readonly beforeRename?: BeforeRename<void> } = {},
): void {
  const temp = opts.temp ?? tempPath(path);
  const durable = opts.durable ?? true;
  try {
    namingPath(temp, () => {
      writeFileSync(temp, data, { mode: opts.mode ?? 0o666 });
      if (durable) fsyncPathSync(temp);
    });
    opts.beforeRename?.(temp);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
  renameSync(temp, path);
  if (durable) fsyncDirSync(dirname(path));
}

/**
 * Codes of platforms (Windows) that cannot open or fsync a directory: the rename
 * itself is still atomic there, only its survival of a power cut is not promised.
 */
const NO_DIR_FSYNC = new Set(['EISDIR', 'EPERM', 'EINVAL', 'EBADF']);

/** fsync a directory, so a rename or a new file in it survives a crash; errors name it. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle | null = null;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch (e) {
    if (!NO_DIR_FSYNC.has(errCode(e) ?? '')) throw namedIoError(dir, e);
  } finally {
    await fh?.close();
  }
}

/** fsyncDir for synchronous callers. */
export function fsyncDirSync(dir: string): void {
  try {
    fsyncPathSync(dir);
  } catch (e) {
    if (!NO_DIR_FSYNC.has(errCode(e) ?? '')) throw namedIoError(dir, e);
  }
}

function fsyncPathSync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether `name` is a temp file of a writer that no longer runs on this host (for a sweep of its own). */
export function isDeadTemp(name: string): boolean {
  const m = TEMP_FILE.exec(name);
  return m !== null && !pidAlive(Number(m[1]));
}

/**
 * Remove the temp files in `dir` of writers killed before their rename: nothing else
 * ever would. A live writer's file is left alone. Returns the names removed.
 */
export async function sweepDeadTemps(dir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir)) {
    if (!isDeadTemp(name)) continue;
    await unlink(join(dir, name)).catch((e: unknown) => {
      if (errCode(e) !== 'ENOENT') throw e;
    });
    removed.push(name);
  }
  return removed;
}

/** sweepDeadTemps for synchronous callers; a directory that is not there holds none. */
export function sweepDeadTempsSync(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return [];
    throw e;
  }
  const removed = names.filter(isDeadTemp);
  for (const name of removed) rmSync(join(dir, name), { force: true });
  return removed;
}
