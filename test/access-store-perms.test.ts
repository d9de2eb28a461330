/**
 * The embedded store is private to its owner: its log
 * decides which keys are valid, so a store others can write to is refused, and what
 * the store creates is 700/600 whatever the umask. The compiled CLI (`npm run build`).
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../accounts/keys.js';
import { CLI, cli, generateAndBuild, tempDir } from './harness.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('store-perms');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI under umask 000, as a shell with a careless profile would run it. */
function careless(args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, CLI, ...args], {
    encoding: 'utf8',
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A store made by the CLI with an account `acme` and one key. */
function makeStore(name: string): string {
  const store = join(dir, name, 'store');
  expect(cli(['accounts', 'create', 'acme', '--plan', 'free', '--store', store]).status).toBe(0);
  expect(cli(['keys', 'create', 'acme', '--store', store]).status).toBe(0);
  return store;
}

describe('a store created under umask 000', () => {
  it('has a 700 directory and 600 files (log, marker, lock, usage-free commands alike)', () => {
    const store = join(dir, 'umask', 'store');
    const a = careless(['accounts', 'create', 'acme', '--plan', 'free', '--store', store]);
    expect(a.stderr).toBe('');
    expect(a.status).toBe(0);
    expect(careless(['keys', 'create', 'acme', '--store', store]).status).toBe(0);
    expect(careless(['accounts', 'set-plan', 'acme', 'pro', '--store', store]).status).toBe(0);
    expect(modeOf(store)).toBe(0o700);
    const files = readdirSync(store);
    expect(files).toEqual(expect.arrayContaining(['access.log', 'store.json']));
    for (const f of files) expect(modeOf(join(store, f)), f).toBe(0o600);
  });
});

describe('a store group or others can write to', () => {
  it('is refused by the CLI with exit 1 and the way to fix it, for a 777 directory or a 666 log; fixed, it opens again', () => {
    const store = makeStore('refused');
    for (const [path, mode] of [
      [store, 0o777],
      [join(store, 'access.log'), 0o666],
      [join(store, 'store.json'), 0o620],
    ] as const) {
      const before = modeOf(path);
      chmodSync(path, mode);
      for (const args of [
        ['accounts', 'list'],
        ['keys', 'create', 'acme'],
      ]) {
        const r = cli([...args, '--store', store]);
        expect(r.status, `${path} ${args.join(' ')}`).toBe(1);
        expect(r.stderr).toContain(`the store ${store} is refused: ${path} is writable by`);
        expect(r.stderr).toContain(`chmod -R go-rwx ${store}`);
      }
      chmodSync(path, before);
    }
    expect(cli(['accounts', 'list', '--store', store]).status).toBe(0);
  });

  it('is refused by serve, so a key appended to a 666 log by anyone is never accepted', async () => {
    const root = join(dir, 'forged');
    const store = makeStore('forged');
    const { snapshots } = generateAndBuild(root, 5);
    const acme = JSON.parse(cli(['accounts', 'show', 'acme', '--json', '--store', store]).stdout) as {
      id: string;
    };
    const forged = generateKey();
    const log = join(store, 'access.log');
    chmodSync(log, 0o666);
    appendFileSync(
      log,
      `${JSON.stringify({
        op: 'key.create',
        key: {
          id: forged.id,
          account_id: acme.id,
          prefix: forged.prefix,
          hash: forged.hash,
          created_at: '2026-01-01T00:00:00.000Z',
          revoked_at: null,
          expires_at: null,
        },
      })}\n`,
    );
    // Bounded: were the store accepted, serve would run until killed here.
    const r = spawnSync(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--threads', '1', '--store', store, '--snapshots', snapshots],
      { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(r.status).toBe(1);
    expect(r.stderr + r.stdout).toContain(`${log} is writable by group and others (mode 666)`);
  });
});

describe('litter of killed writers', () => {
  it('a store.json.<pid>.tmp of a pid that no longer runs is gone after the next change; a live one is kept', () => {
    const store = makeStore('litter');
    const dead = join(store, 'store.json.999999.tmp');
    const alive = join(store, `usage-2026-01.json.${process.pid}.tmp`);
    writeFileSync(dead, '{"format":1,', { mode: 0o600 });
    writeFileSync(alive, '{', { mode: 0o600 });
    expect(cli(['accounts', 'list', '--store', store]).status).toBe(0);
    expect(cli(['accounts', 'create', 'other', '--plan', 'free', '--store', store]).status).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(readFileSync(alive, 'utf8')).toBe('{');
  });
});
