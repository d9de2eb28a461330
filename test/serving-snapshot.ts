/**
 * A small synthetic snapshot served in-process, for tests that need a ServingSnapshot
 * without a server: written to a temporary directory, loaded and prepared as the
 * snapshot manager would. The caller removes `dir`.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDay } from '../core/dates.js';
import type { SnapshotColumns } from '../core/snapshot/columns.js';
import { writeSnapshotFiles } from '../core/snapshot/writer.js';
import { prepareToolResults } from '../server/mcp/tool-results.js';
import { loadForServing } from '../server/snapshot/manager.js';
import { ServingSnapshot } from '../server/snapshot/serving.js';
import { syntheticColumns } from './synthetic-columns.js';

export async function syntheticServing(
  funds = 30,
  observationsPerFund = 800,
  /** Changes to the generated columns before they are written (names with quotes, say). */
  edit: (cols: SnapshotColumns) => void = () => {},
): Promise<{ dir: string; snap: ServingSnapshot; codes: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'serving-test-'));
  const cols = syntheticColumns({ funds, observations: funds * observationsPerFund, seed: 3 });
  edit(cols);
  let last = 0;
  for (let i = 0; i < cols.funds.length; i++)
    last = Math.max(last, cols.series.date[cols.funds.seriesOffset[i] + cols.funds.seriesLength[i] - 1]);
  const id = 'synthetic';
  mkdirSync(join(dir, id));
  await writeSnapshotFiles(join(dir, id), cols, {
    id,
    asOf: formatDay(last),
    builtAt: '2025-07-01T00:00:00.000Z',
    report: {},
  });
  return {
    dir,
    snap: new ServingSnapshot(await loadForServing(dir, id, prepareToolResults)),
    codes: cols.funds.code,
  };
}
