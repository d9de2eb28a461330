/**
 * The shapes of the access log's lines. The log is a file an operator can edit, so
 * every line read is checked before it is applied: a line that is not a snapshot or a
 * change is refused (or, as the last line, taken for a torn write).
 */
import type { AccessChange, AccessState } from './model.js';
import { isAccount, isChange, isKeyRecord, isObject, isPerson, isPlanRequest } from './model.js';

/** The version of the log's line format. */
export const LOG_FORMAT = 1;

/** The first line of every log: the whole state, as compaction writes it. */
export interface SnapshotLine {
  readonly op: 'snapshot';
  readonly format: number;
  /** Random: tells two generations of the log apart even if the file system reuses an inode. */
  readonly id: string;
  readonly at: string;
  readonly state: AccessState;
}

export type LogLine = AccessChange | SnapshotLine;

function isSnapshot(v: unknown): v is SnapshotLine {
  if (!isObject(v) || v.op !== 'snapshot' || typeof v.format !== 'number' || !isObject(v.state)) return false;
  const s = v.state;
  return (
    Number.isSafeInteger(s.version) &&
    Array.isArray(s.accounts) &&
    s.accounts.every(isAccount) &&
    Array.isArray(s.keys) &&
    s.keys.every(isKeyRecord) &&
    // Logs written before the dashboard have neither list: read as empty.
    (s.people === undefined || (Array.isArray(s.people) && s.people.every(isPerson))) &&
    (s.requests === undefined || (Array.isArray(s.requests) && s.requests.every(isPlanRequest)))
  );
}

/** A line of the log, or null when it is not JSON or not a record of either shape. */
export function parseLogLine(text: string): LogLine | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (isSnapshot(v))
    return { ...v, state: { ...v.state, people: v.state.people ?? [], requests: v.state.requests ?? [] } };
  if (isChange(v)) return v;
  return null;
}
