import { describe, expect, it } from 'vitest';
import {
  CalendarReturnSchema,
  FundListSchema,
  FundSchema,
  MCP_TOOL_INPUT_SCHEMAS,
  type McpToolName,
  mcpOutputSchema,
  TrailingReturnsSchema,
} from '../../schemas/index.js';
import { isToolName } from './tool-arguments.js';
import { SERVER_INSTRUCTIONS, TOOLS } from './tool-list.js';
import { callTool } from './tools.js';

/** The rendering: the last text block (a success's first is its structured content as JSON). */
const textOf = (r: ReturnType<typeof callTool>) => (r.content[r.content.length - 1] as { text: string }).text;

describe('MCP tool definitions', () => {
  it('input schemas are schemas/mcp.ts and output schemas the REST ones (one source)', () => {
    const byName = new Map(TOOLS.map((t) => [t.name, t]));
    for (const [name, s] of Object.entries(MCP_TOOL_INPUT_SCHEMAS))
      expect(byName.get(name)!.inputSchema).toBe(s);
    expect(byName.get('searchFunds')!.outputSchema).toEqual(mcpOutputSchema(FundListSchema));
    expect(byName.get('getFund')!.outputSchema).toEqual(mcpOutputSchema(FundSchema));
    expect(byName.get('getTrailingReturns')!.outputSchema).toEqual(mcpOutputSchema(TrailingReturnsSchema));
    expect(byName.get('getCalendarReturns')!.outputSchema).toEqual(mcpOutputSchema(CalendarReturnSchema));
    const rows = byName.get('batchTrailingReturns')!.outputSchema!.properties!.rows as { items: unknown };
    expect(rows.items).toEqual(mcpOutputSchema(TrailingReturnsSchema));
  });

  it("an output schema keeps every rule of the REST one; only the figures' shared wording and examples go", () => {
    const rules = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(rules)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(
              Object.entries(v)
                .filter(([k]) => k !== 'description' && k !== 'examples')
                .map(([k, x]) => [k, rules(x)]),
            )
          : v;
    for (const s of [FundListSchema, FundSchema, TrailingReturnsSchema, CalendarReturnSchema])
      expect(rules(mcpOutputSchema(s))).toEqual(rules(s));
    const figures = mcpOutputSchema(TrailingReturnsSchema).properties as Record<
      string,
      { description: string }
    >;
    const brief = figures.return_3y;
    expect(brief.description).toMatch(/^3 years\. Annualized .*Percent, 4 decimals, or null\.$/);
    expect(JSON.stringify(mcpOutputSchema(TrailingReturnsSchema)).length).toBeLessThan(
      JSON.stringify(TrailingReturnsSchema).length * 0.6,
    );
  });

  it('names are exactly SPEC 4 tools', () => {
    expect(TOOLS.map((t) => t.name)).toEqual(Object.keys(MCP_TOOL_INPUT_SCHEMAS));
    expect(isToolName('getFund')).toBe(true);
    expect(isToolName('toString')).toBe(false);
    expect(SERVER_INSTRUCTIONS).toMatch(/not investment advice/);
  });
});

describe('callTool without data', () => {
  it('checks arguments first, then answers No data loaded (C24)', () => {
    const bad = callTool(null, 'getTrailingReturns', { code: 'VTI', as_of: 'yesterday' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toBe(
      'Invalid arguments for getTrailingReturns: as_of: must be a calendar date YYYY-MM-DD: input is too short (got "yesterday").',
    );
    const none = callTool(null, 'getTrailingReturns', { code: 'VTI' });
    expect(none.isError).toBe(true);
    expect(textOf(none)).toMatch(/^No data loaded/);
  });

  it('an argument the tool does not take is refused, naming the ones it does (a misspelt as_of is not ignored)', () => {
    const cases: Array<[McpToolName, Record<string, unknown>, string]> = [
      [
        'getTrailingReturns',
        { code: 'VTI', asof: '2020-01-02' },
        '"asof": not an argument of getTrailingReturns (it takes code, as_of, market)',
      ],
      [
        'getCalendarReturns',
        { code: 'VTI', yr: 2020 },
        '"yr": not an argument of getCalendarReturns (it takes code, year, market)',
      ],
      [
        'batchCalendarReturns',
        { codes: ['VTI'], years: 2020 },
        '"years": not an argument of batchCalendarReturns',
      ],
      ['searchFunds', { query: 'bond' }, '"query": not an argument of searchFunds'],
      ['getFund', { code: 'VTI', extra: 1 }, '"extra": not an argument of getFund (it takes code, market)'],
    ];
    for (const [tool, args, message] of cases) {
      const r = callTool(null, tool, args);
      expect(r.isError, tool).toBe(true);
      expect(textOf(r), tool).toContain(message);
    }
    // Every argument a tool takes is still taken.
    expect(
      textOf(callTool(null, 'getTrailingReturns', { code: 'VTI', as_of: '2020-01-02', market: 'US' })),
    ).toMatch(/^No data loaded/);
  });

  it('says the allowed values, types and limits in words an agent can act on', () => {
    expect(textOf(callTool(null, 'searchFunds', { type: 'etf' }))).toContain(
      'type: must be one of "ETF", "FUND" (got "etf")',
    );
    expect(textOf(callTool(null, 'batchCalendarReturns', { codes: ['A'], year: 'x' }))).toContain(
      'year: must be an integer or null (got "x")',
    );
    const many = Array.from({ length: 101 }, (_, i) => `C${i}`);
    expect(textOf(callTool(null, 'batchTrailingReturns', { codes: many }))).toContain(
      'codes: must have at most 100 items',
    );
  });

  it('lists every problem of a call, with nested fields', () => {
    const r = callTool(null, 'batchTrailingReturns', { codes: ['A', ''], as_of: 5 });
    expect(textOf(r)).toMatch(/codes\[1\]: must NOT have fewer than 1 characters/);
    expect(textOf(r)).toMatch(/as_of: must be a string or null \(got 5\)/);
    expect(textOf(callTool(null, 'searchFunds', undefined)).startsWith('No data loaded')).toBe(true);
  });

  it('an argument nested 20,000 deep is a tool error quoting it clipped, not a JSON-RPC internal error', () => {
    let deep: unknown = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    for (const [name, args] of [
      ['getTrailingReturns', { code: deep }],
      ['batchTrailingReturns', { codes: [deep] }],
      ['searchFunds', { q: deep }],
    ] as const) {
      const r = callTool(null, name, args);
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^Invalid arguments for \w+: .*must be a string \(got \[\[\[/);
    }
  });

  it('searchFunds trims q before its 100-character limit, as REST does (C19)', () => {
    const padded = callTool(null, 'searchFunds', { q: `${' '.repeat(150)}a` });
    expect(textOf(padded)).toMatch(/^No data loaded/);
    const long = callTool(null, 'searchFunds', { q: ` ${'a'.repeat(101)} ` });
    expect(textOf(long)).toMatch(/q: must NOT have more than 100 characters/);
  });
});
