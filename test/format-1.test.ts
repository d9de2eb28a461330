/**
 * A snapshot written before risk figures (format 1) is still read and served, so
 * that servers can be upgraded before the machine that builds (docs/operating.md):
 * its risk figures are those the builder writes for a source without rates.
 */
import { cpSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCurrent } from '../core/snapshot/directory.js';
import { attachSnapshot, type LoadedSnapshot, loadSnapshot } from '../core/snapshot/reader.js';
import { MANIFEST_FILE, RATES_FILE, RISK_FILE } from '../core/snapshot/schema.js';
import { cli, setupAccess, startServe, tempDir } from './harness.js';

const dir = tempDir('format-1');
let current: LoadedSnapshot;
let format1Dir: string;
let format1Snapshots: string;

/** Turns a format-2 snapshot into the format-1 snapshot an older builder wrote from the same source. */
function asFormat1(snapshot: string): void {
  unlinkSync(join(snapshot, RISK_FILE));
  unlinkSync(join(snapshot, RATES_FILE));
  const m = JSON.parse(readFileSync(join(snapshot, MANIFEST_FILE), 'utf8'));
  m.format_version = 1;
  delete m.files[RISK_FILE];
  delete m.files[RATES_FILE];
  writeFileSync(join(snapshot, MANIFEST_FILE), JSON.stringify(m));
}

beforeAll(async () => {
  const source = join(dir, 'source');
  const g = cli([
    'generate',
    '--out',
    source,
    '--funds',
    '40',
    '--seed',
    '3',
    '--from',
    '1995-01-01',
    '--daily-days',
    '2',
  ]);
  if (g.status !== 0) throw new Error(g.stderr);
  // The older builder had no rates: compare with what this one writes without them.
  renameSync(join(source, 'rates'), join(dir, 'rates-later'));
  const snapshots = join(dir, 'snapshots');
  const b = cli(['build', '--source', source, '--snapshots', snapshots]);
  if (b.status !== 0) throw new Error(b.stderr);
  const id = readCurrent(snapshots)!;
  current = await loadSnapshot(join(snapshots, id));
  format1Snapshots = join(dir, 'snapshots-format-1');
  cpSync(snapshots, format1Snapshots, { recursive: true });
  format1Dir = join(format1Snapshots, id);
  asFormat1(format1Dir);
}, 120_000);

describe('a format-1 snapshot', () => {
  it('loads with the latest risk figures the builder writes, and no rates', async () => {
    const old = await loadSnapshot(format1Dir);
    expect(old.manifest.format_version).toBe(1);
    expect(old.columns.risk).toEqual(current.columns.risk);
    expect(old.columns.rates.date.length).toBe(0);
    expect(old.columns.trailing).toEqual(current.columns.trailing);
  });

  it('is handed to the server threads like any other', async () => {
    const old = await loadSnapshot(format1Dir);
    const attached = attachSnapshot({ manifest: old.manifest, buffers: old.buffers });
    expect(attached.risk).toEqual(current.columns.risk);
  });

  it('that lists a risk file is refused: format 1 has none (MANIFEST_INVALID)', async () => {
    const bad = join(dir, 'bad');
    cpSync(join(dir, 'snapshots', readCurrent(join(dir, 'snapshots'))!), bad, { recursive: true });
    const m = JSON.parse(readFileSync(join(bad, MANIFEST_FILE), 'utf8'));
    m.format_version = 1;
    delete m.files[RATES_FILE];
    writeFileSync(join(bad, MANIFEST_FILE), JSON.stringify(m));
    await expect(loadSnapshot(bad)).rejects.toMatchObject({
      code: 'MANIFEST_INVALID',
      message: expect.stringMatching(/risk\.arrow, which format_version 1 does not have/),
    });
  });

  it('is served: returns and risk answer as from the snapshot this release builds', async () => {
    const access = setupAccess(join(dir, 'access'));
    const code = current.columns.funds.code[0];
    const paths = [`/v1/funds/${code}/trailing-returns`, `/v1/funds/${code}/risk`];
    const answers = async (snapshots: string) => {
      const server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '1']);
      try {
        return await Promise.all(
          paths.map(async (p) => {
            const r = await fetch(`${server.url}${p}`, { headers: access.headers });
            return { status: r.status, body: await r.json() };
          }),
        );
      } finally {
        await server.stop();
      }
    };
    const before = await answers(format1Snapshots);
    expect(before.map((a) => a.status)).toEqual([200, 200]);
    expect(before).toEqual(await answers(join(dir, 'snapshots')));
  }, 120_000);

  it('takes a daily append, which writes the current format with the source rates, as onto a format-2 snapshot', async () => {
    const source = join(dir, 'source');
    renameSync(join(dir, 'rates-later'), join(source, 'rates'));
    const appended = async (snapshots: string) => {
      const copy = `${snapshots}-appended`;
      cpSync(snapshots, copy, { recursive: true });
      const r = cli(['build', '--daily', join(source, 'daily'), '--snapshots', copy]);
      if (r.status !== 0) throw new Error(r.stderr);
      return loadSnapshot(join(copy, readCurrent(copy)!));
    };
    const fromOld = await appended(format1Snapshots);
    const fromCurrent = await appended(join(dir, 'snapshots'));
    expect(fromOld.manifest.format_version).toBe(2);
    expect(fromOld.columns.rates.date.length).toBeGreaterThan(0);
    expect(fromOld.columns.risk).toEqual(fromCurrent.columns.risk);
    expect(fromOld.columns.trailing).toEqual(fromCurrent.columns.trailing);
  }, 120_000);
});
