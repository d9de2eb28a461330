/**
 * The OpenAPI document as the server serves it (examples from a snapshot's real
 * rows) as two independent linters read it: Redocly's recommended
 * rules and Spectral's `spectral:oas`. Both must find no error; their warnings are
 * printed for whoever reads the test output. Run from node_modules (devDependencies,
 * no install scripts), offline: Redocly's telemetry and update check are turned off.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticServing } from '../test/serving-snapshot.js';
import type { ServeConfig } from './config.js';
import { openApiResource } from './resources.js';

const run = promisify(execFile);
let dir: string;
let file: string;

beforeAll(async () => {
  const served = await syntheticServing();
  dir = served.dir;
  const config = { baseUrl: 'https://fundreturns.test', baseUrlDerived: false } as ServeConfig;
  file = join(dir, 'openapi.json');
  writeFileSync(file, openApiResource(config, served.snap).body);
});

const bin = (name: string) => join(process.cwd(), 'node_modules', '.bin', name);
const env = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_COLOR: '1',
};

/** A linter's stdout whether it exits 0 or not (both exit non-zero on errors). */
async function stdoutOf(cmd: string, args: string[]): Promise<string> {
  try {
    return (await run(cmd, args, { env, maxBuffer: 16 << 20, timeout: 60_000 })).stdout;
  } catch (e) {
    const out = (e as { stdout?: string }).stdout;
    if (typeof out === 'string' && out.trim() !== '') return out;
    throw e;
  }
}

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the OpenAPI document passes independent linters', () => {
  it('@redocly/cli lint (recommended rules): 0 errors', async () => {
    const out = JSON.parse(await stdoutOf(bin('redocly'), ['lint', '--format=json', file])) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string }>;
    };
    const errors = out.problems.filter((p) => p.severity === 'error');
    expect(errors.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(out.totals.errors).toBe(0);
  }, 60_000);

  it('@stoplight/spectral-cli lint (spectral:oas): 0 errors', async () => {
    const ruleset = join(dir, '.spectral.yaml');
    writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const out = JSON.parse(
      await stdoutOf(bin('spectral'), ['lint', '--ruleset', ruleset, '--format', 'json', file]),
    ) as Array<{ code: string; severity: number; message: string; path: string[] }>;
    // Severity 0 is an error (1 warning, 2 information, 3 hint).
    const errors = out.filter((p) => p.severity === 0);
    expect(errors.map((p) => `${p.code} at ${p.path.join('.')}: ${p.message}`)).toEqual([]);
  }, 60_000);
});
