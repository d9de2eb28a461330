/**
 * Runs before every test file (vitest `setupFiles`): ends whatever a test or a file
 * left running (test/processes.ts). Registered first, so these hooks run after the
 * file's own afterEach/afterAll, which stop their servers gracefully.
 */
import { afterAll, afterEach, beforeEach } from 'vitest';
import { endTracked, markTestRunning, takeUwsWarnings } from './processes.js';

beforeEach(() => markTestRunning(true));

afterEach(async () => {
  markTestRunning(false);
  const left = await endTracked('test');
  // Not a failure of the test: a leak is ended here and named so it gets fixed.
  if (left.length > 0)
    process.stderr.write(`test/setup: ended processes a test left running: ${left.join(', ')}\n`);
  failOnUwsWarnings();
});

afterAll(async () => {
  await endTracked('all');
  failOnUwsWarnings();
});

/** A uWS warning in a server's stderr is a failure of the test (or file) it appeared in. */
function failOnUwsWarnings(): void {
  const seen = takeUwsWarnings();
  if (seen.length > 0)
    throw new Error(
      `uWS warned ${seen.length} time(s) while this ran:\n${[...new Set(seen)].slice(0, 5).join('\n')}`,
    );
}
