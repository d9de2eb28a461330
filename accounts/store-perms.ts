/**
 * Who may touch the embedded store. Its log is trusted: a line in it that carries the
 * SHA-256 of a key makes that key valid. So a store whose directory or files other
 * users can write to is refused (anyone on the machine could append a key of their
 * own), and everything the store creates is private to its owner whatever the umask:
 * the directory 700, every file 600 (the log holds account names, key prefixes and
 * hashes).
 *
 * Readable by group or others but not writable is not refused: no one can forge
 * anything through it, and a store created before this rule (under umask 022, the
 * log 644) keeps working; such files are tightened to 600 when the owner opens it.
 */
import { chmod, lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const STORE_DIR_MODE = 0o700;
export const STORE_FILE_MODE = 0o600;

const GROUP_OTHER_WRITE = 0o022;
const GROUP_OTHER_ANY = 0o077;

/** Thrown when the store's directory or a file in it is writable by group or others. */
export class StoreNotPrivate extends Error {
  readonly code = 'STORE_NOT_PRIVATE';
  constructor(
    readonly dir: string,
    readonly path: string,
    readonly mode: number,
  ) {
    super(
      `the store ${dir} is refused: ${path} is writable by ${whoElse(mode)} (mode ${octal(mode)}), so anyone ` +
        `who can write there could add an API key of their own. Make it private (chmod -R go-rwx ${dir}), ` +
        'then look through its keys (fundreturns keys list ACCOUNT) for any you did not issue',
    );
    this.name = 'StoreNotPrivate';
  }
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, '0');
}

function whoElse(mode: number): string {
  const g = (mode & 0o020) !== 0;
  const o = (mode & 0o002) !== 0;
  return g && o ? 'group and others' : g ? 'its group' : 'others';
}

/**
 * Refuse `dir` when it, or any entry in it, is writable by group or others (through a
 * symbolic link: its target). Entries only readable by them, and owned by this user,
 * are made private. Returns the paths tightened so the caller can say so.
 *
 * A subdirectory (`secrets/`, `throttle/`: file-secrets.ts) is checked as a directory
 * (700), not file by file: no one else can reach what a private directory holds, and
 * it may hold thousands of sessions.
 */
export async function checkStorePrivate(dir: string): Promise<string[]> {
  const tightened: string[] = [];
  const uid = process.getuid?.();
  const visit = async (path: string, want: number): Promise<void> => {
    const st = await stat(path);
    if ((st.mode & GROUP_OTHER_WRITE) !== 0) throw new StoreNotPrivate(dir, path, st.mode);
    if ((st.mode & GROUP_OTHER_ANY) !== 0 && uid !== undefined && st.uid === uid) {
      // A link is not followed to change its target's mode: only the store's own files are tightened.
      if ((await lstat(path)).isSymbolicLink()) return;
      await chmod(path, want);
      tightened.push(path);
    }
  };
  await visit(dir, STORE_DIR_MODE);
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    try {
      await visit(path, (await lstat(path)).isDirectory() ? STORE_DIR_MODE : STORE_FILE_MODE);
    } catch (e) {
      // Removed while looking (a tmp file renamed into place, a lock released): nothing to check.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  return tightened;
}
