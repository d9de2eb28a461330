/**
 * A child process for the tests of this folder: it runs an ES module snippet that may
 * import this folder's files (`./lock.ts`) and ends, or kills itself where the snippet
 * says (a crash). spawnSync: it is over before the test goes on, so none is left behind.
 */
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Run `code`; returns the signal that ended it (null when it exited 0); throws when it failed otherwise. */
export function runChild(code: string): NodeJS.Signals | null {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: here,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.error !== undefined) throw r.error;
  if (r.status !== 0 && r.signal !== 'SIGKILL') throw new Error(`child failed: ${r.stderr}`);
  return r.signal;
}
