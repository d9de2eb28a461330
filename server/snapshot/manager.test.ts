import { cpSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFromSource } from '../../builder/build.js';
import { scratch } from '../../builder/build.test-helper.js';
import { generateUniverse } from '../../builder/generate/index.js';
import { fromYmd } from '../../core/dates.js';
import { setCurrent } from '../../core/snapshot/directory.js';
import { prepareToolResults } from '../mcp/tool-results.js';
import { type ManagerEvents, SnapshotManager } from './manager.js';

const dir = scratch('fr-manager-');

/** Everything a manager tells the server, in order; `problems` and `logs` in full. */
function recorder(): ManagerEvents & { said: string[]; problems: (string | null)[]; logs: string[] } {
  const said: string[] = [];
  const problems: (string | null)[] = [];
  const logs: string[] = [];
  return {
    said,
    problems,
    logs,
    onSnapshot: (msg) => said.push(`snapshot ${msg.id}`),
    onProblem: (message) => {
      problems.push(message);
      said.push(
        `problem ${message === null ? 'over' : message.slice(message.indexOf(':') + 2).split(':')[0]}`,
      );
    },
    log: (level, msg, fields) => {
      logs.push(`${msg} ${JSON.stringify(fields ?? {})}`);
      said.push(`${level} ${msg}`);
    },
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

/** twoSnapshots, with a manager that serves the older one (CURRENT names it). */
async function servingOlder(name: string) {
  const { snaps, older, newer } = await twoSnapshots(name);
  setCurrent(snaps, older);
  const events = recorder();
  const manager = new SnapshotManager(snaps, 60_000, events, prepareToolResults);
  await manager.check();
  expect(manager.currentId).toBe(older);
  return { snaps, older, newer, events, manager };
}

describe('SnapshotManager', () => {
  it('a load still running when the server stops hands nothing over and logs nothing after it', async () => {
    const { snaps, newer } = await twoSnapshots('late');
    const events = recorder();
    const manager = new SnapshotManager(snaps, 60_000, events, prepareToolResults);
    const loading = manager.check();
    manager.stop();
    await loading;
    expect(events.said).toEqual([]);
    expect(manager.currentId).toBeNull();
    // The same manager, not stopped, would have served it.
    const live = new SnapshotManager(snaps, 60_000, recorder(), prepareToolResults);
    await live.check();
    expect(live.currentId).toBe(newer);
  });

  it('a refused snapshot left as it is is not loaded again on every poll, but is as soon as CURRENT is republished', async () => {
    const { snaps, older, newer, events, manager } = await servingOlder('retry');

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

describe('what a refusal tells the public (/healthz) and what it tells the log', () => {
  it('a hostile CURRENT (a link to a secret, a path, garbage) and a snapshot missing a file: the public text has a code and a sentence, never a path or what CURRENT holds; the log has both', async () => {
    const { snaps, older, newer, events, manager } = await servingOlder('hostile');

    const secrets = dir('hostile-secrets');
    const current = join(snaps, 'CURRENT');
    const cases: Array<{ make: () => void; code: string; secret: string }> = [
      {
        // A line without a slash passes as a name: it must not be echoed as a snapshot id.
        make: () => {
          writeFileSync(join(secrets, 'token'), 'hunter2-the-secret-line\n');
          rmSync(current);
          symlinkSync(join(secrets, 'token'), current);
        },
        code: 'SNAPSHOT_MISSING',
        secret: 'hunter2-the-secret-line',
      },
      {
        make: () => {
          writeFileSync(join(secrets, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
          rmSync(current);
          symlinkSync(join(secrets, 'passwd'), current);
        },
        code: 'CURRENT_INVALID',
        secret: 'root:x:0:0',
      },
      {
        make: () => writeFileSync(current, `${join(snaps, newer)}\n`),
        code: 'CURRENT_INVALID',
        secret: snaps,
      },
      {
        make: () => writeFileSync(current, '\u001b[2J\u001b]0;pwned\u0007garbage\n'),
        code: 'SNAPSHOT_MISSING',
        secret: 'pwned',
      },
      {
        make: () => {
          rmSync(join(snaps, newer, 'series.arrow'));
          setCurrent(snaps, newer);
        },
        code: 'FILE_MISSING',
        secret: snaps,
      },
    ];
    for (const c of cases) {
      const logsBefore = events.logs.length;
      c.make();
      await manager.check();
      expect(manager.currentId, c.code).toBe(older);
      const said = events.problems.at(-1);
      expect(said, c.code).toMatch(new RegExp(`^${c.code}: `));
      expect(said, c.code).not.toContain(c.secret);
      expect(said, c.code).not.toContain('/');
      expect(said, c.code).not.toMatch(/ENOENT|EACCES|open '/);
      // The operator's log says exactly what and where.
      const logged = events.logs.slice(logsBefore).join('\n');
      expect(logged, c.code).toContain(c.code === 'CURRENT_INVALID' ? 'CURRENT' : snaps);
      if (c.code === 'CURRENT_INVALID') expect(logged, c.code).toContain(current);
    }
    expect(events.problems.at(-1)).toBe(
      `FILE_MISSING: snapshot ${newer} refused: series.arrow: a file is missing or cannot be read (detail in the server log)`,
    );
  });
});

describe('what the log says of a CURRENT that is a link to another file', () => {
  const secretFile = (name: string, line: string) => {
    const file = join(dir(`${name}-elsewhere`), 'token');
    writeFileSync(file, `${line}\n`);
    return file;
  };

  it('the log says what the name was refused for and where the link points, never the content as a snapshot id (serving, and at start)', async () => {
    const { snaps, older, events, manager } = await servingOlder('linked');
    const current = join(snaps, 'CURRENT');
    for (const [line, marker] of [
      ['SECRET_LINE-hunter2', 'SECRET_LINE'],
      ['root:x:0:0:root:/root:/bin/bash', 'root:x'],
      ['pwned\u0007-token', 'pwned'],
    ]) {
      const file = secretFile(`linked-${events.logs.length}`, line);
      const before = events.logs.length;
      rmSync(current);
      symlinkSync(file, current);
      await manager.check();
      expect(manager.currentId).toBe(older);
      const logged = events.logs.slice(before).join('\n');
      expect(logged, line).not.toContain(marker);
      expect(events.problems.at(-1), line).not.toContain(marker);
      // What it was refused for, and where CURRENT leads: a path, not the file's content.
      expect(logged, line).toMatch(/names no directory of|not the name of a snapshot|holds a path/);
      expect(logged, line).toContain(current);
    }
    // At start, with nothing serving yet: the fall back to an older snapshot says no more.
    const file = secretFile('linked-start', 'SECRET_LINE-at-start');
    rmSync(current);
    symlinkSync(file, current);
    const fresh = recorder();
    const started = new SnapshotManager(snaps, 60_000, fresh, prepareToolResults);
    await started.start();
    started.stop();
    expect(started.currentId).not.toBeNull();
    expect(fresh.logs.join('\n')).not.toContain('SECRET_LINE');
    expect(fresh.logs.join('\n')).toContain(`${current} is a link to ${file}`);
  });
});
