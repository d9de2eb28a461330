/**
 * The audit log of admin actions (who, what, when), as both stores keep it:
 * the embedded store in `audit.log` (JSON lines, append-only, 600), Redis in a list.
 * Entries come back newest first. The file is never rewritten, so nothing in it is
 * lost or changed by the service; an operator may rotate it (move it away) at will.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { type AuditEntry, isObject } from './model.js';
import { STORE_FILE_MODE } from './store-perms.js';

export const AUDIT_FILE = 'audit.log';
/** How many entries the Redis list keeps (LTRIM), newest first. */
export const AUDIT_KEEP = 100_000;
const FIELD_MAX = 2000;
const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

function isField(v: unknown): v is string {
  return typeof v === 'string' && v.length <= FIELD_MAX;
}

function isAuditEntry(v: unknown): v is AuditEntry {
  return (
    isObject(v) &&
    isField(v.at) &&
    !Number.isNaN(Date.parse(v.at)) &&
    isField(v.actor) &&
    v.actor !== '' &&
    isField(v.action) &&
    v.action !== '' &&
    isField(v.target) &&
    isField(v.detail)
  );
}

/** The entry as stored (only its five fields), or an error naming what is wrong. */
export function auditLine(entry: AuditEntry): string {
  const e = {
    at: entry.at,
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    detail: entry.detail,
  };
  if (!isAuditEntry(e))
    throw new Error(`not a valid audit entry (five text fields, \`at\` an instant): ${JSON.stringify(e)}`);
  return JSON.stringify(e);
}

/** A stored line's entry, or null for a line that is not one (torn by a crash, edited). */
export function parseAuditLine(text: string): AuditEntry | null {
  try {
    const v: unknown = JSON.parse(text);
    return isAuditEntry(v) ? v : null;
  } catch {
    return null;
  }
}

export function checkAuditLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new Error(`audit limit must be a whole number, not ${limit}`);
}

/** Append one line: one O_APPEND write, then fsync (an admin action is rare and must not be lost). */
export async function appendAuditFile(path: string, entry: AuditEntry): Promise<void> {
  const buf = Buffer.from(`${auditLine(entry)}\n`, 'utf8');
  const fh = await open(path, 'a', STORE_FILE_MODE);
  try {
    let done = 0;
    while (done < buf.length) done += (await fh.write(buf, done)).bytesWritten;
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** The newest `limit` entries of the file, newest first, read from its end in chunks. */
export async function readAuditFile(path: string, limit: number): Promise<AuditEntry[]> {
  checkAuditLimit(limit);
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: AuditEntry[] = [];
  try {
    let pos = (await fh.stat()).size;
    // Bytes of a line whose start lies before `pos` (with its newline): carried back.
    let carry = Buffer.alloc(0);
    while (out.length < limit && (pos > 0 || carry.length > 0)) {
      const n = Math.min(CHUNK, pos);
      pos -= n;
      const chunk = Buffer.alloc(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await fh.read(chunk, got, n - got, pos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const buf = Buffer.concat([chunk.subarray(0, got), carry]);
      let start = 0;
      if (pos > 0) {
        const nl = buf.indexOf(NEWLINE);
        if (nl < 0) {
          carry = buf;
          continue;
        }
        start = nl + 1;
        carry = buf.subarray(0, start);
      } else carry = Buffer.alloc(0);
      const lines = buf.subarray(start).toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
        const e = lines[i].trim() === '' ? null : parseAuditLine(lines[i]);
        if (e !== null) out.push(e);
      }
    }
  } finally {
    await fh.close();
  }
  return out;
}
