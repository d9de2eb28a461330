/**
 * The burst buckets of an embedded-store server, kept across a restart (C27): each
 * account's GCRA time while it lies in the future, in `burst.json` beside the store.
 * Without it a restarted server granted every account a fresh burst. Written
 * atomically with the monthly counts, once a second, so a crash forgets at most a
 * second of it. (With Redis the buckets live in Redis.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeStoreFile } from './store-log.js';

export const BURST_FILE = 'burst.json';

/**
 * Account id → GCRA time (epoch ms); a missing or unreadable file is no saved burst.
 * A damaged one is said through `warn`: the server still starts (the worst case is one
 * fresh burst per account), but the operator should know why.
 */
export async function readBurst(
  dir: string,
  warn: (message: string) => void = () => {},
): Promise<Map<string, number>> {
  const file = join(dir, BURST_FILE);
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      warn(`${file} is unreadable (${(e as Error).message}): every account starts with a full burst`);
    return new Map();
  }
  const out = new Map<string, number>();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    warn(`${file} is not an object of account times: every account starts with a full burst`);
    return out;
  }
  for (const [id, t] of Object.entries(value))
    if (typeof t === 'number' && Number.isFinite(t)) out.set(id, t);
  return out;
}

export async function writeBurst(dir: string, tats: ReadonlyMap<string, number>): Promise<void> {
  await writeStoreFile(join(dir, BURST_FILE), `${JSON.stringify(Object.fromEntries(tats))}\n`);
}
