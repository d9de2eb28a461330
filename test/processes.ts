/**
 * Every process a test starts, so that none outlives it, pass or fail. A child
 * started inside a test ends after that test (afterEach, which vitest runs after a
 * failure or a timeout too); one started in a file's hooks ends after the file. A
 * test runner that exits anyhow takes them all down with it.
 */
import type { ChildProcess } from 'node:child_process';

interface Tracked {
  readonly child: ChildProcess;
  readonly label: string;
  /** Started by a test body (ended after that test), else by a file's hooks. */
  readonly inTest: boolean;
}

const live = new Set<Tracked>();
let inTest = false;

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Track a child process; returns it for chaining. */
export function track<T extends ChildProcess>(child: T, label: string): T {
  const t: Tracked = { child, label, inTest };
  live.add(t);
  child.once('exit', () => live.delete(t));
  // A spawn that failed (ENOENT) never exits.
  child.once('error', () => live.delete(t));
  return child;
}

/**
 * uWS's own warnings (a write outside a corked callback, an onWritable that returns no
 * Boolean) printed by any process a test started: each is a server bug that anyone can
 * trigger, and a log anyone can flood. test/setup.ts fails the test during which one
 * appeared.
 */
const UWS_WARNING = /Warning: uWS\.[^\n]*/g;
const uwsWarnings: string[] = [];

/** Watch a child's stderr for uWS warnings (lines split across chunks included). */
export function watchUwsWarnings(child: ChildProcess, label: string): void {
  let tail = '';
  child.stderr?.on('data', (d: Buffer | string) => {
    const text = tail + String(d);
    const cut = text.lastIndexOf('\n');
    for (const m of (cut < 0 ? '' : text.slice(0, cut)).matchAll(UWS_WARNING))
      uwsWarnings.push(`${label} (pid ${child.pid}): ${m[0]}`);
    tail = cut < 0 ? text.slice(-4096) : text.slice(cut + 1);
  });
  child.once('exit', () => {
    for (const m of tail.matchAll(UWS_WARNING)) uwsWarnings.push(`${label} (pid ${child.pid}): ${m[0]}`);
  });
}

/** The uWS warnings seen since the last call. */
export function takeUwsWarnings(): string[] {
  return uwsWarnings.splice(0);
}

/** The test body starts (`inTest`) or ends. Set by test/setup.ts. */
export function markTestRunning(running: boolean): void {
  inTest = running;
}

/**
 * End tracked processes (those a test started, or all): SIGTERM, then SIGKILL after
 * `graceMs`. Resolves to the labels of those that were still running, so a caller can
 * say what a test forgot.
 */
export async function endTracked(which: 'test' | 'all', graceMs = 3_000): Promise<string[]> {
  const ending = [...live].filter((t) => (which === 'all' || t.inTest) && running(t.child));
  await Promise.all(
    ending.map(
      (t) =>
        new Promise<void>((resolve) => {
          if (!running(t.child)) return resolve();
          const killer = setTimeout(() => t.child.kill('SIGKILL'), graceMs);
          t.child.once('exit', () => {
            clearTimeout(killer);
            resolve();
          });
          t.child.kill('SIGTERM');
        }),
    ),
  );
  return ending.map((t) => `${t.label} (pid ${t.child.pid})`);
}

// The runner's own exit (a crash, a kill of the worker with SIGTERM): no time for
// graceful stops, so SIGKILL, which cannot be ignored.
process.once('exit', () => {
  for (const t of live) if (running(t.child)) t.child.kill('SIGKILL');
});
