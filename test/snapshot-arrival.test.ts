/**
 * The second of two servers gets each snapshot by copy (docs/monitoring.md, "How the
 * second server gets each snapshot"; deploy/nginx/sync-snapshots.sh): the snapshot's
 * files arrive one at a time, each written in pieces, and CURRENT last. The server
 * must keep serving the old snapshot while they arrive, swap once CURRENT names the new
 * one, and never report a refusal that stays.
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readCurrent } from '../core/snapshot/directory.js';
import {
  cli,
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  startServe,
  tempDir,
  waitFor,
} from './harness.js';

interface Health {
  snapshot: { id: string } | null;
  last_error?: string;
}

let dir: string;
let server: ServerProcess;
let served: string;
let built: string;

beforeAll(async () => {
  dir = tempDir('arrival');
  const { source, snapshots } = generateAndBuild(dir, 30);
  served = snapshots;
  // The builder machine's own directory: the next snapshot is published there.
  built = join(dir, 'built');
  const b = cli(['build', '--source', source, '--snapshots', built]);
  expect(b.status, b.stderr).toBe(0);
  server = await startServe([
    ...setupAccess(dir).flags,
    '--snapshots',
    served,
    '--threads',
    '1',
    '--poll-ms',
    '100',
  ]);
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const health = async (): Promise<Health> => (await fetch(`${server.url}/healthz`)).json() as Promise<Health>;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a server picks up a snapshot that arrives file by file, CURRENT last, and never reports a refusal that stays', async () => {
  const old = readCurrent(served)!;
  const next = readCurrent(built)!;
  expect(next).not.toBe(old);
  expect((await health()).snapshot?.id).toBe(old);
  mkdirSync(join(served, next));
  // manifest.json last within the directory would be kinder; the copy does not promise any order.
  for (const f of readdirSync(join(built, next)).sort()) {
    const bytes = readFileSync(join(built, next, f));
    const fd = openSync(join(served, next, f), 'w');
    // Half a file for a while: what a reader sees mid-copy.
    writeSync(fd, bytes, 0, bytes.length >> 1);
    await pause(120);
    const h = await health();
    expect(h.snapshot?.id, f).toBe(old);
    expect(h.last_error, f).toBeUndefined();
    writeSync(fd, bytes, bytes.length >> 1, bytes.length - (bytes.length >> 1));
    closeSync(fd);
    await pause(120);
  }
  expect((await health()).snapshot?.id).toBe(old);
  // CURRENT last, by rename (as rsync and sync-snapshots.sh write it).
  writeFileSync(join(served, 'CURRENT.part'), `${next}\n`);
  renameSync(join(served, 'CURRENT.part'), join(served, 'CURRENT'));
  await waitFor(
    async () => (await health()).snapshot?.id === next,
    15_000,
    `the swap to ${next}`,
    server.logs,
  );
  for (let i = 0; i < 5; i++) {
    expect((await health()).last_error).toBeUndefined();
    await pause(100);
  }
});
