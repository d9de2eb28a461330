import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFromSource } from '../builder/build.js';
import { fundRow, scratch, writeSource } from '../builder/build.test-helper.js';
import { main } from './main.js';
import type { CliIo } from './shared/io.js';

const dir = scratch('fr-cli-');

async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (s) => out.push(s), err: (s) => err.push(s), env: {}, isTty: false };
  const code = await main(argv, io);
  return { code, out, err: err.join('\n').split('\n') };
}

describe('fundreturns usage errors', () => {
  it('print the mistake, that command’s usage and where the rest is, not the whole usage (exit 2)', async () => {
    const r = await run(['query', 'fund']);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([
      'fundreturns: query: a fund CODE is required',
      'usage: fundreturns query fund|trailing|calendar CODE [--as-of YYYY-MM-DD] [--year YYYY]',
      '                         [--snapshots ./snapshots]',
      'see `fundreturns --help`',
    ]);
    const flag = await run(['serve', '--nope']);
    expect(flag.code).toBe(2);
    expect(flag.err[0]).toBe('fundreturns: unknown flag --nope');
    expect(flag.err[1]).toMatch(/^usage: fundreturns serve \[--host 127\.0\.0\.1\]/);
    expect(flag.err.at(-1)).toBe('see `fundreturns --help`');
    // The mistake, serve's own synopsis and the pointer: never the other commands'.
    expect(flag.err.join('\n')).not.toContain('fundreturns generate');
    expect(flag.err.length).toBeLessThanOrEqual(10);
  });

  it('an unknown command is one line and the pointer to --help', async () => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.err).toEqual(['fundreturns: unknown command "frobnicate"', 'see `fundreturns --help`']);
  });

  it('no command at all still shows the whole usage (exit 2), and --help too (exit 0)', async () => {
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.out[0]).toMatch(/^usage: fundreturns <command> \[flags\]\n/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toEqual(none.out);
  });
});

describe('fundreturns query', () => {
  it('a code that exists in another case is named, as the API’s 404 does (C15, C21); stdout stays null, exit 3', async () => {
    const src = writeSource(dir('src'), [fundRow('BBN')], {
      BBN: 'Date,Open,High,Low,Close,Adjusted_close,Volume\n2026-11-09,0,0,0,12.50,12.50,0\n2026-11-10,0,0,0,12.61,12.61,0\n',
    });
    const snapshots = join(dir('snaps'), 'snapshots');
    await buildFromSource({ source: src, snapshots, keep: 5, maxBadShare: 0.01, threads: 1 });
    const wrongCase = await run(['query', 'fund', 'bbn', '--snapshots', snapshots]);
    expect(wrongCase.code).toBe(3);
    expect(wrongCase.out).toEqual(['null']);
    expect(wrongCase.err).toEqual([
      'fundreturns: No fund with code bbn (codes are case-sensitive: BBN exists)',
    ]);
    const unknown = await run(['query', 'trailing', 'ZZZ', '--snapshots', snapshots]);
    expect(unknown.err).toEqual(['fundreturns: No fund with code ZZZ']);
    const found = await run(['query', 'fund', 'BBN', '--snapshots', snapshots]);
    expect(found.code).toBe(0);
    expect(found.err).toEqual(['']);
  });
});
