import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadClaim } from './claim.js';

const dir = mkdtempSync(join(tmpdir(), 'claim-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: string | Buffer): string => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

const GLAMA = '{"$schema":"https://glama.ai/mcp/schemas/connector.json","claim":"abc-123"}\n';

describe('C32 directory claim', () => {
  it('has no route when no file is configured (the path 404s)', () => {
    expect(loadClaim({})).toBeNull();
    expect(loadClaim({ name: 'glama' })).toBeNull();
    expect(loadClaim({ file: '' })).toBeNull();
  });

  it('serves /.well-known/glama.json by default with the file text unchanged', () => {
    const r = loadClaim({ file: file('glama.json', GLAMA) });
    expect(r).toEqual({ path: '/.well-known/glama.json', body: GLAMA });
  });

  it('takes another directory name and shape', () => {
    const body = '{"verification":"xyz","owner":"fund-returns"}';
    const r = loadClaim({ name: 'mcp-registry_v1.0', file: file('other.json', body) });
    expect(r).toEqual({ path: '/.well-known/mcp-registry_v1.0.json', body });
  });

  it('drops a UTF-8 byte order mark', () => {
    const r = loadClaim({
      file: file('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(GLAMA)])),
    });
    expect(r?.body).toBe(GLAMA);
  });

  it('refuses a missing file, naming the path', () => {
    const p = join(dir, 'nope.json');
    expect(() => loadClaim({ file: p })).toThrow(`claim file ${p} cannot be read: no such file`);
  });

  it('refuses a directory', () => {
    const p = join(dir, 'sub');
    mkdirSync(p);
    expect(() => loadClaim({ file: p })).toThrow(/is a directory/);
  });

  it('refuses text that is not JSON', () => {
    expect(() => loadClaim({ file: file('bad.json', 'claim=abc') })).toThrow(/is not valid JSON/);
  });

  it('refuses JSON that is not an object', () => {
    expect(() => loadClaim({ file: file('arr.json', '[1]') })).toThrow(/found an array/);
    expect(() => loadClaim({ file: file('str.json', '"abc"') })).toThrow(/found a string/);
    expect(() => loadClaim({ file: file('null.json', 'null') })).toThrow(/found null/);
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(() =>
      loadClaim({ file: file('latin1.json', Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d])) }),
    ).toThrow(/not UTF-8/);
  });

  it('refuses an oversized file (most likely the wrong path)', () => {
    expect(() => loadClaim({ file: file('big.json', `{"x":"${'a'.repeat(70_000)}"}`) })).toThrow(
      /max 64 KiB/,
    );
  });

  it.each(['../etc', 'a/b', 'Glama', '.hidden', 'x y', 'a%2f', '', 'a'.repeat(65)])(
    'refuses the unsafe name %j when a file is set',
    (name) => {
      const f = file('ok.json', GLAMA);
      if (name === '') {
        // Empty means "use the default", like unset.
        expect(loadClaim({ name, file: f })?.path).toBe('/.well-known/glama.json');
        return;
      }
      expect(() => loadClaim({ name, file: f })).toThrow(/not a safe path segment/);
    },
  );
});
