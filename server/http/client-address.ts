/**
 * Who the client is when the server sits behind a proxy (`serve --trust-proxy`).
 * The peer of a proxied request is the proxy, so every person would share one
 * per-client throttle; the proxy names the client in `X-Forwarded-For` (or RFC 7239
 * `Forwarded: for=`). Those headers are the client's to forge, so they are read only
 * when the peer is a trusted proxy, and then from the right: each proxy appends the
 * address it received the request from, so the right-most address that is not one of
 * our proxies is the last one a proxy of ours vouches for. Everything left of it is
 * whatever the client sent. X-Forwarded-Proto is not read: what depends on the scheme
 * (Secure cookies, the form Origin check) follows the configured --base-url.
 */
import { BlockList, isIP } from 'node:net';

export interface TrustedProxies {
  /** The ranges as given (for messages and the start line). */
  readonly ranges: readonly string[];
  readonly list: BlockList;
}

/**
 * `CIDR[,CIDR…]` (`10.0.0.0/8`, `127.0.0.1`, `::1`, `fd00::/8`): a bare address is
 * its own /32 or /128. Returns the problem with one part, or the list.
 */
export function parseTrustedProxies(text: string): TrustedProxies | string {
  const list = new BlockList();
  const ranges: string[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const slash = part.indexOf('/');
    const address = slash < 0 ? part : part.slice(0, slash);
    const family = isIP(address);
    if (family === 0) return `${JSON.stringify(part)} is not an IP address or CIDR range`;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const max = family === 4 ? 32 : 128;
    const bitsText = slash < 0 ? String(max) : part.slice(slash + 1);
    const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
    if (!(bits >= 0 && bits <= max)) return `${JSON.stringify(part)} has a prefix length outside 0..${max}`;
    list.addSubnet(address, bits, type);
    ranges.push(part);
  }
  if (ranges.length === 0) return 'it names no address or range';
  return { ranges, list };
}

/** An IPv4 address as an IPv6 socket reports it (`::ffff:127.0.0.1`) is the IPv4 address. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function trusted(trust: TrustedProxies, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && trust.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** One `for=` or X-Forwarded-For element as an address: quotes, brackets and ports taken off; null if none. */
function elementAddress(element: string): string | null {
  let v = element.trim();
  if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).trim();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    v = end < 0 ? '' : v.slice(1, end);
  } else if (isIP(v) === 0) {
    // IPv4 with a port (`192.0.2.1:4711`); an IPv6 address without brackets has no port.
    const colon = v.lastIndexOf(':');
    if (colon > 0 && v.indexOf(':') === colon) v = v.slice(0, colon);
  }
  return isIP(v) === 0 ? null : plain(v);
}

/** The `for=` addresses of a Forwarded header, in order (RFC 7239 §4); null where one is not an address. */
function forwardedFor(header: string): (string | null)[] {
  const out: (string | null)[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      out.push(elementAddress(pair.slice(eq + 1)));
    }
  }
  return out;
}

/**
 * The client of a request whose TCP peer is `peer`: the peer itself unless it is a
 * trusted proxy; then the right-most address of the forwarding chain that is not a
 * trusted proxy (X-Forwarded-For, else Forwarded). A chain element that is not an
 * address (`unknown`, an obfuscated name, garbage) stops the walk there: the element
 * after it, which a trusted proxy wrote, is the last address we can vouch for.
 */
export function clientAddress(
  trust: TrustedProxies | null,
  peer: string,
  xForwardedFor: string,
  forwarded: string,
): string {
  const direct = plain(peer);
  if (trust === null || !trusted(trust, direct)) return direct;
  const chain =
    xForwardedFor.trim() !== ''
      ? xForwardedFor.split(',').map(elementAddress)
      : forwarded.trim() !== ''
        ? forwardedFor(forwarded)
        : [];
  let address = direct;
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i];
    if (hop === null) break;
    address = hop;
    if (!trusted(trust, hop)) break;
  }
  return address;
}
