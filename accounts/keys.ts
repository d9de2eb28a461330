/**
 * API keys (C25): random, prefixed, shown once, stored only as a SHA-256 hash.
 */
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'fr_live_';
/** 24 random bytes = 192 bits, above the 160 bits C25 asks for; 32 base64url characters. */
const KEY_RANDOM_BYTES = 24;
export const KEY_BODY_LENGTH = 32;
export const KEY_LENGTH = KEY_PREFIX.length + KEY_BODY_LENGTH;
/** Enough to recognise a key in a list (4 random characters), far too little to use it. */
const DISPLAY_PREFIX_LENGTH = 12;

const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{${KEY_BODY_LENGTH}}$`);

export interface NewKey {
  /** The secret: printed once, never stored. */
  readonly key: string;
  readonly id: string;
  readonly prefix: string;
  readonly hash: string;
}

export function generateKey(): NewKey {
  const key = KEY_PREFIX + randomBytes(KEY_RANDOM_BYTES).toString('base64url');
  return { key, id: newKeyId(), prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: hashKey(key) };
}

/** Lower-case hex SHA-256: a fast hash is enough because keys carry 192 random bits (no guessing). */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function newKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}

export function newAccountId(): string {
  return `acct_${randomBytes(6).toString('hex')}`;
}

/**
 * The token of an `Authorization: Bearer <token>` value, or null. The scheme is
 * case-insensitive (RFC 7235); surrounding whitespace and several spaces or tabs
 * after the scheme are tolerated, whitespace inside the token is not.
 */
export function parseBearer(header: string | undefined | null): string | null {
  if (typeof header !== 'string') return null;
  const m = /^[ \t]*bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  return m === null ? null : m[1];
}

/** Cheap shape check, so arbitrary attacker input is refused before any hashing or lookup. */
export function looksLikeKey(token: string): boolean {
  return token.length === KEY_LENGTH && KEY_SHAPE.test(token);
}

export function looksLikeKeyId(id: string): boolean {
  return /^key_[0-9a-f]{12}$/.test(id);
}
