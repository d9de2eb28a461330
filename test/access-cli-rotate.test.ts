/**
 * `keys rotate` on a key already in its grace period: refused, naming the replacement
 * to rotate instead, so an account never collects a second replacement for one key.
 * A rotation from the command line is the dashboard's (the key actions): the
 * replacement keeps the old key's label.
 */
import { rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../accounts/key-actions.js';
import { openStore } from '../accounts/open-store.js';
import { cli, generateAndBuild, startServe, tempDir, testNow } from './harness.js';

let dir: string;
let store: string;

beforeAll(() => {
  dir = tempDir('access-rotate');
  store = join(dir, 'store');
  expect(cli(['accounts', 'create', 'acme', '--plan', 'free', '--store', store]).status).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) => cli([...args, '--store', store]);

function json<T>(...args: string[]): T {
  const r = run(...args, '--json');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as T;
}

interface Rotated {
  id: string;
  key: string;
  created_at: string;
  replaces: string;
  replaced_expires_at: string;
}

const keyCount = () => json<unknown[]>('keys', 'list', 'acme').length;

describe('rotating a key twice', () => {
  it('refuses to rotate a key in its grace period and names its replacement', () => {
    const k = json<{ id: string; key: string }>('keys', 'create', 'acme');
    const first = json<Rotated>('keys', 'rotate', k.id, '--grace', '3600');
    expect(keyCount()).toBe(2);

    const r = run('keys', 'rotate', k.id);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(
      `key ${k.id} was already rotated at ${first.created_at}; rotate its replacement ${first.id} instead`,
    );
    expect(r.stderr).toContain(`keeps working until ${first.replaced_expires_at}`);
    expect(r.stdout).not.toMatch(/fr_live_/);
    // Also when the key is named by its secret, which is never echoed.
    const bySecret = run('keys', 'rotate', k.key);
    expect(bySecret.status).toBe(1);
    expect(bySecret.stderr).toContain(`rotate its replacement ${first.id} instead`);
    expect(bySecret.stderr).not.toContain(k.key);
    // No second replacement, and the grace period is as it was.
    expect(keyCount()).toBe(2);
    const old = json<Array<{ id: string; expires_at: string }>>('keys', 'list', 'acme').find(
      (x) => x.id === k.id,
    );
    expect(old?.expires_at).toBe(first.replaced_expires_at);
  });

  it('names the key in use when the replacement was rotated in turn', () => {
    const k = json<{ id: string }>('keys', 'create', 'acme');
    const first = json<Rotated>('keys', 'rotate', k.id, '--grace', '3600');
    const second = json<Rotated>('keys', 'rotate', first.id, '--grace', '3600');
    const r = run('keys', 'rotate', k.id);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`key ${k.id} was already rotated at ${first.created_at}`);
    expect(r.stderr).toContain(`rotate its replacement ${second.id} instead`);
  });

  it('says to create a new key when the replacement was revoked', () => {
    const k = json<{ id: string }>('keys', 'create', 'acme');
    const first = json<Rotated>('keys', 'rotate', k.id, '--grace', '3600');
    expect(run('keys', 'revoke', first.id).status).toBe(0);
    const r = run('keys', 'rotate', k.id);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`its replacement ${first.id} is revoked`);
    expect(r.stderr).toContain('fundreturns keys create acme');
  });

  it('refuses a key whose grace period is over, as before', () => {
    const k = json<{ id: string }>('keys', 'create', 'acme');
    json<Rotated>('keys', 'rotate', k.id, '--grace', '0');
    const r = run('keys', 'rotate', k.id);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`key ${k.id} is expired`);
  });
});

/** A request's status with `key` (its own connection: no keep-alive between keys). */
function statusWith(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(
        `${url}/v1/funds?limit=1`,
        { agent: false, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      )
      .on('error', reject);
  });
}

describe('rotating a labelled key from the command line', () => {
  it('the replacement keeps the label; the old key stops working and the new one works', async () => {
    // A key made in the dashboard has a label; the dashboard's own action makes it here.
    const opened = await openStore(store);
    let secret: string;
    let id: string;
    try {
      const acme = (await opened.read()).accounts.find((a) => a.name === 'acme');
      expect(acme).toBeDefined();
      const made = await issueKey(opened, acme as NonNullable<typeof acme>, 'ci deploy', testNow());
      ({ secret } = made);
      id = made.record.id;
    } finally {
      await opened.close();
    }
    const { snapshots } = generateAndBuild(join(dir, 'universe'), 3);
    const server = await startServe(['--store', store, '--snapshots', snapshots, '--threads', '1']);
    try {
      expect(await statusWith(server.url, secret)).toBe(200);
      const rotated = json<Rotated>('keys', 'rotate', id, '--grace', '0');
      expect(rotated.replaces).toBe(id);
      const keys = json<Array<{ id: string; label?: string }>>('keys', 'list', 'acme');
      expect(keys.find((k) => k.id === rotated.id)?.label).toBe('ci deploy');
      expect(keys.find((k) => k.id === id)?.label).toBe('ci deploy');
      // The server applies a store change within a second (C25).
      await expect.poll(() => statusWith(server.url, secret), { timeout: 5000 }).toBe(401);
      expect(await statusWith(server.url, rotated.key)).toBe(200);
      // Text output names the label's key as before, and never echoes the old secret.
      const shown = run('keys', 'list', 'acme');
      expect(shown.stdout).toContain('LABEL');
      expect(shown.stdout).not.toContain(secret);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
