/**
 * Input is shown, never obeyed: a price row or a file name that
 * carries terminal control sequences reaches the operator's terminal escaped, in the
 * build report and in errors. The compiled CLI (`npm run build`).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundRow, writeSource } from '../builder/build.test-helper.js';
import { escapeControls, escapeForTerminal } from '../core/escape.js';
import { cli, tempDir } from './harness.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('escape');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EOD = 'Date,Open,High,Low,Close,Adjusted_close,Volume\n';
const GOOD = `${EOD}2024-01-02,1,1,1,16,16,0\n2024-01-03,1,1,1,16.16,16.16,0\n2024-01-04,1,1,1,16.2,16.2,0\n`;
// Clears the screen, retitles the terminal, then flips the rest of the line right to left.
const HOSTILE = '\u001b[2J\u001b]0;pwned\u0007\u202e';

/** Bytes a terminal would act on: C0 other than newline and tab, DEL, C1 and bidi overrides. */
function controls(text: string): string[] {
  const found: string[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    const bad =
      (c < 0x20 && c !== 0x0a && c !== 0x09) ||
      (c >= 0x7f && c <= 0x9f) ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069);
    if (bad) found.push(c.toString(16));
  }
  return found;
}

describe('control characters from input in what the CLI prints', () => {
  it('a price row starting with ESC[2J ESC]0;pwned BEL is shown escaped in the build report, never raw', () => {
    const source = writeSource(join(dir, 'source'), ['AAA', 'BBB', 'CCC', 'DDD'].map(fundRow), {
      AAA: GOOD,
      BBB: GOOD,
      CCC: GOOD,
      DDD: `${GOOD}${HOSTILE}2024-01-05,1,1,1,17,17,0\n`,
    });
    const r = cli([
      'build',
      '--source',
      source,
      '--snapshots',
      join(dir, 'snapshots'),
      '--max-bad-share',
      '0.5',
    ]);
    expect(r.stderr).toContain('unparsable_date: 1');
    for (const [name, text] of [
      ['stdout', r.stdout],
      ['stderr', r.stderr],
    ])
      expect(controls(text), name).toEqual([]);
    expect(r.stderr).toContain('\\x1b[2J\\x1b]0;pwned\\x07\\u202e');
    expect(r.status).toBe(0);
  });

  it('an error quoting input (a snapshots flag naming a control sequence) is escaped too', () => {
    const r = cli(['inspect', '--snapshots', join(dir, `no-such-${HOSTILE}`)]);
    expect(r.status).toBe(1);
    expect(controls(r.stderr)).toEqual([]);
    expect(r.stderr).toContain('no-such-\\x1b[2J');
  });

  it('escapeControls escapes C0, DEL, C1 and bidi controls, and only escapeForTerminal keeps newlines and tabs', () => {
    expect(escapeControls('a\u0000\t\n\u007f\u009b\u202e\u2066z é')).toBe(
      'a\\x00\\x09\\x0a\\x7f\\x9b\\u202e\\u2066z é',
    );
    expect(escapeForTerminal('line 1\n\tline 2\u001b[0m')).toBe('line 1\n\tline 2\\x1b[0m');
  });
});
