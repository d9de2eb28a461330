/** The live snapshot of `--snapshots`, for the commands that read it (query, inspect). */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readCurrent } from '../../core/snapshot/directory.js';
import { loadSnapshot } from '../../core/snapshot/reader.js';
import type { ParsedArgs } from '../shared/args.js';
import { SNAPSHOTS } from '../shared/flags.js';

export async function openCurrent(args: ParsedArgs) {
  const snapshots = resolve(SNAPSHOTS.read(args));
  if (!existsSync(snapshots)) throw new Error(`the snapshots directory ${snapshots} does not exist`);
  const current = readCurrent(snapshots);
  if (current === null)
    throw new Error(`no snapshot published in ${snapshots}: run \`fundreturns build\` first`);
  try {
    return await loadSnapshot(join(snapshots, current));
  } catch (e) {
    // The verifier speaks of files; say which snapshot they belong to.
    throw new Error(`snapshot ${current} in ${snapshots} refused: ${(e as Error).message}`);
  }
}
