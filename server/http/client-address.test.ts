import { describe, expect, it } from 'vitest';
import { clientAddress, parseTrustedProxies, type TrustedProxies } from './client-address.js';

function trust(text: string): TrustedProxies {
  const t = parseTrustedProxies(text);
  if (typeof t === 'string') throw new Error(t);
  return t;
}

describe('--trust-proxy ranges', () => {
  it('takes addresses and CIDR ranges of both families, a bare address as its own host', () => {
    const t = trust(' 127.0.0.1, 10.0.0.0/8 ,fd00::/8,::1');
    expect(t.ranges).toEqual(['127.0.0.1', '10.0.0.0/8', 'fd00::/8', '::1']);
    expect(clientAddress(t, '10.1.2.3', '198.51.100.7', '')).toBe('198.51.100.7');
    expect(clientAddress(t, '127.0.0.2', '198.51.100.7', '')).toBe('127.0.0.2');
    expect(clientAddress(t, 'fd12::1', '198.51.100.7', '')).toBe('198.51.100.7');
  });

  it('refuses what is not an address or range, naming it', () => {
    expect(parseTrustedProxies('10.0.0.0/33')).toMatch(
      /"10\.0\.0\.0\/33" has a prefix length outside 0\.\.32/,
    );
    expect(parseTrustedProxies('::1/129')).toMatch(/outside 0\.\.128/);
    expect(parseTrustedProxies('proxy.example.com')).toMatch(/"proxy\.example\.com" is not an IP address/);
    expect(parseTrustedProxies('10.0.0.0/x')).toMatch(/prefix length/);
    expect(parseTrustedProxies(' , ')).toMatch(/names no address/);
  });
});

describe('the client behind a proxy', () => {
  const t = trust('127.0.0.1,10.0.0.0/8');

  it('without trust, or from an untrusted peer, the headers are ignored: forging one gains nothing', () => {
    expect(clientAddress(null, '203.0.113.9', '198.51.100.7', 'for=198.51.100.8')).toBe('203.0.113.9');
    expect(clientAddress(t, '203.0.113.9', '198.51.100.7', 'for=198.51.100.8')).toBe('203.0.113.9');
  });

  it('the right-most untrusted address of X-Forwarded-For: a forged left-most entry gains nothing', () => {
    // The client sent "X-Forwarded-For: 1.2.3.4"; nginx appended the address it saw.
    expect(clientAddress(t, '127.0.0.1', '1.2.3.4, 198.51.100.7', '')).toBe('198.51.100.7');
    // Two proxies of ours in a row: both skipped.
    expect(clientAddress(t, '127.0.0.1', '1.2.3.4, 198.51.100.7, 10.0.0.5', '')).toBe('198.51.100.7');
  });

  it('a chain of trusted proxies only is the left-most of them; none at all is the peer', () => {
    expect(clientAddress(t, '127.0.0.1', '10.0.0.9, 10.0.0.5', '')).toBe('10.0.0.9');
    expect(clientAddress(t, '127.0.0.1', '', '')).toBe('127.0.0.1');
  });

  it('an element that is not an address stops the walk at the last one a proxy of ours wrote', () => {
    expect(clientAddress(t, '127.0.0.1', 'unknown, 198.51.100.7', '')).toBe('198.51.100.7');
    expect(clientAddress(t, '127.0.0.1', '198.51.100.7, garbage', '')).toBe('127.0.0.1');
  });

  it('ports and brackets come off; an IPv4-mapped peer is its IPv4 address', () => {
    expect(clientAddress(t, '::ffff:127.0.0.1', '198.51.100.7:4711', '')).toBe('198.51.100.7');
    expect(clientAddress(t, '127.0.0.1', '[2001:db8::7]:4711', '')).toBe('2001:db8::7');
    expect(clientAddress(t, '127.0.0.1', '2001:db8::7', '')).toBe('2001:db8::7');
  });

  it('Forwarded: for= (RFC 7239) when there is no X-Forwarded-For, quoted IPv6 included', () => {
    expect(clientAddress(t, '127.0.0.1', '', 'for=1.2.3.4, for="[2001:db8::7]:4711";proto=https')).toBe(
      '2001:db8::7',
    );
    expect(clientAddress(t, '127.0.0.1', '', 'for=_hidden, for=198.51.100.7;by=10.0.0.5')).toBe(
      '198.51.100.7',
    );
  });
});
