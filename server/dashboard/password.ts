/**
 * People's passwords: scrypt from node:crypto, no dependency, no install
 * script, stored as one self-describing string `scrypt$N$r$p$saltB64$hashB64`, so that
 * the cost can be raised later and old hashes still verify (needsRehash says when to
 * store a new one, at the next successful sign-in).
 *
 * Off the event loop, always: the server hashes on a bounded pool of threads of its
 * own (hash-pool.ts), never on libuv's, which its file I/O needs; a command of the
 * CLI, which hashes once, uses node:crypto's asynchronous scrypt (`threadPoolHasher`).
 * Never `scryptSync` on an event loop.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { HashBusy, type Hasher, type HashJob } from './hash-pool.js';

/**
 * 2^15 with r = 8 costs 32 MiB and some 130 ms on a loaded 2-core machine; sign-ins
 * are throttled per email and per client, so a burst of them cannot exhaust memory.
 */
export const SCRYPT_N = 2 ** 15;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const SALT_BYTES = 16;
const KEY_BYTES = 32;

/** The policy's bounds, for forms (`minlength`, `maxlength`) and messages. */
const MIN_PASSWORD_CHARS = 10;
export const MAX_PASSWORD_BYTES = 1024;

/**
 * What a stored string may ask for: a store that was tampered with must not make a
 * sign-in allocate gigabytes or spin for minutes. 128·N·r·p bytes bounds both memory
 * and work; 256 MiB leaves room for raising today's cost eightfold.
 */
const MAX_COST_BYTES = 256 * 1024 * 1024;

interface Encoded {
  n: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/**
 * scrypt needs 128·N·r bytes; Node refuses above `maxmem` (32 MiB by default, which
 * 2^15 · 8 · 128 reaches exactly), so the limit is set from the parameters, with room.
 */
function maxmemFor(n: number, r: number, p: number): number {
  return 128 * n * r * 2 + 128 * r * p + 1024 * 1024;
}

/** node:crypto's asynchronous scrypt, on libuv's pool: for a command that hashes once, not for the server. */
export const threadPoolHasher: Hasher = {
  refuseWhenFull: () => {},
  scrypt: (job: Omit<HashJob, 'id'>) =>
    new Promise<Buffer>((resolve, reject) =>
      scrypt(
        job.password,
        job.salt,
        job.keyBytes,
        { N: job.n, r: job.r, p: job.p, maxmem: job.maxmem },
        (err, key) => (err ? reject(err) : resolve(key)),
      ),
    ),
};

function derive(
  hasher: Hasher,
  password: string,
  salt: Buffer,
  keyBytes: number,
  n: number,
  r: number,
  p: number,
): Promise<Buffer> {
  return hasher.scrypt({ password, salt, keyBytes, n, r, p, maxmem: maxmemFor(n, r, p) });
}

/**
 * One form of each password: the same characters typed on another keyboard or system
 * (composed or decomposed accents, full-width digits) give the same hash.
 */
function normalize(password: string): string {
  return password.normalize('NFKC');
}

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DECIMAL = /^[1-9][0-9]{0,9}$/;

function decode(encoded: string): Encoded | null {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [, nText, rText, pText, saltText, hashText] = parts;
  if (!DECIMAL.test(nText) || !DECIMAL.test(rText) || !DECIMAL.test(pText)) return null;
  const n = Number(nText);
  const r = Number(rText);
  const p = Number(pText);
  // N must be a power of two above 1 (scrypt's own rule).
  if (n < 2 || (n & (n - 1)) !== 0 || 128 * n * r * p > MAX_COST_BYTES) return null;
  if (!B64.test(saltText) || !B64.test(hashText)) return null;
  const salt = Buffer.from(saltText, 'base64');
  const hash = Buffer.from(hashText, 'base64');
  if (salt.length < 8 || hash.length < 16 || hash.length > 64) return null;
  return { n, r, p, salt, hash };
}

/** A new salted hash of `password`, in the stored form. */
export async function hashPassword(password: string, hasher: Hasher): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(hasher, normalize(password), salt, KEY_BYTES, SCRYPT_N, SCRYPT_R, SCRYPT_P);
  return encode(salt, hash);
}

function encode(salt: Buffer, hash: Buffer): string {
  return `scrypt$${SCRYPT_N}$${SCRYPT_R}$${SCRYPT_P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/**
 * Whether `password` is the one `encoded` was made from. False, never a throw, for a
 * malformed or unknown encoding (a store damaged by hand must not make sign-in fail
 * with a 500) and for a password no policy would have accepted (over
 * MAX_PASSWORD_BYTES: refused before scrypt reads a megabyte of it). A hasher at its
 * bound rejects with HashBusy: that is no answer about the password, so it is thrown.
 */
export async function verifyPassword(password: string, encoded: string, hasher: Hasher): Promise<boolean> {
  const e = decode(encoded);
  if (e === null) return false;
  const pw = normalize(password);
  if (Buffer.byteLength(pw, 'utf8') > MAX_PASSWORD_BYTES) return false;
  let key: Buffer;
  try {
    key = await derive(hasher, pw, e.salt, e.hash.length, e.n, e.r, e.p);
  } catch (err) {
    if (err instanceof HashBusy) throw err;
    return false;
  }
  return timingSafeEqual(key, e.hash);
}

/**
 * Whether a stored hash was made with other parameters than today's (or cannot be
 * read): after a successful sign-in, hash the password again and store that.
 */
export function needsRehash(encoded: string): boolean {
  const e = decode(encoded);
  return (
    e === null ||
    e.n !== SCRYPT_N ||
    e.r !== SCRYPT_R ||
    e.p !== SCRYPT_P ||
    e.salt.length !== SALT_BYTES ||
    e.hash.length !== KEY_BYTES
  );
}

/**
 * Why `password` cannot be a new password for `email`, as a sentence to show the
 * person, or null when it can. Characters are counted after normalization, as code
 * points (an emoji is one), bytes in UTF-8.
 */
export function passwordProblem(password: string, email: string): string | null {
  const pw = normalize(password);
  if (Buffer.byteLength(pw, 'utf8') > MAX_PASSWORD_BYTES)
    return `The password is too long: at most ${MAX_PASSWORD_BYTES} bytes.`;
  if ([...pw].length < MIN_PASSWORD_CHARS)
    return `The password is too short: use at least ${MIN_PASSWORD_CHARS} characters.`;
  if (pw.trim().toLowerCase() === email.trim().toLowerCase())
    return 'The password cannot be your email address.';
  return null;
}

/**
 * A stored hash of today's parameters that no password has: a random salt and random
 * bytes (no password could be found whose scrypt gives them). A sign-in for an email
 * with no account verifies the password against it, which costs exactly one hash, as
 * for a real account, so its timing does not tell whether the email is registered.
 */
export const DUMMY_HASH: string = encode(randomBytes(SALT_BYTES), randomBytes(KEY_BYTES));

/** The time of a verification, for a sign-in whose email has no account; always false. */
export async function verifyUnknownAccount(password: string, hasher: Hasher): Promise<false> {
  await verifyPassword(password, DUMMY_HASH, hasher);
  return false;
}
