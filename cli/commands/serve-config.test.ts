import { describe, expect, it } from 'vitest';
import { parseServeConfig } from './serve-config.js';

const base = (url: string) => parseServeConfig(['--base-url', url], {}).baseUrl;

describe('serve configuration: --base-url', () => {
  it('keeps an ASCII URL as given, without a trailing slash', () => {
    expect(base('https://funds.example.com/api/')).toBe('https://funds.example.com/api');
    expect(base('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });

  it('serializes a non-ASCII host and path to ASCII, as the Link header and problem types need', () => {
    expect(base('https://例え.jp/fonds/ä')).toBe('https://xn--r8jz45g.jp/fonds/%C3%A4');
  });

  it.each([
    'ftp://x.example',
    'not a url',
    'https://x.example/api?k=1',
    'https://x.example/#top',
    'https://user:pw@x.example',
    'https://user@x.example',
    'https://x.example/%zz',
    'https://x.example/a%2',
  ])('refuses %s with a usage error', (url) => {
    expect(() => base(url)).toThrow(/--base-url/);
  });
});

describe('serve configuration: values and where they came from', () => {
  const parse =
    (argv: string[], env: NodeJS.ProcessEnv = {}) =>
    () =>
      parseServeConfig(argv, env);

  it('a bad value from the environment names the variable and its flag', () => {
    expect(parse([], { FUNDRETURNS_PORT: 'abc' })).toThrow(
      /^FUNDRETURNS_PORT \(--port\) must be a whole number, not "abc"$/,
    );
    expect(parse([], { FUNDRETURNS_BASE_URL: 'ftp://x' })).toThrow(/^FUNDRETURNS_BASE_URL \(--base-url\)/);
    // The flag wins over the variable, and then the flag is what is named.
    expect(parse(['--port', 'x'], { FUNDRETURNS_PORT: '1' })).toThrow(/^--port must be/);
  });

  it('a host no URL can hold is blamed on --host, not on the --base-url made from it', () => {
    expect(parse(['--host', '999.1.1.1'])).toThrow(
      /^--host is not a valid host name or address: "999.1.1.1"$/,
    );
    expect(parse([], { FUNDRETURNS_HOST: '999.1.1.1' })).toThrow(
      /^FUNDRETURNS_HOST \(--host\) is not a valid/,
    );
    // With a base URL given, the host is only where to listen.
    expect(parse(['--host', '999.1.1.1', '--base-url', 'https://api.example.com'])().host).toBe('999.1.1.1');
  });

  it('--store is a directory or a Redis URL: another scheme or a broken Redis URL is a usage error', () => {
    expect(parse(['--store', 'http://x'])).toThrow(
      /^--store must be a directory or a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(parse(['--store', 'redis://:abc'])).toThrow(/^--store is not a valid Redis URL/);
    expect(parseServeConfig(['--store', 'redis://127.0.0.1:6379'], {}).store).toBe('redis://127.0.0.1:6379');
    expect(parseServeConfig(['--store', 'var/x'], {}).store).toMatch(/\/var\/x$/);
  });

  it('--claim-name is at most 64 characters, and a long one is not echoed whole', () => {
    expect(parseServeConfig(['--claim-name', 'a'.repeat(64)], {}).claimName).toBe('a'.repeat(64));
    let message = '';
    try {
      parseServeConfig(['--claim-name', 'a'.repeat(300)], {});
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^--claim-name must be 1 to 64/);
    expect(message.length).toBeLessThan(200);
  });
});

describe('serve configuration: --mcp-origins', () => {
  const origins = (v: string) => parseServeConfig(['--mcp-origins', v], {}).mcpOrigins;

  it('defaults to none besides the base URL (origin.ts adds it)', () => {
    expect(parseServeConfig([], {}).mcpOrigins).toEqual([]);
  });

  it('keeps each origin in the form browsers send: lower case, no default port, no trailing slash', () => {
    expect(origins('HTTPS://App.Example.com:443/, http://localhost:6274')).toEqual([
      'https://app.example.com',
      'http://localhost:6274',
    ]);
    expect(origins(' * ')).toBe('*');
  });

  it.each([
    'https://app.example.com/mcp',
    'ftp://x.example',
    'app.example.com',
    'https://a@x.example',
    'https://:pw@x.example',
    'https://x.example/?q',
  ])('refuses %s naming the flag', (v) => {
    expect(() => origins(v)).toThrow(/^--mcp-origins takes \* or comma-separated origins/);
  });
});

describe('serve configuration: the admin listener (/metrics)', () => {
  it('is off unless a port is given, and on loopback by default', () => {
    const off = parseServeConfig([], {});
    expect(off.adminPort).toBeNull();
    expect(off.adminHost).toBe('127.0.0.1');
    const on = parseServeConfig(['--admin-port', '9464'], {});
    expect([on.adminPort, on.adminHost]).toEqual([9464, '127.0.0.1']);
  });

  it('FUNDRETURNS_ADMIN_PORT and FUNDRETURNS_ADMIN_HOST work like every flag, the flag winning', () => {
    const env = { FUNDRETURNS_ADMIN_PORT: '9464', FUNDRETURNS_ADMIN_HOST: '10.0.0.5' };
    expect(parseServeConfig([], env)).toMatchObject({ adminPort: 9464, adminHost: '10.0.0.5' });
    expect(parseServeConfig(['--admin-port', '9500'], env).adminPort).toBe(9500);
    expect(() => parseServeConfig([], { FUNDRETURNS_ADMIN_PORT: 'x' })).toThrow(
      /^FUNDRETURNS_ADMIN_PORT \(--admin-port\) must be a whole number/,
    );
  });

  it('refuses the public port: /metrics is never served there', () => {
    expect(() => parseServeConfig(['--port', '8080', '--admin-port', '8080'], {})).toThrow(
      /--admin-port must differ from --port/,
    );
    expect(() => parseServeConfig(['--admin-host', 'a b', '--admin-port', '1'], {})).toThrow(/--admin-host/);
  });
});

describe('serve configuration: --trust-proxy', () => {
  it('trusts no proxy by default; takes ranges from the flag or FUNDRETURNS_TRUST_PROXY', () => {
    expect(parseServeConfig([], {}).trustProxy).toEqual([]);
    expect(parseServeConfig(['--trust-proxy', '127.0.0.1, 10.0.0.0/8'], {}).trustProxy).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
    ]);
    expect(parseServeConfig([], { FUNDRETURNS_TRUST_PROXY: '::1' }).trustProxy).toEqual(['::1']);
  });

  it.each(['proxy.example.com', '10.0.0.0/40', ' , ', '127.0.0.1,nope'])(
    'refuses %j as a usage error naming the flag',
    (v) => {
      expect(() => parseServeConfig(['--trust-proxy', v], {})).toThrow(
        /--trust-proxy takes comma-separated addresses/,
      );
    },
  );
});
