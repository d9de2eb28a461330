import { scryptSync } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { type Hasher, HashPool } from './hash-pool.js';
import {
  DUMMY_HASH,
  hashPassword,
  MAX_PASSWORD_BYTES,
  needsRehash,
  passwordProblem,
  SCRYPT_N,
  verifyPassword,
  verifyUnknownAccount,
} from './password.js';

const PW = 'correct horse battery staple';
/** The server's kind of hasher: threads of its own (two of these tests hash two at once). */
const hasher = new HashPool({ threads: 2, queue: 16 });
afterAll(() => hasher.close());

/**
 * The longest the event loop went without running a setImmediate while `work` ran,
 * and how many times it ran: a loop that is free turns every few microseconds.
 */
async function loopWhile(
  work: () => Promise<unknown> | unknown,
): Promise<{ maxGapMs: number; turns: number; workMs: number }> {
  let last = performance.now();
  let maxGapMs = 0;
  let turns = 0;
  let running = true;
  const tick = () => {
    const t = performance.now();
    maxGapMs = Math.max(maxGapMs, t - last);
    last = t;
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  // Let the first turn happen before the work starts, so the gap is the work's.
  await new Promise((r) => setImmediate(r));
  last = performance.now();
  const start = last;
  await work();
  const workMs = performance.now() - start;
  running = false;
  await new Promise((r) => setImmediate(r));
  return { maxGapMs, turns, workMs };
}

describe('password hashing', () => {
  it('a hash is `scrypt$N$r$p$salt$hash` with a 16-byte salt and a 32-byte key, and verifies', async () => {
    const encoded = await hashPassword(PW, hasher);
    const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(encoded);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(SCRYPT_N);
    expect([2 ** 15, 2 ** 16]).toContain(SCRYPT_N);
    expect(m![2]).toBe('8');
    expect(m![3]).toBe('1');
    expect(Buffer.from(m![4], 'base64')).toHaveLength(16);
    expect(Buffer.from(m![5], 'base64')).toHaveLength(32);
    expect(await verifyPassword(PW, encoded, hasher)).toBe(true);
    expect(await verifyPassword(`${PW} `, encoded, hasher)).toBe(false);
    expect(await verifyPassword('', encoded, hasher)).toBe(false);
  });

  it('the same password hashes differently each time (a fresh salt), and each verifies', async () => {
    const [a, b] = await Promise.all([hashPassword(PW, hasher), hashPassword(PW, hasher)]);
    expect(a).not.toBe(b);
    expect(await verifyPassword(PW, a, hasher)).toBe(true);
    expect(await verifyPassword(PW, b, hasher)).toBe(true);
  });

  it('the hash is standard scrypt: the stored key is scrypt(password, salt) with the stored parameters', async () => {
    const encoded = await hashPassword(PW, hasher);
    const [, n, r, p, salt, hash] = encoded.split('$');
    const key = scryptSync(PW, Buffer.from(salt, 'base64'), 32, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: 256 * Number(n) * Number(r),
    });
    expect(key.toString('base64')).toBe(hash);
  });

  it('a password typed in another Unicode form (decomposed accent) is the same password', async () => {
    const composed = 'mot de passe \u00e9t\u00e9 2026';
    const decomposed = 'mot de passe e\u0301te\u0301 2026';
    expect(composed).not.toBe(decomposed);
    expect(await verifyPassword(decomposed, await hashPassword(composed, hasher), hasher)).toBe(true);
  });

  it('a malformed or foreign encoding verifies false, never throws', async () => {
    const good = await hashPassword(PW, hasher);
    const [, n, r, p, salt, hash] = good.split('$');
    const bad = [
      '',
      'scrypt',
      'bcrypt$2b$10$abcdefghijklmnopqrstuv',
      `argon2id$${n}$${r}$${p}$${salt}$${hash}`,
      `scrypt$${n}$${r}$${p}$${salt}`,
      `scrypt$${n}$${r}$${p}$${salt}$${hash}$extra`,
      `scrypt$1000$${r}$${p}$${salt}$${hash}`, // N not a power of two
      `scrypt$0$${r}$${p}$${salt}$${hash}`,
      `scrypt$-32768$${r}$${p}$${salt}$${hash}`,
      `scrypt$${n}$x$${p}$${salt}$${hash}`,
      `scrypt$${n}$${r}$${p}$not base64!$${hash}`,
      `scrypt$${n}$${r}$${p}$${salt}$`,
      `scrypt$${n}$${r}$${p}$${salt}$AAAA`, // a 3-byte key
      // A cost a tampered store could ask for: 2^24 · 8 · 128 B = 16 GiB.
      `scrypt$${2 ** 24}$${r}$${p}$${salt}$${hash}`,
      `scrypt$${n}$${r}$99999$${salt}$${hash}`,
    ];
    for (const encoded of bad) {
      await expect(verifyPassword(PW, encoded, hasher), encoded).resolves.toBe(false);
      expect(needsRehash(encoded), encoded).toBe(true);
    }
  });

  it('a password over the byte limit is never verified (no megabyte goes through scrypt)', async () => {
    const long = 'a'.repeat(MAX_PASSWORD_BYTES + 1);
    // Hashing it is possible (the policy refuses it first), verifying it is not.
    const encoded = await hashPassword(long, hasher);
    expect(await verifyPassword(long, encoded, hasher)).toBe(false);
    const atLimit = 'a'.repeat(MAX_PASSWORD_BYTES);
    expect(await verifyPassword(atLimit, await hashPassword(atLimit, hasher), hasher)).toBe(true);
  });

  it('needsRehash: false for a hash made today, true for one made with other parameters', async () => {
    const today = await hashPassword(PW, hasher);
    expect(needsRehash(today)).toBe(false);
    const [, , r, p, salt] = today.split('$');
    // An older, cheaper hash (N = 2^14), as a store written before a cost increase holds.
    const key = scryptSync(PW, Buffer.from(salt, 'base64'), 32, { N: 2 ** 14, r: 8, p: 1 });
    const older = `scrypt$${2 ** 14}$${r}$${p}$${salt}$${key.toString('base64')}`;
    expect(await verifyPassword(PW, older, hasher)).toBe(true);
    expect(needsRehash(older)).toBe(true);
  });

  it('hashing runs off the event loop: while it runs, a 1 ms timer fires within a few ms and the loop keeps turning', async () => {
    await hasher.niced; // the threads up, not starting beside the measure
    let timerMs = Number.NaN;
    let hashDone = false;
    let timerBeforeHash = false;
    const started = performance.now();
    const offLoop = await loopWhile(() => {
      setTimeout(() => {
        timerMs = performance.now() - started;
        timerBeforeHash = !hashDone;
      }, 1);
      return hashPassword(PW, hasher).then(() => {
        hashDone = true;
      });
    });
    // The control: the same work on the loop (scryptSync) stops it for the whole hash,
    // so this measure would catch a hash that ran on the loop.
    const onLoop = await loopWhile(() =>
      scryptSync(PW, Buffer.alloc(16), 32, { N: SCRYPT_N, r: 8, p: 1, maxmem: 256 * SCRYPT_N * 8 }),
    );
    expect(onLoop.turns).toBeLessThan(5);
    expect(onLoop.maxGapMs).toBeGreaterThan(onLoop.workMs * 0.9);
    // Off the loop: the timer fired long before the hash ended, and the loop turned
    // thousands of times, never stopped for more than a fraction of the hash (a loaded
    // machine preempts the thread now and then for some ms, hash or no hash).
    expect(offLoop.workMs).toBeGreaterThan(30);
    expect(timerBeforeHash).toBe(true);
    expect(timerMs).toBeLessThan(Math.min(25, offLoop.workMs / 3));
    expect(offLoop.turns).toBeGreaterThan(1000);
    expect(offLoop.maxGapMs).toBeLessThan(offLoop.workMs / 2);
  });

  it('a verification for an unknown email does the work of one for a real account (DUMMY_HASH)', async () => {
    const real = await hashPassword(PW, hasher);
    expect(needsRehash(DUMMY_HASH)).toBe(false);
    expect(await verifyPassword(PW, DUMMY_HASH, hasher)).toBe(false);
    // The same derivation, parameter for parameter: the same work whatever the machine's
    // load (test/dashboard-timing.test.ts measures the forms end to end with a rank test).
    const jobs: Array<Omit<Parameters<Hasher['scrypt']>[0], 'password' | 'salt'> & { saltBytes: number }> =
      [];
    const recording: Hasher = {
      scrypt: (job) => {
        const { password: _pw, salt, ...cost } = job;
        jobs.push({ ...cost, saltBytes: salt.length });
        return hasher.scrypt(job);
      },
      refuseWhenFull: () => hasher.refuseWhenFull(),
    };
    await verifyPassword('wrong password 123', real, recording);
    expect(await verifyUnknownAccount('wrong password 123', recording)).toBe(false);
    expect(jobs).toHaveLength(2);
    expect(jobs[1]).toEqual(jobs[0]);
  });
});

describe('password policy', () => {
  const email = 'ada@example.com';

  it('a password of 10 characters or more, not the email, is accepted', () => {
    expect(passwordProblem('abcdefghij', email)).toBeNull();
    expect(passwordProblem(PW, email)).toBeNull();
    // Ten code points, whatever their size in bytes.
    expect(passwordProblem('😀😀😀😀😀😀😀😀😀😀', email)).toBeNull();
  });

  it('a short password is refused with a sentence that says the minimum', () => {
    expect(passwordProblem('abcdefghi', email)).toBe(
      'The password is too short: use at least 10 characters.',
    );
    expect(passwordProblem('', email)).toMatch(/too short/);
    expect(passwordProblem('😀😀😀😀😀😀😀😀😀', email)).toMatch(/too short/);
  });

  it('a password over 1024 bytes is refused (a multi-byte one counts its bytes)', () => {
    expect(passwordProblem('a'.repeat(1024), email)).toBeNull();
    expect(passwordProblem('a'.repeat(1025), email)).toBe('The password is too long: at most 1024 bytes.');
    expect(passwordProblem('é'.repeat(513), email)).toMatch(/too long/);
  });

  it('the email address as password is refused, in any case and with spaces around it', () => {
    expect(passwordProblem(email, email)).toBe('The password cannot be your email address.');
    expect(passwordProblem(' ADA@Example.com ', email)).toMatch(/email address/);
    expect(passwordProblem('ada@example.org', email)).toBeNull();
  });
});
