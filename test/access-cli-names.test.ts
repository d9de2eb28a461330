/**
 * Account names on the command line: a name never reads as a flag, and never as
 * another account's id (every command that takes an account takes a name or an id).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeProblem } from '../accounts/changes.js';
import { type AccessState, EMPTY_STATE, newAccountProblem } from '../accounts/model.js';
import { FileAccessStore } from '../accounts/store-file.js';

import { cli, tempDir } from './harness.js';

let dir: string;
let store: string;

beforeAll(() => {
  dir = tempDir('access-names');
  store = join(dir, 'store');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) => cli([...args, '--store', store]);

function names(): string[] {
  const r = run('accounts', 'list', '--json');
  expect(r.status).toBe(0);
  return (JSON.parse(r.stdout) as { name: string }[]).map((a) => a.name);
}

const account = (name: string, id = 'acct_00000000000a') => ({
  id,
  name,
  plan: 'free' as const,
  status: 'active' as const,
  created_at: '2026-01-01T00:00:00.000Z',
});

describe('account names', () => {
  it('refuses `accounts create -- --plan free` instead of creating an account named "--"', () => {
    const r = run('accounts', 'create', '--', '--plan', 'free');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('NAME must be 1 to 64 letters');
    expect(r.stderr).toContain('starting with a letter or digit');
    expect(r.stderr).toContain('"--"');
    expect(names()).toEqual([]);
  });

  it('refuses names that start with "-", "." or "_" (exit 2), and accepts them inside a name', () => {
    for (const name of ['-x', '-', '.hidden', '_x', '-acme']) {
      const r = run('accounts', 'create', name, '--plan', 'free');
      expect(r.status, name).toBe(2);
      expect(r.stderr, name).toContain('starting with a letter or digit');
    }
    for (const name of ['a', '9lives', 'acme-corp.eu_1', 'x'.repeat(64)])
      expect(run('accounts', 'create', name, '--plan', 'free').status, name).toBe(0);
    expect(run('accounts', 'create', 'y'.repeat(65), '--plan', 'free').status).toBe(2);
    expect(names()).toEqual(['a', '9lives', 'acme-corp.eu_1', 'x'.repeat(64)]);
  });

  it("refuses a name equal to another account's id", () => {
    const created = JSON.parse(run('accounts', 'create', 'owner', '--plan', 'free', '--json').stdout) as {
      id: string;
    };
    const r = run('accounts', 'create', created.id, '--plan', 'pro');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('must not look like an account id');
    // `show <id>` still finds the owner, not a namesake.
    expect(JSON.parse(run('accounts', 'show', created.id, '--json').stdout)).toMatchObject({ name: 'owner' });
  });

  it('refuses a name equal to an id of another shape (a hand-made record) with exit 1', async () => {
    const s = await FileAccessStore.open(store);
    await s.change({ op: 'account.create', account: account('legacy', 'legacy-7') });
    await s.close();
    const r = run('accounts', 'create', 'legacy-7', '--plan', 'free');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"legacy-7" is the id of account "legacy"');
    expect(names()).not.toContain('legacy-7');
  });

  it('is one rule for both stores (the Redis store checks it when it records the change)', () => {
    const s: AccessState = { ...EMPTY_STATE, version: 1, accounts: [account('owner', 'acct_0123456789ab')] };
    const create = (name: string, id?: string) => ({
      op: 'account.create' as const,
      account: account(name, id),
    });
    expect(changeProblem(s, create('--'))).toContain('starting with a letter or digit');
    expect(changeProblem(s, create('-x'))).toContain('starting with a letter or digit');
    expect(changeProblem(s, create('acct_0123456789ab'))).toContain('must not look like an account id');
    expect(changeProblem(s, create('owner'))).toBe('an account named "owner" already exists');
    expect(changeProblem(s, create('fresh', 'acct_0123456789ab'))).toContain('already exists');
    expect(changeProblem(s, create('fresh'))).toBeNull();
    const legacy: AccessState = { ...s, accounts: [account('legacy', 'legacy-7')] };
    expect(newAccountProblem(legacy, account('legacy-7'))).toBe(
      '"legacy-7" is the id of account "legacy": choose another name',
    );
  });
});
