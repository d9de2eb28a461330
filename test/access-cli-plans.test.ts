/**
 * `accounts show|usage|list` print the limits the server enforces: those of `--plans
 * FILE` (or FUNDRETURNS_PLANS), else those the last server on the store recorded at
 * start, else the built-in defaults.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf } from '../accounts/model.js';
import { FileAccessStore } from '../accounts/store-file.js';
import { cli, tempDir, testNow } from './harness.js';

let dir: string;
let store: string;
let plans: string;
let other: string;

beforeAll(async () => {
  dir = tempDir('access-plans');
  store = join(dir, 'store');
  plans = join(dir, 'plans.json');
  other = join(dir, 'other-plans.json');
  writeFileSync(plans, JSON.stringify({ free: { burst: 7, monthly: 40 }, pro: { monthly: 5000 } }));
  writeFileSync(other, JSON.stringify({ free: { burst: 3, monthly: 11 } }));
  expect(cli(['accounts', 'create', 'acme', '--plan', 'free', '--store', store]).status).toBe(0);
  expect(cli(['accounts', 'create', 'bigco', '--plan', 'pro', '--store', store]).status).toBe(0);
  const s = await FileAccessStore.open(store);
  const id = (await s.read()).accounts[0].id;
  await s.writeUsage(monthOf(testNow()), new Map([[id, 30]]));
  await s.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => cli([...args, '--store', store], env);

function json<T>(args: string[], env: NodeJS.ProcessEnv = {}): T {
  const r = run([...args, '--json'], env);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as T;
}

describe('limits from --plans', () => {
  it('accounts show prints the limits of --plans FILE, not the defaults', () => {
    expect(json(['accounts', 'show', 'acme', '--plans', plans])).toMatchObject({
      limits: { burst: 7, monthly: 40 },
      usage: { count: 30, limit: 40, remaining: 10 },
    });
    const text = run(['accounts', 'show', 'acme', '--plans', plans]);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('plan      free (7/min, 40/month)');
    expect(text.stdout).toContain('usage     30 of 40 in');
    // A plan the file leaves partly unset keeps the default for the rest.
    expect(json(['accounts', 'show', 'bigco', '--plans', plans])).toMatchObject({
      limits: { burst: 250, monthly: 5000 },
    });
  });

  it('accounts usage prints the monthly limit of --plans FILE', () => {
    expect(json(['accounts', 'usage', 'acme', '--plans', plans])).toMatchObject({
      count: 30,
      limit: 40,
      remaining: 10,
    });
    expect(run(['accounts', 'usage', 'acme', '--plans', plans]).stdout).toContain(
      'acme (free): 30 of 40 requests',
    );
  });

  it('accounts list shows each account’s limits from --plans FILE', () => {
    const rows = json<Array<{ name: string; limits: unknown }>>(['accounts', 'list', '--plans', plans]);
    expect(rows.map((r) => [r.name, r.limits])).toEqual([
      ['acme', { burst: 7, monthly: 40 }],
      ['bigco', { burst: 250, monthly: 5000 }],
    ]);
    const text = run(['accounts', 'list', '--plans', plans]);
    expect(text.stdout).toMatch(/LIMITS/);
    expect(text.stdout).toMatch(/acme .* 7\/min, 40\/month/);
  });

  it('without --plans the defaults (C26) are shown', () => {
    expect(json(['accounts', 'show', 'acme'])).toMatchObject({
      limits: { burst: 100, monthly: 250 },
      usage: { limit: 250 },
    });
  });

  it('reads FUNDRETURNS_PLANS, and the flag wins over it', () => {
    expect(json(['accounts', 'usage', 'acme'], { FUNDRETURNS_PLANS: plans })).toMatchObject({ limit: 40 });
    expect(json(['accounts', 'show', 'acme'], { FUNDRETURNS_PLANS: plans })).toMatchObject({
      limits: { burst: 7, monthly: 40 },
    });
    expect(json(['accounts', 'usage', 'acme', '--plans', other], { FUNDRETURNS_PLANS: plans })).toMatchObject(
      { limit: 11 },
    );
    // Commands that print no limits ignore the variable, as they ignore other commands' flags.
    expect(run(['keys', 'list', 'acme'], { FUNDRETURNS_PLANS: join(dir, 'missing.json') }).status).toBe(0);
  });

  it('a missing or bad plans file fails with exit 1 and names the file', () => {
    const missing = run(['accounts', 'show', 'acme', '--plans', join(dir, 'missing.json')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`plans file ${join(dir, 'missing.json')}`);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ gold: { burst: 1 } }));
    const r = run(['accounts', 'usage', 'acme', '--plans', bad]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('unknown plan "gold"');
    expect(run(['accounts', 'show', 'acme', '--plans']).status).toBe(2);
  });

  it('without --plans, the limits the last server on the store recorded (serve writes them at start)', async () => {
    const s = await FileAccessStore.open(store);
    await s.writePlans({ ...(await import('../accounts/plans.js')).loadPlans(other) });
    await s.close();
    expect(json(['accounts', 'show', 'acme'])).toMatchObject({ limits: { burst: 3, monthly: 11 } });
    expect(json(['accounts', 'usage', 'acme'])).toMatchObject({ limit: 11 });
    // The flag still wins.
    expect(json(['accounts', 'usage', 'acme', '--plans', plans])).toMatchObject({ limit: 40 });
  });

  it('a damaged record is said, and the defaults shown (never silently)', () => {
    for (const bad of ['{"free":', '{"free":{"burst":0}}', '{"gold":{"burst":1}}']) {
      writeFileSync(join(store, 'plans.json'), bad);
      const r = run(['accounts', 'usage', 'acme', '--json']);
      expect(r.status, bad).toBe(0);
      expect(r.stderr, bad).toMatch(
        /warning: the limits recorded in the store are unreadable \(.*plans\.json/,
      );
      expect(JSON.parse(r.stdout), bad).toMatchObject({ limit: 250 });
    }
  });
});
