/**
 * `fundreturns accounts` and `fundreturns keys` as an operator runs them (the
 * compiled CLI; `npm run build` first), against a store another process watches.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../accounts/keys.js';
import { monthOf } from '../accounts/model.js';
import { FileAccessStore } from '../accounts/store-file.js';
import { cli, cliAsync, tempDir, testNow } from './harness.js';

let dir: string;
let store: string;

beforeAll(() => {
  dir = tempDir('access');
  store = join(dir, 'store');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) => cli([...args, '--store', store]);

function json<T>(args: string[]): T {
  const r = run(...args, '--json');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as T;
}

interface KeyView {
  id: string;
  account: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
}

describe('accounts and keys', () => {
  let secret = '';
  let keyId = '';

  it('creates an account, active on its plan', () => {
    const a = json<Record<string, string>>(['accounts', 'create', 'acme', '--plan', 'developer']);
    expect(a).toMatchObject({ name: 'acme', plan: 'developer', status: 'active' });
    expect(a.id).toMatch(/^acct_[0-9a-f]{12}$/);
    const text = run('accounts', 'create', 'bravo', '--plan', 'free');
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/created account bravo \(acct_[0-9a-f]{12}\) on plan free/);
    const list = json<Array<Record<string, unknown>>>(['accounts', 'list']);
    expect(list.map((x) => x.name)).toEqual(['acme', 'bravo']);
  });

  it('issues a key shown once: --json is exactly {id, account, key, created_at}', () => {
    const k = json<Record<string, string>>(['keys', 'create', 'acme']);
    expect(Object.keys(k)).toEqual(['id', 'account', 'key', 'created_at']);
    expect(k.account).toBe('acme');
    expect(k.id).toMatch(/^key_[0-9a-f]{12}$/);
    expect(k.key).toMatch(/^fr_live_[A-Za-z0-9_-]{32}$/);
    expect(Number.isNaN(Date.parse(k.created_at))).toBe(false);
    secret = k.key;
    keyId = k.id;

    const text = run('keys', 'create', 'acme');
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/fr_live_[A-Za-z0-9_-]{32}/);
    expect(text.stderr).toMatch(/shown only once/);

    // Only the hash is stored.
    const log = readFileSync(join(store, 'access.log'), 'utf8');
    expect(log).not.toContain(secret);
    expect(log).toContain(hashKey(secret));
  });

  it('lists keys without secrets or hashes', () => {
    const r = run('keys', 'list', '--json');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain(secret);
    expect(r.stdout).not.toContain(hashKey(secret));
    const keys = JSON.parse(r.stdout) as KeyView[];
    expect(keys).toHaveLength(2);
    expect(Object.keys(keys[0]).sort()).toEqual(
      ['account', 'created_at', 'expires_at', 'id', 'prefix', 'revoked_at'].sort(),
    );
    expect(keys[0]).toMatchObject({
      id: keyId,
      account: 'acme',
      prefix: secret.slice(0, 12),
      revoked_at: null,
    });
    expect(json<KeyView[]>(['keys', 'list', 'bravo'])).toEqual([]);
    const text = run('keys', 'list');
    expect(text.stdout).toContain(keyId);
    expect(text.stdout).not.toContain(secret);
    const show = run('accounts', 'show', 'acme', '--json');
    expect(show.stdout).not.toContain(secret);
    expect(show.stdout).not.toContain(hashKey(secret));
    expect(JSON.parse(show.stdout)).toMatchObject({
      name: 'acme',
      limits: { burst: 100, monthly: 1000 },
      usage: { month: monthOf(testNow()), count: 0, limit: 1000, remaining: 1000 },
    });
  });

  it('changes plan and status', () => {
    expect(json<Record<string, string>>(['accounts', 'set-plan', 'acme', 'pro']).plan).toBe('pro');
    expect(run('accounts', 'set-status', 'acme', 'past_due').stdout).toContain('active -> past_due');
    expect(run('accounts', 'set-status', 'acme', 'active').status).toBe(0);
    const a = json<Record<string, string>>(['accounts', 'show', 'acme']);
    expect(a).toMatchObject({ plan: 'pro', status: 'active' });
  });

  it('reports usage of this month and earlier months', async () => {
    const s = await FileAccessStore.open(store);
    const id = json<Record<string, string>>(['accounts', 'show', 'acme']).id;
    const now = testNow();
    const d = new Date(now);
    const last = monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
    await s.writeUsage(monthOf(now), new Map([[id, 2600]]));
    await s.writeUsage(last, new Map([[id, 42]]));
    await s.close();
    const u = json<Record<string, unknown>>(['accounts', 'usage', 'acme']);
    expect(u).toMatchObject({
      account: 'acme',
      plan: 'pro',
      month: monthOf(now),
      count: 2600,
      limit: 2500,
      remaining: 0,
      history: [{ month: last, count: 42 }],
    });
    expect(run('accounts', 'usage', 'acme').stdout).toContain('2600 of 2500');
  });

  it('rotates a key: the new one printed once, the old one given an end', () => {
    const before = testNow();
    const r = json<Record<string, string>>(['keys', 'rotate', keyId, '--grace', '3600']);
    expect(r).toMatchObject({ account: 'acme', replaces: keyId });
    expect(r.key).toMatch(/^fr_live_/);
    expect(r.key).not.toBe(secret);
    const keys = json<KeyView[]>(['keys', 'list', 'acme']);
    expect(keys).toHaveLength(3);
    const old = keys.find((k) => k.id === keyId)!;
    const expires = Date.parse(old.expires_at ?? '');
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(testNow() + 3600_000);
    // Rotating it again is refused: it names the replacement to rotate instead.
    const again = run('keys', 'rotate', keyId);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(
      `key ${keyId} was already rotated at ${r.created_at}; rotate its replacement ${r.id} instead`,
    );
    expect(json<KeyView[]>(['keys', 'list', 'acme'])).toHaveLength(3);
    expect(json<KeyView[]>(['keys', 'list', 'acme']).find((k) => k.id === keyId)?.expires_at).toBe(
      old.expires_at,
    );
    const now = json<Record<string, string>>(['keys', 'rotate', r.id, '--grace', '0']);
    expect(Date.parse(now.replaced_expires_at)).toBeLessThanOrEqual(testNow());
    const text = run('keys', 'list');
    expect(text.stdout).toMatch(new RegExp(`${r.id}.*expired`));
  });

  it('revokes a key by id, or by the secret itself', () => {
    const r = run('keys', 'revoke', keyId);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`revoked key ${keyId}`);
    const k = json<KeyView[]>(['keys', 'list']).find((x) => x.id === keyId)!;
    expect(k.revoked_at).not.toBeNull();
    const again = run('keys', 'revoke', keyId);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('already revoked');
    expect(again.stderr).not.toContain(secret);
    const bySecret = run('keys', 'revoke', secret);
    expect(bySecret.status).toBe(1);
    expect(bySecret.stderr).toContain(`key ${keyId} was already revoked`);
    expect(bySecret.stderr).not.toContain(secret);
    const rotateRevoked = run('keys', 'rotate', keyId);
    expect(rotateRevoked.status).toBe(1);
    expect(rotateRevoked.stderr).toContain('revoked');
  });

  it('refuses bad usage with exit 2 naming the flag or argument, failures with exit 1', () => {
    const plan = run('accounts', 'create', 'charlie', '--plan', 'gold');
    expect(plan.status).toBe(2);
    expect(plan.stderr).toContain('--plan');
    const noPlan = run('accounts', 'create', 'charlie');
    expect(noPlan.status).toBe(2);
    expect(noPlan.stderr).toContain('--plan');
    expect(run('accounts', 'create', 'bad name', '--plan', 'free').status).toBe(2);
    expect(run('accounts', 'set-plan', 'acme', 'gold').stderr).toContain('PLAN');
    expect(run('accounts', 'set-status', 'acme', 'paused').status).toBe(2);
    const grace = run('keys', 'rotate', keyId, '--grace', 'soon');
    expect(grace.status).toBe(2);
    expect(grace.stderr).toContain('--grace');
    const flag = run('keys', 'list', '--colour');
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain('--colour');
    expect(run('keys', 'frobnicate').status).toBe(2);
    expect(run('keys', 'create').status).toBe(2);

    const dup = run('accounts', 'create', 'acme', '--plan', 'free');
    expect(dup.status).toBe(1);
    expect(dup.stderr).toContain('already exists');
    for (const args of [
      ['accounts', 'show', 'nobody'],
      ['accounts', 'usage', 'nobody'],
      ['accounts', 'set-plan', 'nobody', 'pro'],
      ['keys', 'create', 'nobody'],
      ['keys', 'list', 'nobody'],
    ]) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('no account named "nobody"');
    }
    expect(run('keys', 'revoke', 'key_000000000000').status).toBe(1);
  });

  it('reads the store from FUNDRETURNS_STORE', () => {
    const r = cli(['accounts', 'list', '--json'], { FUNDRETURNS_STORE: store });
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as unknown[]).length).toBe(2);
  });
});

describe('with another process on the store', () => {
  it('a watcher sees a revoke from the CLI within a second, and concurrent CLIs never lose a change', async () => {
    const shared = join(dir, 'shared');
    expect((await cliAsync(['accounts', 'create', 'live', '--plan', 'free', '--store', shared])).status).toBe(
      0,
    );
    const k = JSON.parse(
      (await cliAsync(['keys', 'create', 'live', '--json', '--store', shared])).stdout,
    ) as Record<string, string>;
    const watcher = await FileAccessStore.open(shared);
    await watcher.read();
    let changedAt = 0;
    const stop = watcher.subscribe(() => {
      changedAt ||= Date.now();
    });
    const r = await cliAsync(['keys', 'revoke', k.id, '--store', shared]);
    const done = Date.now();
    expect(r.status).toBe(0);
    while (changedAt === 0 && Date.now() - done < 3000) await new Promise((res) => setTimeout(res, 10));
    expect(changedAt).toBeGreaterThan(0);
    expect(changedAt - done).toBeLessThan(1000);
    expect((await watcher.read()).keys[0].revoked_at).not.toBeNull();
    stop();

    const names = Array.from({ length: 6 }, (_, i) => `team${i}`);
    const results = await Promise.all(
      names.map((n) => cliAsync(['accounts', 'create', n, '--plan', 'free', '--store', shared])),
    );
    expect(results.map((x) => x.status)).toEqual(names.map(() => 0));
    const state = await watcher.read();
    expect(state.accounts.map((a) => a.name).sort()).toEqual(['live', ...names].sort());
    await watcher.close();
    expect(readdirSync(shared).filter((f) => f.includes('lock') || f.endsWith('.tmp'))).toEqual([]);
  });
});
