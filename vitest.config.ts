import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'accounts/**/*.test.ts',
      'cli/**/*.test.ts',
      'core/**/*.test.ts',
      'builder/**/*.test.ts',
      'server/**/*.test.ts',
      'schemas/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Ends every process a test or a file left running, pass or fail (test/processes.ts).
    setupFiles: ['test/setup.ts'],
  },
});
