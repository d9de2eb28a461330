/**
 * Tests that need a program from Debian's packages (promtool, nginx, systemd-analyze;
 * the Makefile's system-deps installs those listed in SYSTEM_PACKAGES). Outside CI a
 * missing one skips its test with a message saying how to get it; under CI=true a
 * missing one listed there fails instead, so CI cannot pass by skipping.
 */
import { spawnSync } from 'node:child_process';

export function hasTool(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Whether a test needing `command` runs: true when it is installed; false (a skip,
 * said once on stderr) when it is not and this is not CI; throws under CI=true for
 * a program CI must have (`required`).
 */
export function toolForTest(command: string, pkg: string, required: boolean): boolean {
  if (hasTool(command)) return true;
  if (required && process.env.CI === 'true')
    throw new Error(`${command} is missing under CI: install Debian's ${pkg} package (make system-deps)`);
  process.stderr.write(`skipping: ${command} is not installed (Debian package ${pkg}; make system-deps)\n`);
  return false;
}
