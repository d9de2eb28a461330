/**
 * The screen, compare and growth tools in-process (C50–C55): the REST answers'
 * figures, structuredContent valid against each tool's outputSchema, REST's 422s as
 * tool errors naming the argument and the valid values (C54).
 */
import { rmSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticServing } from '../../test/serving-snapshot.js';
import { ajv } from '../api/ajv.js';
import { compare, screen } from '../api/screen-answers.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { TOOLS } from './tool-list.js';
import { callTool } from './tools.js';

let dir: string;
let snap: ServingSnapshot;
let codes: string[];

beforeAll(async () => {
  ({ dir, snap, codes } = await syntheticServing(60));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const textOf = (r: CallToolResult) => r.content.map((c) => (c as { text: string }).text).join('\n');
const body = (b: Uint8Array | string) =>
  JSON.parse(typeof b === 'string' ? b : Buffer.from(b).toString('utf8'));

function validOutput(name: string, r: CallToolResult): void {
  expect(r.isError, textOf(r)).toBeFalsy();
  const check = ajv.compile(TOOLS.find((t) => t.name === name)!.outputSchema!);
  expect(check(r.structuredContent), JSON.stringify(check.errors)).toBe(true);
}

describe('screenFunds, compareFunds and getGrowth', () => {
  it('screenFunds gives the REST page: filters as numbers, fields as a list, the cursor as text', () => {
    const r = callTool(snap, 'screenFunds', {
      return_1y_min: -10,
      history_years_min: 1,
      sort: '-return_5y',
      fields: ['return_5y', 'history_years'],
      limit: 5,
    });
    validOutput('screenFunds', r);
    const rest = screen(snap, {
      return_1y_min: '-10',
      history_years_min: '1',
      sort: '-return_5y',
      fields: 'return_5y,history_years',
      limit: '5',
    });
    expect(r.structuredContent).toEqual(body(rest.body));
    expect(textOf(r)).toMatch(/code\tname\treturn_5y\thistory_years/);
    expect(textOf(r)).toMatch(/pass cursor ".+" with the same sort/);
  });

  it('compareFunds: 10 funds × 6 figures is one table under 1,500 characters, full rows in structuredContent', () => {
    const asked = codes.slice(0, 10);
    const fields = ['return_1m', 'return_ytd', 'return_1y', 'return_3y', 'return_5y', 'history_years'];
    const r = callTool(snap, 'compareFunds', { codes: asked, fields });
    validOutput('compareFunds', r);
    expect(r.content).toHaveLength(1);
    const t = textOf(r);
    expect(t.length).toBeLessThan(1500);
    const lines = t.split('\n');
    expect(lines[0]).toBe(['code', 'name', ...fields].join('\t'));
    expect(lines.slice(1).map((l) => l.split('\t')[0])).toEqual(asked);
    expect(r.structuredContent).toEqual({
      rows: body(compare(snap, { codes: asked.join(','), fields: fields.join(',') }).body),
    });
  });

  it('compareFunds lists codes without a row; more than 20 codes is an error naming the limit', () => {
    const r = callTool(snap, 'compareFunds', { codes: [codes[0], 'NOPE'] });
    expect(textOf(r)).toContain('No row (unknown code or no data): NOPE');
    const many = callTool(snap, 'compareFunds', { codes: codes.slice(0, 21) });
    expect(many.isError).toBe(true);
    expect(textOf(many)).toContain('codes: must have at most 20 items');
  });

  it('bad figures are tool errors naming the argument and the valid names, as REST 422s', () => {
    const sort = callTool(snap, 'screenFunds', { sort: 'sharpe' });
    expect(sort.isError).toBe(true);
    expect(textOf(sort)).toMatch(/^Invalid arguments for screenFunds: sort: Input should be 'return_1d', /);
    const window = callTool(snap, 'compareFunds', { codes: [codes[0]], fields: ['return_9y'] });
    expect(textOf(window)).toContain('fields: Value error, return has no window 9y; its windows are 1d, 1w');
    const range = callTool(snap, 'screenFunds', { return_5y_min: 9, return_5y_max: 1 });
    expect(textOf(range)).toContain(
      'return_5y_min: Value error, return_5y_min (9) is above return_5y_max (1)',
    );
    const bad = callTool(snap, 'screenFunds', { return_5y_minimum: 9 });
    expect(textOf(bad)).toContain('"return_5y_minimum": not an argument of screenFunds');
  });

  it('getGrowth: the series with a one-line summary', () => {
    const r = callTool(snap, 'getGrowth', { code: codes[0], interval: 'month' });
    validOutput('getGrowth', r);
    expect(textOf(r)).toMatch(
      new RegExp(`^${codes[0]}: 10,000 invested on \\d{4}-\\d\\d-\\d\\d was worth \\d+\\.\\d\\d`, 'm'),
    );
  });
});
