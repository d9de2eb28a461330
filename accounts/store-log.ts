/**
 * The access log (`access.log`) and its marker (`store.json`): how the lines are
 * appended, read from where a reader left off, and replaced whole by compaction.
 * FileAccessStore (store-file.ts) decides when each is done and holds the lock.
 *
 * Why an append-only log rather than SQLite or LMDB: it needs no native module and
 * no install script (the lockfile stays free of build steps); an admin change costs
 * one write() and one fsync, and is durable when `change()` resolves; it is
 * crash-safe by construction, because a crash can only leave a torn last line,
 * which readers skip and the next writer cuts off; compaction writes the whole
 * state to a new file and renames it over the old one, so a reader sees the old log
 * or the new one, never a mix. Admin changes are rare (hundreds, not millions), so
 * replaying the log is instant; the hot path never reads the store at all.
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, open, readFile } from 'node:fs/promises';
import { now } from '../core/clock.js';
import { errCode, writeAtomic } from '../core/files/atomic.js';
import { applyChange } from './changes.js';
import { type AccessState, isObject } from './model.js';
import { STORE_FILE_MODE } from './store-perms.js';
import { LOG_FORMAT, parseLogLine, type SnapshotLine } from './store-records.js';

export const LOG_FILE = 'access.log';
export const MARKER_FILE = 'store.json';
const NEWLINE = 0x0a;
const HEAD_BYTES = 256;

/** Where this process has read the log up to, so a refresh reads only what was appended. */
export interface Follower {
  readonly dev: number;
  readonly ino: number;
  /** The first bytes of the log's first line: a compacted log starts with different ones. */
  readonly head: Buffer | null;
  readonly offset: number;
  readonly lines: number;
  readonly state: AccessState;
}

/** A store file, written as the store writes every file: atomically, durably, private. */
export async function writeStoreFile(path: string, data: string | Uint8Array): Promise<void> {
  await writeAtomic(path, data, { mode: STORE_FILE_MODE });
}

export async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(Math.max(0, length));
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await fh.read(buf, done, buf.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

/** Whether the open log still starts with `head` (the same generation the follower read). */
export async function startsWith(fh: FileHandle, head: Buffer | null): Promise<boolean> {
  if (head === null) return true;
  const got = await readAt(fh, 0, head.length);
  return got.equals(head);
}

/** Apply the complete lines of `buf` (read from `f.offset` of `logPath`) to the follower's state. */
export function consumeLog(logPath: string, f: Follower, buf: Buffer): Follower {
  let { head, offset, lines, state } = f;
  // Bytes after the last newline are a write in progress or a torn line: not ours yet.
  const end = buf.lastIndexOf(NEWLINE) + 1;
  let start = 0;
  while (start < end) {
    const nl = buf.indexOf(NEWLINE, start);
    const raw = buf.subarray(start, nl + 1);
    const text = raw.toString('utf8').trim();
    const lineNo = lines + 1;
    if (text !== '') {
      const rec = parseLogLine(text);
      if (rec === null) {
        // A garbled last line is what a crash mid-write (on some file systems) leaves;
        // never the first, which is renamed into place whole.
        if (nl + 1 === end && lineNo > 1) break;
        throw new Error(`${logPath}:${lineNo}: not a valid access record: ${clip(text)}`);
      }
      if (lineNo === 1 && rec.op !== 'snapshot')
        throw new Error(`${logPath}:1: the log does not start with its snapshot line: it was cut`);
      if (rec.op === 'snapshot') {
        if (rec.format !== LOG_FORMAT)
          throw new Error(`${logPath}:${lineNo}: unsupported log format ${rec.format}`);
        state = rec.state;
      } else {
        state = applyChange(state, rec);
      }
    }
    // The snapshot's random id sits in its first bytes; no need to compare a large state.
    if (offset === 0 && start === 0) head = Buffer.from(raw.subarray(0, HEAD_BYTES));
    lines++;
    offset += raw.length;
    start = nl + 1;
  }
  return { dev: f.dev, ino: f.ino, head, offset, lines, state };
}

/** Append one whole line: one write() with O_APPEND, then fsync, so it is durable when this resolves. */
export async function appendLine(logPath: string, line: string): Promise<void> {
  const fh = await open(logPath, 'a', STORE_FILE_MODE);
  try {
    const buf = Buffer.from(line, 'utf8');
    let done = 0;
    while (done < buf.length) done += (await fh.write(buf, done)).bytesWritten;
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Replace the log with one snapshot line of `state`, atomically. */
export async function writeSnapshot(logPath: string, state: AccessState): Promise<void> {
  const line: SnapshotLine = {
    op: 'snapshot',
    format: LOG_FORMAT,
    id: randomBytes(8).toString('hex'),
    at: new Date(now()).toISOString(),
    state: {
      version: state.version,
      accounts: state.accounts,
      keys: state.keys,
      people: state.people,
      requests: state.requests,
    },
  };
  await writeStoreFile(logPath, `${JSON.stringify(line)}\n`);
}

/**
 * Cut what follows byte `goodEnd` of the log (a torn write, or a complete line that is
 * not a valid record), keeping the bytes beside the log; returns where they went and
 * how many there were, for the caller to say: a cut is never silent.
 */
export async function cutLog(
  logPath: string,
  goodEnd: number,
  size: number,
): Promise<{ aside: string; bytes: number }> {
  const fh = await open(logPath, 'r+');
  try {
    const cut = await readAt(fh, goodEnd, size - goodEnd);
    const aside = `${logPath}.cut-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
    await writeStoreFile(aside, cut);
    await fh.truncate(goodEnd);
    return { aside, bytes: cut.length };
  } finally {
    await fh.close();
  }
}

/** Record that the log holds changes up to `version` (see readMarker). */
export async function writeMarker(markerPath: string, version: number): Promise<void> {
  await writeStoreFile(markerPath, `${JSON.stringify({ format: LOG_FORMAT, version })}\n`);
}

/** The version of the last change written (0 without a marker). */
export async function readMarker(markerPath: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(markerPath, 'utf8');
  } catch (e) {
    if (errCode(e) === 'ENOENT') return 0;
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${markerPath}: not valid JSON`);
  }
  if (!isObject(v) || !Number.isSafeInteger(v.version) || (v.version as number) < 0)
    throw new Error(`${markerPath}: expected {"format": 1, "version": <whole number>}`);
  return v.version as number;
}

function clip(s: string): string {
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
}
