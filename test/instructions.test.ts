/**
 * The guard against slow-downs: `fundreturns bench` counts server instructions per
 * request under valgrind's callgrind (cli/bench/instructions.ts) for latest trailing,
 * `as_of` at random dates, a batch of 100 and an MCP tools/call, and each is held to
 * the budget committed in bench/instruction-budgets.json. Instructions repeat for the
 * same code and input whatever else the machine does (the least of nine windows,
 * within about a percent from run to run), so this is not a timed test: a change that
 * adds more than the file's margin (10 %) to a case fails here, with the figures, which
 * are printed on a pass too. The counted server has had its first POST (V8 recompiles
 * every typed-array reader then) and no memory reducer (a collection timed by the
 * machine's speed), then a warm-up of 5,000 requests once V8 has compiled the path
 * (bench/reports/instructions.md). The budgets were measured on a quiet machine; runs
 * under faketime and with glibc's string functions chosen for another CPU stayed within
 * 4 % of them; a case far under its budget is said in the output.
 *
 * The universe, the requests and the counting are fixed (the file's `settings`);
 * after a deliberate change, `FUNDRETURNS_WRITE_BUDGETS=1 npx vitest run
 * test/instructions.test.ts` writes the figures measured as the new budgets.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { INSTRUCTION_WINDOWS } from '../cli/bench/instructions.js';
import type { BenchResult } from '../cli/bench/result.js';
import { cliAsync, generateAndBuild, ROOT, tempDir } from './harness.js';
import { toolForTest } from './system-tool.js';

interface Budgets {
  /** A case fails above budget × (1 + margin); below budget × (1 − margin) the output says to lower it. */
  margin: number;
  /** The universe and `fundreturns bench --instructions N` (warm-up 10 N and at least 5,000, five windows of N). */
  settings: { funds: number; instructions: number };
  /** The Node that measured the budgets (another V8 compiles to other instructions). */
  node: string;
  /** Server instructions per request (the least window) per scenario. */
  cases: Record<string, number>;
}

const BUDGETS = join(ROOT, 'bench', 'instruction-budgets.json');
const budgets = JSON.parse(readFileSync(BUDGETS, 'utf8')) as Budgets;

// Under CI=true a missing valgrind fails rather than skips: make system-deps installs it.
const hasValgrind = toolForTest('callgrind_control', 'valgrind', true);
const dir = tempDir('instructions');
let run: { status: number | null; stdout: string; stderr: string };
let result: BenchResult;

describe.skipIf(!hasValgrind)('server instructions per request against the committed budgets', () => {
  beforeAll(async () => {
    const { snapshots } = generateAndBuild(dir, budgets.settings.funds);
    run = await cliAsync(
      [
        'bench',
        '--snapshots',
        snapshots,
        '--scenarios',
        Object.keys(budgets.cases).join(','),
        '--instructions',
        String(budgets.settings.instructions),
        '--duration',
        '1',
        '--pairs',
        '1',
        '--connections',
        '4',
        '--threads',
        '1',
        '--load-threads',
        '1',
        '--out',
        join(dir, 'results'),
        '--json',
      ],
      {},
      840_000,
    );
    if (run.status !== 0) return;
    result = JSON.parse(run.stdout) as BenchResult;
    if (process.env.FUNDRETURNS_WRITE_BUDGETS === '1') {
      for (const s of result.scenarios) if (s.instructions) budgets.cases[s.name] = s.instructions.server;
      budgets.node = process.version;
      writeFileSync(BUDGETS, `${JSON.stringify(budgets, null, 2)}\n`);
    }
  }, 900_000);

  it('`fundreturns bench` counts instructions per request for each scenario, beside the baseline, and reports them', () => {
    expect(run.status, run.stderr).toBe(0);
    expect(result.instructions).toEqual({
      requests: budgets.settings.instructions,
      // Ten windows' worth, and at least 5,000: V8 is still compiling before that.
      warmup: Math.max(budgets.settings.instructions * 10, 5000),
      windows: INSTRUCTION_WINDOWS,
    });
    for (const s of result.scenarios) {
      const f = s.instructions;
      expect(f, s.name).toBeDefined();
      expect(f?.windows, s.name).toHaveLength(INSTRUCTION_WINDOWS);
      expect(f?.server, s.name).toBe(Math.min(...(f?.windows ?? [])));
      expect(f?.ratio, s.name).toBeCloseTo((f?.server ?? 0) / (f?.baseline ?? 1), 2);
    }
    const name = readdirSync(join(dir, 'results')).find((f) => f.endsWith('.md')) ?? 'missing.md';
    const md = readFileSync(join(dir, 'results', name), 'utf8');
    expect(md).toContain('| scenario | body bytes | instructions | baseline instructions | ratio |');
  });

  it('latest trailing, as_of, a batch of 100 and an MCP tools/call stay within 10 % of their budgets', () => {
    expect(result.scenarios.map((s) => s.name)).toEqual(Object.keys(budgets.cases));
    const int = (x: number) => Math.round(x).toLocaleString('en-US');
    const rows = result.scenarios.map((s) => {
      const f = s.instructions as NonNullable<typeof s.instructions>;
      const budget = budgets.cases[s.name];
      const change = f.server / budget - 1;
      const verdict =
        change > budgets.margin
          ? `OVER the ${budgets.margin * 100} % margin`
          : change < -budgets.margin
            ? 'far under: lower the budget (FUNDRETURNS_WRITE_BUDGETS=1)'
            : 'ok';
      return {
        // Far under is said, not failed: runs on a loaded machine spread by up to 20 %.
        off: change > budgets.margin,
        line: `${s.name}: ${int(f.server)} instructions per request (${f.ratio.toFixed(2)}× the baseline's; windows ${f.windows.map(int).join(', ')}), budget ${int(budget)}, ${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %: ${verdict}`,
      };
    });
    const report = [
      `server instructions per request (node ${process.version}; budgets measured on ${budgets.node}):`,
      ...rows.map((r) => `  ${r.line}`),
    ].join('\n');
    // Printed on a pass too: CI's log then holds the figures a later failure compares with.
    console.log(report);
    expect(
      rows.filter((r) => r.off),
      report,
    ).toEqual([]);
  });
});
