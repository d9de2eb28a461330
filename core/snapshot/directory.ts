/**
 * The snapshots directory, shared by the builder (which publishes and prunes) and the
 * server and the command line (which read `CURRENT` and list): one definition of its
 * layout, so data flows one way, from builder/ through core/ to server/.
 *
 * Atomic publishing and retention (DESIGN "Snapshot"): a snapshot is written into
 * `.tmp-<id>/`, fsynced, renamed into place, and only then is `CURRENT` replaced by
 * a rename, so readers never see half a snapshot and a failed build changes nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDirSync, sweepDeadTempsSync, writeAtomicSync } from '../files/atomic.js';
import type { Manifest } from './manifest.js';

export const CURRENT_FILE = 'CURRENT';
const TMP_PREFIX = '.tmp-';

/** The longest file name Linux allows, so the longest CURRENT can name. */
const NAME_MAX = 255;

/**
 * CURRENT cannot be used: CURRENT_UNREADABLE (a directory, no permission) or
 * CURRENT_INVALID (what it holds is not a snapshot's name). The message is for the
 * operator (it names the file and says why, never quoting what it holds, since CURRENT
 * may be a link to a file that is nobody's business); `code` is what may be shown to
 * anyone (/healthz).
 */
export class CurrentError extends Error {
  constructor(
    readonly code: 'CURRENT_UNREADABLE' | 'CURRENT_INVALID',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CurrentError';
  }
}

/** The live snapshot's directory name, or null when nothing is published. Throws CurrentError. */
export function readCurrent(snapshotsDir: string): string | null {
  const path = join(snapshotsDir, CURRENT_FILE);
  let name: string;
  try {
    name = readFileSync(path, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // A system error (CURRENT a directory, unreadable) says only "EISDIR: …, read": name the file.
    throw new CurrentError('CURRENT_UNREADABLE', `${path} cannot be read: ${(e as Error).message}`, {
      cause: e,
    });
  }
  if (name.length === 0) return null;
  // The messages say why, never what CURRENT holds: it may be a link to any file.
  if (name.length > NAME_MAX)
    throw new CurrentError(
      'CURRENT_INVALID',
      `${path} holds ${name.length} characters, more than any file name: not the name of a snapshot`,
    );
  // A name, never a path: CURRENT must not lead out of the snapshots directory.
  if (/[/\\]/.test(name) || name === '.' || name === '..')
    throw new CurrentError(
      'CURRENT_INVALID',
      `${path} holds a path (a "/" or "\\", or "." or ".."), not a snapshot in that directory`,
    );
  return name;
}

/** A fresh staging directory for snapshot `id`. */
export function stagingDir(snapshotsDir: string, id: string): string {
  mkdirSync(snapshotsDir, { recursive: true });
  const dir = join(snapshotsDir, `${TMP_PREFIX}${id}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  return dir;
}

/** Move a fully written staging directory into place, then point CURRENT at it. */
export function publish(snapshotsDir: string, staging: string, id: string): string {
  fsyncDirSync(staging);
  const finalDir = join(snapshotsDir, id);
  renameSync(staging, finalDir);
  fsyncDirSync(snapshotsDir);
  setCurrent(snapshotsDir, id);
  return finalDir;
}

/** Point CURRENT at an existing snapshot (also the rollback). */
export function setCurrent(snapshotsDir: string, id: string): void {
  // A staging name: a killed setCurrent's file goes with the stale staging directories.
  const temp = join(snapshotsDir, `${TMP_PREFIX}CURRENT-${process.pid}`);
  writeAtomicSync(join(snapshotsDir, CURRENT_FILE), `${id}\n`, { temp });
}

/** A snapshot directory's name, as `snapshotId` makes it. */
const SNAPSHOT_ID = /^\d{4}-\d{2}-\d{2}-\d{8}T\d{6}Z-[0-9a-f]{4}$/;

/**
 * Published snapshot directories, oldest first (by build time in the manifest, else
 * mtime). Only directories named as snapshots and holding a manifest count: anything
 * else an operator keeps there (a backup, notes) is neither counted nor pruned.
 */
export function listSnapshots(snapshotsDir: string): Array<{ id: string; builtAt: number }> {
  let names: string[];
  try {
    names = readdirSync(snapshotsDir);
  } catch {
    return [];
  }
  const out: Array<{ id: string; builtAt: number }> = [];
  for (const name of names) {
    if (!SNAPSHOT_ID.test(name)) continue;
    const dir = join(snapshotsDir, name);
    try {
      if (!statSync(dir).isDirectory() || !existsSync(join(dir, 'manifest.json'))) continue;
      let builtAt = statSync(dir).mtimeMs;
      try {
        const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Partial<Manifest>;
        if (typeof m.built_at === 'string') builtAt = Date.parse(m.built_at);
      } catch {
        // A directory without a readable manifest still ages by mtime.
      }
      out.push({ id: name, builtAt });
    } catch {
      // Vanished while listing: nothing to keep or prune.
    }
  }
  return out.sort((a, b) => a.builtAt - b.builtAt || (a.id < b.id ? -1 : 1));
}

/**
 * Keep the newest `keep` snapshots and always the live one; remove stale staging
 * directories left by interrupted builds. Returns the removed ids.
 */
export function prune(snapshotsDir: string, keep: number): string[] {
  const current = readCurrent(snapshotsDir);
  const all = listSnapshots(snapshotsDir);
  const removed: string[] = [];
  const excess = all.length - Math.max(1, keep);
  for (let i = 0; i < all.length && removed.length < excess; i++) {
    if (all[i].id === current) continue;
    rmSync(join(snapshotsDir, all[i].id), { recursive: true, force: true });
    removed.push(all[i].id);
  }
  removeStaleStaging(snapshotsDir);
  return removed;
}

/** Remove staging directories other processes left (failed or killed builds), and killed writers' temp files. */
export function removeStaleStaging(snapshotsDir: string): void {
  sweepDeadTempsSync(snapshotsDir);
  for (const name of safeList(snapshotsDir)) {
    if (name.startsWith(TMP_PREFIX) && !name.includes(`-${process.pid}`)) {
      rmSync(join(snapshotsDir, name), { recursive: true, force: true });
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A build id that sorts by time: `<as_of>-<UTC yyyymmddThhmmssZ>-<4 hex>`. */
export function snapshotId(asOf: string, builtAt: Date): string {
  const t = builtAt
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const rnd = Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, '0');
  return `${asOf}-${t}-${rnd}`;
}
