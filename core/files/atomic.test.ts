import { readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from '../../builder/build.test-helper.js';
import {
  fsyncDir,
  fsyncDirSync,
  sweepDeadTemps,
  sweepDeadTempsSync,
  writeAtomic,
  writeAtomicSync,
} from './atomic.js';
import { runChild } from './child.test-helper.js';

const scratchDir = scratch('fr-atomic-');
let made = 0;
const tempDir = () => scratchDir(String(made++));

/** A pid no process of this host has (above the kernel's largest). */
const DEAD_PID = 2 ** 22 + 12345;

describe('a file replaced whole', () => {
  it('replaces the content and leaves no temp file, with the mode asked for', async () => {
    const dir = tempDir();
    const path = join(dir, 'store.json');
    writeFileSync(path, 'old');
    await writeAtomic(path, 'new', { mode: 0o600 });
    expect(readFileSync(path, 'utf8')).toBe('new');
    writeAtomicSync(join(dir, 'b'), Buffer.from([0xe9, 0x0a]), { durable: false });
    expect(readFileSync(join(dir, 'b'))).toEqual(Buffer.from([0xe9, 0x0a]));
    expect(readdirSync(dir).sort()).toEqual(['b', 'store.json']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('a process killed between the write and the rename leaves the old file intact, and its temp file is swept', () => {
    const dir = tempDir();
    const path = join(dir, 'refresh-stats.json');
    writeFileSync(path, 'old');
    const signal = runChild(
      `import { writeAtomicSync } from './atomic.ts';
       writeAtomicSync(${JSON.stringify(path)}, 'new', { beforeRename: () => process.kill(process.pid, 'SIGKILL') });`,
    );
    expect(signal).toBe('SIGKILL');
    expect(readFileSync(path, 'utf8')).toBe('old');
    const left = readdirSync(dir).filter((n) => n.endsWith('.tmp'));
    expect(left).toHaveLength(1);
    expect(readFileSync(join(dir, left[0]), 'utf8')).toBe('new');
    expect(sweepDeadTempsSync(dir)).toEqual(left);
    expect(readdirSync(dir)).toEqual(['refresh-stats.json']);
  });

  it('a write that fails (a full disk) names the temp file, removes it and keeps the old file', async () => {
    const dir = tempDir();
    const path = join(dir, 'CURRENT');
    writeFileSync(path, 'old\n');
    const temp = join(dir, '.tmp-CURRENT-1');
    symlinkSync('/dev/full', temp);
    expect(() => writeAtomicSync(path, 'new\n', { temp })).toThrow(`${temp}: ENOSPC`);
    symlinkSync('/dev/full', temp);
    await expect(writeAtomic(path, 'new\n', { temp })).rejects.toThrow(`${temp}: ENOSPC`);
    expect(readdirSync(dir)).toEqual(['CURRENT']);
    expect(readFileSync(path, 'utf8')).toBe('old\n');
  });

  it('fsync of a directory that is not there names it', async () => {
    const missing = join(tempDir(), 'missing');
    expect(() => fsyncDirSync(missing)).toThrow(missing);
    await expect(fsyncDir(missing)).rejects.toThrow(missing);
  });
});

describe('sweeping temp files', () => {
  it('removes only the temp files of writers that no longer run', async () => {
    const dir = tempDir();
    const names = {
      dead: `usage-2026-11.json.3.${DEAD_PID}.tmp`,
      live: `usage-2026-11.json.4.${process.pid}.tmp`,
      deadOld: `store.json.${DEAD_PID}.tmp`,
      notTemp: 'store.json',
      tmpInName: 'notes.tmp',
      lock: 'access.lock',
    };
    for (const n of Object.values(names)) writeFileSync(join(dir, n), 'x');
    expect((await sweepDeadTemps(dir)).sort()).toEqual([names.dead, names.deadOld].sort());
    expect(readdirSync(dir).sort()).toEqual([names.live, names.notTemp, names.tmpInName, names.lock].sort());
    expect(sweepDeadTempsSync(join(dir, 'none'))).toEqual([]);
  });
});
