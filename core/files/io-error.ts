/**
 * Errors of the file system that name their file. Node names the path when open,
 * rename or mkdir fail, but a failing write, fsync or close says only "ENOSPC: no
 * space left on device, write": an operator cannot tell which disk filled up.
 */

/** `e` with `path` in its message (kept as it is when it names it already); its `code` is kept. */
export function namedIoError(path: string, e: unknown): Error {
  if (!(e instanceof Error)) return new Error(`${path}: ${String(e)}`);
  if (e.message.includes(path)) return e;
  const named = new Error(`${path}: ${e.message}`, { cause: e }) as NodeJS.ErrnoException;
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== undefined) named.code = code;
  return named;
}

/** Run `fn`, which does I/O on `path`; its errors name `path`. */
export function namingPath<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw namedIoError(path, e);
  }
}

/** namingPath for asynchronous work. */
export async function namingPathAsync<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw namedIoError(path, e);
  }
}
