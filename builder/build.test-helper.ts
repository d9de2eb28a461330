/**
 * What the builder's tests share: a scratch directory per test file, a hand-written
 * source directory (C35) and the lookup over a snapshots directory's live snapshot.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { readCurrent } from '../core/snapshot/directory.js';
import { SnapshotLookup } from '../core/snapshot/lookup.js';
import { loadSnapshot } from '../core/snapshot/reader.js';

/** A scratch directory for this test file (removed after it); `dir(name)` makes one inside. */
export function scratch(prefix: string): (name: string) => string {
  let work = '';
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  return (name) => {
    const d = join(work, name);
    mkdirSync(d, { recursive: true });
    return d;
  };
}

/** The live snapshot of a snapshots directory, as the server reads it. */
export async function lookupOf(snapshots: string): Promise<SnapshotLookup> {
  const current = readCurrent(snapshots);
  if (current === null) throw new Error('nothing published');
  return new SnapshotLookup((await loadSnapshot(join(snapshots, current))).columns);
}

/** A source directory: funds.csv with these rows, and one price file per entry of `prices`. */
export function writeSource(root: string, funds: string[], prices: Record<string, string>): string {
  mkdirSync(join(root, 'prices'), { recursive: true });
  writeFileSync(
    join(root, 'funds.csv'),
    `Code,Name,Country,Exchange,Currency,Type,Isin,IsInactive,InactiveDate\n${funds.join('\n')}\n`,
  );
  for (const [code, text] of Object.entries(prices)) writeFileSync(join(root, 'prices', `${code}.csv`), text);
  return root;
}

/** A funds.csv row for a fund of that code. */
export function fundRow(code: string): string {
  return `${code},${code} fund,USA,NMFQS,USD,FUND,,false,`;
}
