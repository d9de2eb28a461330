import { readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDay } from '../core/dates.js';
import { fsyncDirSync as fsyncDir } from '../core/files/atomic.js';
import { setCurrent } from '../core/snapshot/directory.js';
import { writeSnapshotFiles } from '../core/snapshot/writer.js';
import { syntheticColumns } from '../test/synthetic-columns.js';
import { scratch } from './build.test-helper.js';

const scratchDir = scratch('fr-publish-');
let made = 0;
const tempDir = () => scratchDir(String(made++));

/** Writing to /dev/full fails with ENOSPC, as a write on a full disk does. */
describe('I/O errors of a build and a publish name their file', () => {
  it('a snapshot file written to a full disk (/dev/full) is named in the error', async () => {
    const dir = tempDir();
    symlinkSync('/dev/full', join(dir, 'series.arrow'));
    const cols = syntheticColumns({ funds: 5, observations: 200, seed: 3 });
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < cols.funds.length; i++)
      max = Math.max(max, cols.series.date[cols.funds.seriesOffset[i] + cols.funds.seriesLength[i] - 1]);
    const writing = writeSnapshotFiles(dir, cols, {
      id: 'full-disk',
      asOf: formatDay(max),
      builtAt: '2025-07-01T02:03:04.000Z',
      report: {},
    });
    await expect(writing).rejects.toThrow(`${join(dir, 'series.arrow')}: ENOSPC`);
  });

  it('CURRENT written to a full disk is named, and its half-written temporary file is removed', () => {
    const dir = tempDir();
    const tmp = join(dir, `.tmp-CURRENT-${process.pid}`);
    symlinkSync('/dev/full', tmp);
    expect(() => setCurrent(dir, 'some-snapshot')).toThrow(`${tmp}: ENOSPC`);
    expect(readdirSync(dir)).toEqual([]);
    expect(() => fsyncDir(join(dir, 'missing'))).toThrow(join(dir, 'missing'));
  });
});
