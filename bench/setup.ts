/**
 * What every benchmark starts with: its `--name value` flags, and for the ones
 * below HTTP the live snapshot of a snapshots directory, loaded as the server
 * loads it.
 */
import { readCurrent } from '../core/snapshot/directory.js';
import { prepareToolResults } from '../server/mcp/tool-results.js';
import { loadForServing } from '../server/snapshot/manager.js';
import { ServingSnapshot } from '../server/snapshot/serving.js';

export const DEFAULT_SNAPSHOTS = '/tmp/fr-bench/snapshots';

/** `--name value` pairs from the command line. */
export function benchArgs(): Map<string, string> {
  const args = new Map<string, string>();
  for (let i = 2; i < process.argv.length; i += 2)
    args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
  return args;
}

/** The snapshot CURRENT names in `--snapshots` (default /tmp/fr-bench/snapshots), and its id. */
export async function servingSnapshot(
  args: Map<string, string>,
): Promise<{ snap: ServingSnapshot; id: string }> {
  const snapshots = args.get('snapshots') ?? DEFAULT_SNAPSHOTS;
  const id = readCurrent(snapshots);
  if (!id) throw new Error(`no snapshot in ${snapshots}`);
  return { snap: new ServingSnapshot(await loadForServing(snapshots, id, prepareToolResults)), id };
}
