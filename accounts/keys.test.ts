import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  generateKey,
  hashKey,
  KEY_LENGTH,
  looksLikeKey,
  looksLikeKeyId,
  newAccountId,
  parseBearer,
} from './keys.js';

describe('generateKey', () => {
  it('makes a prefixed base64url key of 192 random bits with its id, prefix and hash', () => {
    const g = generateKey();
    expect(g.key).toMatch(/^fr_live_[A-Za-z0-9_-]{32}$/);
    expect(g.key.length).toBe(KEY_LENGTH);
    // 32 base64url characters carry 6 bits each: 192 bits, above C25's 160.
    expect(Buffer.from(g.key.slice(8), 'base64url').length).toBe(24);
    expect(g.id).toMatch(/^key_[0-9a-f]{12}$/);
    expect(looksLikeKeyId(g.id)).toBe(true);
    expect(g.prefix).toBe(g.key.slice(0, 12));
    expect(g.hash).toBe(createHash('sha256').update(g.key).digest('hex'));
    expect(g.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey(g.key)).toBe(g.hash);
    expect(looksLikeKey(g.key)).toBe(true);
  });

  it('never repeats and spreads over the whole alphabet', () => {
    const keys = new Set<string>();
    const ids = new Set<string>();
    const chars = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const g = generateKey();
      keys.add(g.key);
      ids.add(g.id);
      for (const c of g.key.slice(8)) chars.add(c);
    }
    expect(keys.size).toBe(2000);
    expect(ids.size).toBe(2000);
    expect(chars.size).toBe(64);
  });

  it('makes account ids', () => {
    expect(newAccountId()).toMatch(/^acct_[0-9a-f]{12}$/);
    expect(newAccountId()).not.toBe(newAccountId());
  });
});

describe('parseBearer', () => {
  const key = generateKey().key;
  it.each([
    [`Bearer ${key}`, key],
    [`bearer ${key}`, key],
    [`BEARER ${key}`, key],
    [`BeArEr ${key}`, key],
    [`Bearer   ${key}`, key],
    [`Bearer\t${key}`, key],
    [`Bearer ${key}  `, key],
    [`  Bearer ${key}`, key],
    ['Bearer x', 'x'],
  ])('accepts %j', (header, token) => {
    expect(parseBearer(header)).toBe(token);
  });

  it.each([
    [`Basic ${key}`],
    ['Basic dXNlcjpwYXNz'],
    [''],
    ['Bearer'],
    ['Bearer '],
    ['Bearer    '],
    [`Bearer${key}`],
    [`Bearer ${key} extra`],
    [`Bearer ${key.slice(0, 10)} ${key.slice(10)}`],
    [key],
    [`Token ${key}`],
    [`Bearer ${key}\n`],
  ])('refuses %j', (header) => {
    expect(parseBearer(header)).toBeNull();
  });

  it('refuses a missing header', () => {
    expect(parseBearer(undefined)).toBeNull();
    expect(parseBearer(null)).toBeNull();
  });
});

describe('looksLikeKey', () => {
  it('refuses anything not shaped like a key', () => {
    const key = generateKey().key;
    expect(looksLikeKey(key.slice(0, -1))).toBe(false);
    expect(looksLikeKey(`${key}A`)).toBe(false);
    expect(looksLikeKey(`fr_test_${key.slice(8)}`)).toBe(false);
    expect(looksLikeKey(`${key.slice(0, -1)}=`)).toBe(false);
    expect(looksLikeKey(`${key.slice(0, -1)}+`)).toBe(false);
    expect(looksLikeKey('')).toBe(false);
    expect(looksLikeKey('x'.repeat(100_000))).toBe(false);
  });
});
