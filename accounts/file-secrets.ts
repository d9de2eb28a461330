/**
 * The embedded store's expiring secrets and attempt counters: sessions,
 * verification and reset tokens, sign-in throttling. They live beside the access log,
 * never in it and never under its lock, so signing in can neither slow nor block an
 * admin change (`change()`), and a busy sign-in page never grows the log.
 *
 *   secrets/<kind>-<id>     {"value", "expires_at"}; its mtime is set to the expiry, so a
 *                           sweep needs a stat, not a read, to tell what is stale
 *   secrets/…<pid>.tmp      a put before its rename (core/files/atomic.ts)
 *   secrets/.taken-…        a take between rename and unlink
 *   throttle/<h>-<window ms>-<end ms>  one line per attempt (its time and a nonce, O_APPEND),
 *                           in the period of the window's length ending at <end ms>; <h>
 *                           is a hash of the key (an email, a client)
 *
 * Both directories are 700 and every file 600 (store-perms.ts checks the directories
 * at open; a 700 directory keeps what is in it from everyone else).
 *
 * Why files rather than the log: a rename is atomic on one file system, so "of two
 * takers exactly one gets the token" holds across threads and processes without a
 * lock; an O_APPEND write of one short line is atomic too, so every attempt counts. Neither
 * is fsynced: losing a session or a counter in a power cut costs a sign-in, not data.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  stat,
  unlink,
  utimes,
} from 'node:fs/promises';
import { join } from 'node:path';
import { now } from '../core/clock.js';
import { errCode, isDeadTemp, writeAtomic } from '../core/files/atomic.js';
import { isObject, SECRET_KINDS, type SecretKind } from './model.js';
import { STORE_DIR_MODE, STORE_FILE_MODE } from './store-perms.js';
import { checkThrottle, slidingWait } from './throttle.js';

export const SECRETS_DIR = 'secrets';
const THROTTLE_DIR = 'throttle';
/** An id is a hash of the secret (hex or base64url): also a safe file name. */
const SECRET_ID = /^[A-Za-z0-9_-]{16,128}$/;
/** How often, at most, one process looks for expired files. */
const SWEEP_EVERY_MS = 60_000;
/**
 * An expired secret stays this long before a sweep removes it: a sweep that read an old
 * expiry must not remove a secret put again under the same id a moment later.
 */
const SWEEP_GRACE_MS = 10 * 60_000;
/** `<key hash>-<window ms>-<period end ms>`; a fixed window's file of an older version has no window. */
const THROTTLE_FILE = /^[0-9a-f]{40}(?:-(\d+))?-(\d+)$/;

function checkKind(kind: SecretKind): void {
  if (!(SECRET_KINDS as readonly string[]).includes(kind))
    throw new Error(`secret kind must be one of ${SECRET_KINDS.join(', ')}, not ${JSON.stringify(kind)}`);
}

function checkId(id: string): void {
  if (!SECRET_ID.test(id))
    throw new Error('a secret id must be 16 to 128 letters, digits, "_" or "-" (a hash of the secret)');
}

/** Milliseconds in (0, 1 year], whole: a TTL or window that is not is a caller's bug. */
function checkMs(what: string, ms: number): void {
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > 366 * 86_400_000)
    throw new Error(`${what} must be a whole number of milliseconds, 1 to a year, not ${ms}`);
}

/** The value of a secret file's text, or null when it is not one or has expired at `at`. */
function liveValue(text: string, at: number): string | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // Empty or torn by a crash (files are not fsynced): as good as absent.
    return null;
  }
  if (!isObject(v) || typeof v.value !== 'string' || typeof v.expires_at !== 'string') return null;
  const expires = Date.parse(v.expires_at);
  return Number.isFinite(expires) && expires > at ? v.value : null;
}

interface Attempt {
  readonly t: number;
  readonly nonce: string;
}

/** The attempts in a throttle file, in its order; none when it does not exist. A line torn by a crash is skipped. */
async function readAttempts(path: string): Promise<Attempt[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (errCode(e) === 'ENOENT') return [];
    throw e;
  }
  return parseAttempts(text);
}

/** The attempts in an open throttle file, from its start. */
async function readHandle(fh: FileHandle): Promise<Attempt[]> {
  const { size } = await fh.stat();
  const buf = Buffer.alloc(size);
  const { bytesRead } = await fh.read(buf, 0, size, 0);
  return parseAttempts(buf.toString('utf8', 0, bytesRead));
}

function parseAttempts(text: string): Attempt[] {
  const out: Attempt[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d{1,16}) ([0-9a-f]{12})$/.exec(line);
    if (m !== null) out.push({ t: Number(m[1]), nonce: m[2] });
  }
  return out;
}

export class FileSecrets {
  readonly #secrets: string;
  readonly #throttle: string;
  #made = new Set<string>();
  #lastSweep = 0;
  #sweeping: Promise<void> = Promise.resolve();

  constructor(storeDir: string) {
    this.#secrets = join(storeDir, SECRETS_DIR);
    this.#throttle = join(storeDir, THROTTLE_DIR);
  }

  async put(kind: SecretKind, id: string, value: string, ttlMs: number): Promise<void> {
    checkKind(kind);
    checkId(id);
    checkMs('a secret TTL', ttlMs);
    const expires = now() + ttlMs;
    const body = JSON.stringify({ value, expires_at: new Date(expires).toISOString() });
    // Readers see the old secret or the new one, never a part. Not fsynced (see above).
    const put = () =>
      writeAtomic(this.#path(kind, id), body, {
        mode: STORE_FILE_MODE,
        durable: false,
        beforeRename: (temp) => utimes(temp, expires / 1000, expires / 1000),
      });
    await this.#inDir(this.#secrets, put);
    this.#maybeSweep();
  }

  async get(kind: SecretKind, id: string): Promise<string | null> {
    checkKind(kind);
    checkId(id);
    let text: string;
    try {
      text = await readFile(this.#path(kind, id), 'utf8');
    } catch (e) {
      if (errCode(e) === 'ENOENT') return null;
      throw e;
    }
    return liveValue(text, now());
  }

  async take(kind: SecretKind, id: string): Promise<string | null> {
    checkKind(kind);
    checkId(id);
    // The rename is the claim: of several takers (threads, processes) one wins, the
    // others find no file. Nothing else removes a file another could still take.
    const claimed = join(this.#secrets, `.taken-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await rename(this.#path(kind, id), claimed);
    } catch (e) {
      if (errCode(e) === 'ENOENT') return null;
      throw e;
    }
    try {
      return liveValue(await readFile(claimed, 'utf8'), now());
    } finally {
      await unlink(claimed).catch(() => {});
    }
  }

  async delete(kind: SecretKind, id: string): Promise<void> {
    checkKind(kind);
    checkId(id);
    await unlink(this.#path(kind, id)).catch((e: unknown) => {
      if (errCode(e) !== 'ENOENT') throw e;
    });
  }

  /**
   * One attempt against a sliding window (throttle.ts), without a lock: an attempt is a
   * line (its time and a nonce) appended to the key's file of the current period of
   * `windowMs` (O_APPEND: atomic, every line kept, in one order for every reader), and
   * the decision reads the files of this period and the one before. Read first: a key
   * already full refuses without growing its file. Then appended, and admitted when at
   * most `limit` lines in the window come before it, its own included: of attempts
   * racing for the last places the first appended win; the others' lines stay and count,
   * so a race can refuse more than needed, never admit more than the limit.
   */
  async throttle(key: string, limit: number, windowMs: number, nowMs: number): Promise<number> {
    checkThrottle(limit, windowMs, nowMs);
    const h = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 40);
    const period = Math.floor(nowMs / windowMs);
    const file = (p: number) => join(this.#throttle, `${h}-${windowMs}-${(p + 1) * windowMs}`);
    // Nobody appends to the period before any more: it is read once.
    const earlier = await readAttempts(file(period - 1));
    const wait = (current: Attempt[]) =>
      slidingWait(
        [...earlier, ...current].map((a) => a.t),
        limit,
        windowMs,
        nowMs,
      );
    // One handle reads, appends (O_APPEND: at the end, whatever was read) and reads again.
    const fh = await this.#inDir(this.#throttle, () => open(file(period), 'a+', STORE_FILE_MODE));
    try {
      const before = wait(await readHandle(fh));
      if (before > 0) return before;
      const nonce = randomBytes(6).toString('hex');
      await fh.write(`${nowMs} ${nonce}\n`);
      const current = await readHandle(fh);
      const mine = current.findIndex((a) => a.nonce === nonce);
      const ahead = [...earlier, ...(mine < 0 ? current : current.slice(0, mine + 1))].filter(
        (a) => a.t > nowMs - windowMs,
      );
      return ahead.length <= limit ? 0 : wait(current);
    } finally {
      await fh.close();
      this.#maybeSweep();
    }
  }

  /** Wait for a sweep under way (closing the store). */
  async settle(): Promise<void> {
    await this.#sweeping;
  }

  #path(kind: SecretKind, id: string): string {
    return join(this.#secrets, `${kind}-${id}`);
  }

  /** Create a file in `dir` by `make`, making the directory first (again, if an operator removed it meanwhile). */
  async #inDir<T>(dir: string, make: () => Promise<T>): Promise<T> {
    if (!this.#made.has(dir)) {
      await mkdir(dir, { recursive: true, mode: STORE_DIR_MODE });
      this.#made.add(dir);
    }
    try {
      return await make();
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
      // Removed while we ran (the operator cleared stale sessions): make it again, once.
      await mkdir(dir, { recursive: true, mode: STORE_DIR_MODE });
      return await make();
    }
  }

  /** Start a sweep when none ran for a minute; never awaited by the caller. */
  #maybeSweep(): void {
    const t = Date.now();
    if (t - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = t;
    this.#sweeping = this.#sweeping.then(() => this.sweep()).catch(() => {});
  }

  /** Remove expired secrets and counters of past windows, and what killed writers left. */
  async sweep(): Promise<void> {
    const at = now();
    for (const name of await readdir(this.#secrets).catch(() => [] as string[])) {
      const path = join(this.#secrets, name);
      if (name.endsWith('.tmp')) {
        // A put's temp file (core/files/atomic.ts): its writer's pid tells whether it is in flight.
        if (isDeadTemp(name)) await unlink(path).catch(() => {});
        continue;
      }
      const st = await stat(path).catch(() => null);
      if (st === null) continue;
      // A take in flight (or an older version's put) takes milliseconds; one this old was killed half-way.
      const orphan =
        (name.startsWith('.tmp-') || name.startsWith('.taken-')) && st.ctimeMs < Date.now() - 60_000;
      if (orphan || (!name.startsWith('.') && st.mtimeMs + SWEEP_GRACE_MS < at))
        await unlink(path).catch(() => {});
    }
    for (const name of await readdir(this.#throttle).catch(() => [] as string[])) {
      const m = THROTTLE_FILE.exec(name);
      // A period's file counts until a window after the period ended (the next one reads it).
      const until = m === null ? null : Number(m[2]) + Number(m[1] ?? 0);
      if (until !== null && until < at) await unlink(join(this.#throttle, name)).catch(() => {});
    }
  }
}
