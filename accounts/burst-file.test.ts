import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BURST_FILE, readBurst, writeBurst } from './burst-file.js';

const dir = mkdtempSync(join(tmpdir(), 'fr-burst-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('burst.json (C27 across a restart)', () => {
  it('reads back what was written; a missing file is no saved burst and no warning', async () => {
    const warnings: string[] = [];
    expect(await readBurst(dir, (m) => warnings.push(m))).toEqual(new Map());
    await writeBurst(dir, new Map([['acct_1', 1_800_000_000_123.5]]));
    expect(await readBurst(dir, (m) => warnings.push(m))).toEqual(new Map([['acct_1', 1_800_000_000_123.5]]));
    expect(warnings).toEqual([]);
  });

  it.each([
    ['cut in half', '{"acct_1": 18000'],
    ['not an object', '[1, 2]'],
  ])('a damaged file (%s) starts every account with a full burst, and says so', async (_label, text) => {
    writeFileSync(join(dir, BURST_FILE), text);
    const warnings: string[] = [];
    expect(await readBurst(dir, (m) => warnings.push(m))).toEqual(new Map());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(BURST_FILE);
  });
});
