/**
 * Which Chromium the browser tests and scripts/screenshots.ts drive, and the flags it
 * runs with. Its own module so that the screenshot script shares them without the
 * test harness.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Headless, no GPU, no sandbox (CI runs as root, where Chromium's sandbox refuses to
 * start), and nothing that talks to the network on its own (updates, sync, QUIC
 * probes), so the only traffic is to the server under test. /dev/shm is often small
 * in containers.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * Debian's real binary. /usr/bin/chromium is a launcher script that adds desktop
 * flags from /etc/chromium.d and, in a container, fails its /dev/shm probe with a
 * shell error on stderr; it execs this binary, so the result is otherwise the same.
 */
const DEBIAN_CHROMIUM = '/usr/lib/chromium/chromium';

/** The environment variable that points at another Chrome or Chromium (any OS). */
export const CHROMIUM_ENV = 'FUNDRETURNS_TEST_CHROMIUM';

/** The Chromium to drive: $FUNDRETURNS_TEST_CHROMIUM, else Debian's, else `chromium` on the PATH. */
export function chromiumPath(): string {
  const own = process.env[CHROMIUM_ENV];
  if (own !== undefined && own !== '') return own;
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  const found = spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : 'chromium';
}

/**
 * The browser's environment: this process's, less libfaketime. `make test`'s second
 * pass runs under faketime, which slows Chromium's many threads to a crawl (pages time
 * out); the browser's own clock is not one the service reads (it only holds cookies,
 * which the server's clock, ahead of the real one, sets no earlier than it should).
 */
export function chromiumEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === 'LD_PRELOAD' || k.startsWith('FAKETIME') || k === 'DONT_FAKE_MONOTONIC')
      continue;
    env[k] = v;
  }
  return env;
}
