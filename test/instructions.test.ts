/**
 * The guard against slow-downs: server instructions per request, counted by
 * valgrind's callgrind (cli/bench/instructions.ts), for latest trailing, `as_of` at
 * random dates, a batch of 100 and an MCP tools/call, against the budgets committed in
 * bench/instruction-budgets.json. Instructions repeat for the same code and input
 * whatever else the machine does (the least of a few windows, within about a percent),
 * so this is not a timed test: a change that adds more than the file's margin (10 %)
 * to a case fails here, with the figures. A change that makes a case much cheaper is
 * told to lower its budget, so the margin keeps guarding the new cost.
 *
 * The universe, the requests and the counting settings are fixed (the file's
 * `settings`); after a deliberate change, `FUNDRETURNS_WRITE_BUDGETS=1 npx vitest run
 * test/instructions.test.ts` writes the figures measured as the new budgets.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountedCase, casesOf, countServer, instructionCases } from '../cli/bench/instructions.js';
import { fetchUniverse, scenarioRequests } from '../cli/bench/workload.js';
import { CLI, generateAndBuild, ROOT, setupAccess, tempDir, testEnv } from './harness.js';
import { toolForTest } from './system-tool.js';

interface Budgets {
  /** A case fails when it measures more than budget × (1 + margin). */
  margin: number;
  /** Below budget × (1 − margin) the budget is too loose to guard anything: lower it. */
  settings: { funds: number; warmup: number; requests: number; windows: number };
  node: string;
  /** Server instructions per request (the least window) per case. */
  cases: Record<string, number>;
}

const BUDGETS = join(ROOT, 'bench', 'instruction-budgets.json');
const budgets = JSON.parse(readFileSync(BUDGETS, 'utf8')) as Budgets;

// Under CI=true a missing valgrind fails rather than skips: make system-deps installs it.
const hasValgrind = toolForTest('callgrind_control', 'valgrind', true);
const dir = tempDir('instructions');
let counted: CountedCase[] = [];

describe.skipIf(!hasValgrind)('server instructions per request against the committed budgets', () => {
  beforeAll(async () => {
    const { snapshots } = generateAndBuild(dir, budgets.settings.funds);
    const access = setupAccess(dir);
    const dumps = mkdtempSync(join(tmpdir(), 'fr-callgrind-test-'));
    try {
      counted = await countServer(
        (port) => [
          CLI,
          'serve',
          '--port',
          String(port),
          '--threads',
          '1',
          '--snapshots',
          snapshots,
          '--access-log-sample',
          '0',
          ...access.flags,
        ],
        /serving on http/,
        async (url) =>
          casesOf(
            instructionCases(Object.keys(budgets.cases)),
            scenarioRequests(await fetchUniverse(url, access.headers)),
          ),
        budgets.settings,
        dumps,
        access.headers,
        undefined,
        testEnv(),
      );
    } finally {
      rmSync(dumps, { recursive: true, force: true });
    }
    if (process.env.FUNDRETURNS_WRITE_BUDGETS === '1') {
      for (const c of counted) budgets.cases[c.name] = Math.round(Math.min(...c.windows));
      budgets.node = process.version;
      writeFileSync(BUDGETS, `${JSON.stringify(budgets, null, 2)}\n`);
    }
  }, 900_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('latest trailing, as_of, a batch of 100 and an MCP tools/call stay within 10 % of their budgets', () => {
    expect(counted.map((c) => c.name)).toEqual(Object.keys(budgets.cases));
    const int = (x: number) => Math.round(x).toLocaleString('en-US');
    const rows = counted.map((c) => {
      const least = Math.min(...c.windows);
      const budget = budgets.cases[c.name];
      const change = least / budget - 1;
      const verdict =
        change > budgets.margin
          ? `OVER the ${budgets.margin * 100} % margin`
          : change < -budgets.margin
            ? 'far under: lower the budget (FUNDRETURNS_WRITE_BUDGETS=1)'
            : 'ok';
      return {
        over: verdict !== 'ok',
        line: `${c.name}: ${int(least)} instructions per request (windows ${c.windows.map(int).join(', ')}), budget ${int(budget)}, ${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %: ${verdict}`,
      };
    });
    const report = [
      `server instructions per request (node ${process.version}; budgets measured on ${budgets.node}):`,
      ...rows.map((r) => `  ${r.line}`),
    ].join('\n');
    expect(
      rows.filter((r) => r.over),
      report,
    ).toEqual([]);
  });
});
