/**
 * The tools/call results prepared with the snapshot (tool-results.ts) are the ones
 * the general path builds, byte for byte, and are used only where the general path
 * would give the same: a code the snapshot has, and no other argument.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpToolName } from '../../schemas/index.js';
import { syntheticServing } from '../../test/serving-snapshot.js';
import { packRows, RowKind, SharedRows } from '../snapshot/prepared.js';
import type { ServingSnapshot } from '../snapshot/serving.js';
import { prepareToolResults } from './tool-results.js';
import { builtToolJson, callToolJson, resultText } from './tools.js';

let dir: string;
let snap: ServingSnapshot;
let codes: string[];

/** Names a JSON string must escape, and one that is not ASCII. */
const AWKWARD_NAMES = ['Quote " Fund', 'Back\\slash Trust', 'Tab\tand\nnewline', 'Fönd €'];

beforeAll(async () => {
  ({ dir, snap, codes } = await syntheticServing(40, 800, (cols) => {
    AWKWARD_NAMES.forEach((name, k) => {
      cols.funds.name[k + 1] = name;
    });
  }));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const PREPARED_TOOLS: McpToolName[] = ['getFund', 'getTrailingReturns', 'getCalendarReturns'];

describe('prepared tools/call results', () => {
  it('a latest getFund, getTrailingReturns or getCalendarReturns by code alone is the built result, for every fund', () => {
    for (const name of PREPARED_TOOLS)
      for (const code of codes) {
        const fast = callToolJson(snap, name, { code });
        expect(fast.json, `${name} ${code}`).toBeInstanceOf(Uint8Array);
        const built = builtToolJson(snap, name, { code });
        expect(typeof built.json).toBe('string');
        expect(resultText(fast), `${name} ${code}`).toBe(built.json);
        expect(fast.isError).toBe(false);
      }
  });

  it('names with quotes, backslashes, control characters and non-ASCII letters come out escaped as the built ones', () => {
    for (let k = 1; k <= AWKWARD_NAMES.length; k++) {
      const text = resultText(callToolJson(snap, 'getFund', { code: codes[k] }));
      const result = JSON.parse(text) as { structuredContent: { name: string }; content: { text: string }[] };
      expect(result.structuredContent.name).toBe(AWKWARD_NAMES[k - 1]);
      expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
    }
  });

  it('any other argument, an unknown code or a code written otherwise is answered by the general path', () => {
    const cases: Array<[McpToolName, Record<string, unknown>]> = [
      ['getTrailingReturns', { code: codes[0], as_of: '2025-01-31' }],
      ['getCalendarReturns', { code: codes[0], year: 2024 }],
      ['getFund', { code: codes[0], market: 'US' }],
      ['getFund', { code: codes[0].toLowerCase() }],
      ['getFund', { code: ` ${codes[0]}` }],
      ['getFund', { code: 'NO-SUCH' }],
      ['getFund', { code: 7 }],
      ['getFund', {}],
      ['getFund', { code: codes[0], extra: 1 }],
      ['searchFunds', { q: 'Fund' }],
    ];
    for (const [name, args] of cases) {
      const r = callToolJson(snap, name, args);
      expect(typeof r.json, `${name} ${JSON.stringify(args)}`).toBe('string');
      expect(r).toEqual(builtToolJson(snap, name, args));
    }
  });

  it('a fund without calendar-year rows has no prepared calendar result (the general path says why)', () => {
    const row = (kind: RowKind) => Buffer.from(snap.rows.row(kind, 0)).toString('utf8');
    const parts = [row(RowKind.Fund), row(RowKind.Trailing), '', row(RowKind.Code)];
    const results = new SharedRows(prepareToolResults(packRows(parts, 1)));
    expect(results.row(RowKind.Calendar, 0).length).toBe(0);
    expect(Buffer.from(results.row(RowKind.Trailing, 0)).toString('utf8')).toBe(
      builtToolJson(snap, 'getTrailingReturns', { code: codes[0] }).json,
    );
  });
});
