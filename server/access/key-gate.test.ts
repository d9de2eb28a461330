/**
 * The gate's cache of presented Authorization values: a value is admitted from it
 * only when it is the very value that was checked against the table, not one that
 * shares its hash, its bytes as Latin-1, its start or its length.
 */
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../accounts/keys.js';
import type { GateDecision } from '../http/gate.js';
import { activeEntry } from './key-entry.test-helper.js';
import { AccessGate } from './key-gate.js';
import { LocalLimiter } from './limiter-local.js';

const status = (d: GateDecision | Promise<GateDecision>) => {
  if (d instanceof Promise) throw new Error('the local limiter decides at once');
  return d.ok ? 200 : Number.parseInt(d.status, 10);
};

function gateWith(...keys: Array<{ hash: string; id: string }>): AccessGate {
  const gate = new AccessGate('https://api.example', LocalLimiter.create(4).limiter, () => 1_700_000_000_000);
  gate.setTable({ version: 1, entries: keys.map((k) => [k.hash, activeEntry(k.id)] as const), revoked: [] });
  return gate;
}

/** `s` with its character at `i` replaced by one whose low byte is the same (a Latin-1 or UTF-16 look-alike). */
const lookAlike = (s: string, i: number) =>
  s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) | 0x100) + s.slice(i + 1);

describe('the key cache admits only the exact value it checked', () => {
  it('a key is admitted, then admitted again from the cache, in every spelling of Bearer it was checked in', () => {
    const k = generateKey();
    const gate = gateWith(k);
    for (const value of [`Bearer ${k.key}`, `bearer ${k.key}`, `Bearer\t${k.key} `]) {
      expect(status(gate.admit(value)), value).toBe(200);
      expect(status(gate.admit(value)), value).toBe(200);
    }
  });

  it('a value that differs from a cached one by a non-ASCII look-alike character is refused, at every position', () => {
    const k = generateKey();
    const gate = gateWith(k);
    const value = `Bearer ${k.key}`;
    expect(status(gate.admit(value))).toBe(200);
    for (let i = 0; i < value.length; i++)
      expect(status(gate.admit(lookAlike(value, i))), `position ${i}`).toBe(401);
    expect(status(gate.admit(value))).toBe(200);
  });

  it('a cached value with more after it, or cut short, is refused', () => {
    const k = generateKey();
    const gate = gateWith(k);
    const value = `Bearer ${k.key}`;
    expect(status(gate.admit(value))).toBe(200);
    expect(status(gate.admit(`${value}x`))).toBe(401);
    expect(status(gate.admit(value.slice(0, -1)))).toBe(401);
    expect(status(gate.admit(`${value}${' '.repeat(300)}x`))).toBe(401);
  });

  it('a long value is admitted when it is a key with blanks after it, and refused when one character differs', () => {
    const k = generateKey();
    const gate = gateWith(k);
    // Trailing blanks are allowed by the Bearer syntax: the same key, 300 characters long.
    const long = `Bearer ${k.key}${' '.repeat(300 - 7 - k.key.length)}`;
    expect(long.length).toBe(300);
    expect(status(gate.admit(long))).toBe(200);
    expect(status(gate.admit(long))).toBe(200);
    expect(status(gate.admit(lookAlike(long, 20)))).toBe(401);
  });

  it('a non-ASCII value is refused, not mistaken for the bytes of another', () => {
    const k = generateKey();
    const gate = gateWith(k);
    expect(status(gate.admit(`Bearer ${k.key}`))).toBe(200);
    expect(status(gate.admit(`Bearer ${k.key.slice(0, -1)}é`))).toBe(401);
    expect(status(gate.admit('Bearer \u{1F511}'))).toBe(401);
  });
});
