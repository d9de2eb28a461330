import { cpSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFromSource } from '../../builder/build.js';
import { scratch } from '../../builder/build.test-helper.js';
import { generateUniverse } from '../../builder/generate/index.js';
import { fromYmd } from '../../core/dates.js';
import { setCurrent } from '../../core/snapshot/directory.js';
import { type ManagerEvents, SnapshotManager } from './manager.js';

const dir = scratch('fr-manager-');

/** Everything a manager tells the server, in order. */
function recorder(): ManagerEvents & { said: string[] } {
  const said: string[] = [];
  return {
    said,
    onSnapshot: (msg) => said.push(`snapshot ${msg.id}`),
    onProblem: (message) => said.push(`problem ${message === null ? 'over' : message.split(':')[0]}`),
    log: (level, msg) => said.push(`${level} ${msg}`),
  };
}

/** Two snapshots of one small universe, the second built a day after the first. */
async function twoSnapshots(name: string): Promise<{ snaps: string; older: string; newer: string }> {
  const source = dir(`${name}-source`);
  const snaps = dir(`${name}-snaps`);
  await generateUniverse({
    out: source,
    funds: 4,
    seed: 5,
    from: fromYmd(2024, 1, 1),
    to: fromYmd(2024, 6, 28),
  });
  const opts = { source, snapshots: snaps, keep: 5, maxBadShare: 0.01, threads: 1 };
  const older = await buildFromSource({ ...opts, now: () => new Date('2024-07-01T00:00:00Z') });
  const newer = await buildFromSource({ ...opts, now: () => new Date('2024-07-02T00:00:00Z') });
  return { snaps, older: older.id, newer: newer.id };
}

describe('SnapshotManager', () => {
  it('a load still running when the server stops hands nothing over and logs nothing after it', async () => {
    const { snaps, newer } = await twoSnapshots('late');
    const events = recorder();
    const manager = new SnapshotManager(snaps, 60_000, events);
    const loading = manager.check();
    manager.stop();
    await loading;
    expect(events.said).toEqual([]);
    expect(manager.currentId).toBeNull();
    // The same manager, not stopped, would have served it.
    const live = new SnapshotManager(snaps, 60_000, recorder());
    await live.check();
    expect(live.currentId).toBe(newer);
  });

  it('a refused snapshot left as it is is not loaded again on every poll, but is as soon as CURRENT is republished', async () => {
    const { snaps, older, newer } = await twoSnapshots('retry');
    setCurrent(snaps, older);
    const events = recorder();
    const manager = new SnapshotManager(snaps, 60_000, events);
    await manager.check();
    expect(manager.currentId).toBe(older);

    // A snapshot cut in half: its copy is kept to repair it in place later.
    const series = join(snaps, newer, 'series.arrow');
    cpSync(series, join(dir('retry-keep'), 'series.arrow'));
    truncateSync(series, 1000);
    setCurrent(snaps, newer);
    await manager.check();
    expect(manager.currentId).toBe(older);
    expect(events.said.slice(-2)).toEqual([`problem snapshot ${newer} refused`, 'error snapshot refused']);

    // Polls while nothing changed: no new load, no new log line (the 30 s backoff).
    const before = events.said.length;
    for (let i = 0; i < 3; i++) await manager.check();
    expect(events.said.length).toBe(before);

    // Repaired in place, then published again: loaded at once.
    cpSync(join(dir('retry-keep'), 'series.arrow'), series);
    setCurrent(snaps, newer);
    await manager.check();
    expect(manager.currentId).toBe(newer);
    expect(events.said.slice(before)).toEqual(['problem over', `snapshot ${newer}`, 'info snapshot loaded']);
  });
});
