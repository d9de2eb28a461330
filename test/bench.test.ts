/**
 * `fundreturns bench` end to end, kept light (a 30-fund universe, 1 s runs, 4
 * connections, one pair): it writes a report, a JSON file and a chart that agree,
 * and `bench compare` passes an equal run and flags a planted regression.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchResult } from '../cli/bench/result.js';
import {
  cli,
  cliAsync,
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  startServe,
  tempDir,
} from './harness.js';
import { toolForTest } from './system-tool.js';

// Under CI=true a missing wrk fails rather than skips: make system-deps installs it.
const hasWrk = toolForTest('wrk', 'wrk', true);
const dir = tempDir('bench');
let snapshots: string;
let run: { status: number | null; stdout: string; stderr: string };
let files: string[];
let result: BenchResult;
let before: string[];
const out = join(dir, 'results');
/** The bench's TMPDIR, where its scratch store and snapshot links go. */
const scratch = join(dir, 'tmp');

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;

describe.skipIf(!hasWrk)('fundreturns bench against a local test server', () => {
  beforeAll(async () => {
    ({ snapshots } = generateAndBuild(dir, 30));
    before = readdirSync(snapshots)
      .sort()
      .concat(readFileSync(join(snapshots, 'CURRENT'), 'utf8'));
    mkdirSync(scratch);
    run = await cliAsync(
      [
        'bench',
        '--snapshots',
        snapshots,
        '--scenarios',
        'trailing,batch-calendar,mcp,hot-swap,cold-start',
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
        // Counted in test/instructions.test.ts, which holds the figures to budgets.
        '--instructions',
        '0',
        '--out',
        out,
      ],
      { TMPDIR: scratch },
    );
    files = readdirSync(out).sort();
    const json = files.find((f) => f.endsWith('.json'));
    result = JSON.parse(readFileSync(join(out, json ?? 'missing.json'), 'utf8')) as BenchResult;
  }, 90_000);

  it('measures each asked scenario beside the baseline, every figure with its ratio, and no request failed', () => {
    expect(run.status, run.stderr).toBe(0);
    expect(result.mode).toBe('local');
    expect(result.universe.funds).toBe(30);
    expect(result.scenarios.map((s) => s.name)).toEqual(['trailing', 'batch-calendar', 'mcp']);
    for (const s of result.scenarios) {
      expect(s.ours.requests, s.name).toBeGreaterThan(0);
      expect(s.ours.errors + s.ours.non2xx, s.name).toBe(0);
      expect(s.baseline?.rps, s.name).toBeGreaterThan(0);
      expect(s.ratio, s.name).toBeCloseTo(s.ours.rps / (s.baseline?.rps ?? 0), 9);
    }
  });

  it('swaps the snapshot twice under load without a failed request, and times a cold start', () => {
    expect(result.hot_swap).toMatchObject({ swaps: 2, errors: 0, non2xx: 0 });
    // /healthz saw the second snapshot and the first again.
    expect(new Set(result.hot_swap?.served).size).toBe(2);
    expect(result.cold_start?.ms).toBeGreaterThan(0);
    expect(result.cold_start?.rss_mib).toBeGreaterThan(0);
  });

  it('swaps in a private directory of links: the served snapshots directory is untouched, the scratch removed', () => {
    expect(
      readdirSync(snapshots)
        .sort()
        .concat(readFileSync(join(snapshots, 'CURRENT'), 'utf8')),
    ).toEqual(before);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('writes a Markdown report, the JSON and an SVG chart named by date and commit, whose numbers match the JSON', () => {
    const base = files[0].replace(/\.\w+$/, '');
    expect(base).toMatch(/^2026-11-23T\d{4}-[0-9a-f]{7,}(-dirty)?$/);
    expect(files).toEqual([`${base}.json`, `${base}.md`, `${base}.svg`]);
    const md = readFileSync(join(out, `${base}.md`), 'utf8');
    expect(run.stdout.trim()).toBe(md.trim());
    for (const s of result.scenarios)
      expect(md).toContain(
        `| ${s.label} | ${int(s.ours.rps)} | ${int(s.baseline?.rps ?? 0)} | ${pct(s.ratio ?? 0)} |`,
      );
    expect(md).toContain(
      `CURRENT flipped 2 times during latest-trailing load; ${result.hot_swap?.requests.toLocaleString('en-US')} requests, 0 socket errors, 0 non-2xx`,
    );
    const svg = readFileSync(join(out, `${base}.svg`), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>/);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    const bar = (cls: string, name: string) =>
      Number(new RegExp(`class="${cls}" data-scenario="${name}" data-value="([^"]+)"`).exec(svg)?.[1]);
    for (const s of result.scenarios) {
      expect(bar('throughput', s.name)).toBe(s.ratio);
      expect(bar('p50', s.name)).toBe(s.ours.p50ms);
      expect(bar('p99', s.name)).toBe(s.ours.p99ms);
      expect(svg).toContain(`>${pct(s.ratio ?? 0)}</text>`);
    }
  });

  it('bench compare passes a run against itself and flags a planted regression (exit 1)', () => {
    const a = join(out, files[0]);
    const same = cli(['bench', 'compare', a, a]);
    expect(same.status, same.stderr).toBe(0);
    expect(same.stdout).toContain('No regression beyond the measured noise.');
    const slower = structuredClone(result);
    const mcp = slower.scenarios.find((s) => s.name === 'mcp')!;
    mcp.ratio = (mcp.ratio ?? 0) * 0.5;
    const b = join(dir, 'slower.json');
    writeFileSync(b, JSON.stringify(slower));
    const flagged = cli(['bench', 'compare', a, b]);
    expect(flagged.status).toBe(1);
    expect(flagged.stdout).toMatch(/\| mcp \| [\d.]+ % \| [\d.]+ % \| -50\.0 % \| [\d.]+ % \| REGRESSION \|/);
    expect(flagged.stdout).toMatch(/\| trailing \|.*\| ok \|/);
  });

  it("bench report makes the same Markdown and chart again from a run's JSON alone", () => {
    const again = tempDir('bench-report');
    const json = files.find((f) => f.endsWith('.json')) ?? 'missing.json';
    copyFileSync(join(out, json), join(again, json));
    const r = cli(['bench', 'report', join(again, json)]);
    expect(r.status, r.stderr).toBe(0);
    for (const ext of ['.md', '.svg']) {
      const name = json.replace(/\.json$/, ext);
      expect(readFileSync(join(again, name), 'utf8')).toBe(readFileSync(join(out, name), 'utf8'));
    }
  });
});

// autocannon here (a dependency, so always there): the fallback when wrk is not installed.
describe('fundreturns bench --url against a running deployment, with autocannon', () => {
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('reports absolute figures from the served universe, each run listed, no baseline and no local-only scenarios', async () => {
    const d = tempDir('bench-url');
    const { snapshots: snaps } = generateAndBuild(d, 20);
    const access = setupAccess(d);
    server = await startServe([...access.flags, '--snapshots', snaps, '--threads', '1']);
    const results = join(d, 'results');
    const r = await cliAsync([
      'bench',
      '--url',
      server.url,
      '--key',
      access.key,
      '--scenarios',
      'as-of',
      '--duration',
      '1',
      '--pairs',
      '2',
      '--connections',
      '2',
      '--tool',
      'autocannon',
      '--out',
      results,
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout) as BenchResult;
    expect(run).toMatchObject({
      mode: 'url',
      target: server.url,
      hot_swap: null,
      cold_start: null,
      rss_mib: null,
    });
    expect(run.universe.funds).toBe(20);
    const [s] = run.scenarios;
    expect(s).toMatchObject({ name: 'as-of', ratio: null, baseline: null });
    expect(s.runs).toHaveLength(2);
    // Dates drawn within each fund's history: every as_of lookup finds a row.
    expect(s.ours.requests).toBeGreaterThan(0);
    expect(s.ours.errors + s.ours.non2xx).toBe(0);
    const md = readFileSync(join(results, readdirSync(results).find((f) => f.endsWith('.md')) ?? ''), 'utf8');
    expect(md).toContain(`| ${s.label} | ${int(s.ours.rps)} | ${s.runs.map((x) => int(x.rps)).join(', ')} |`);
  });
});

describe('fundreturns bench usage', () => {
  it('a key without a URL, a bad scenario or a file that is not a run is refused with a clear error', () => {
    const key = cli(['bench', '--key', 'k']);
    expect(key.status).toBe(2);
    expect(key.stderr).toContain('bench: --key goes with --url');
    const bad = cli(['bench', '--scenarios', 'trailing,nope']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('bench: no scenario "nope"');
    const junk = join(tempDir('bench-junk'), 'x.json');
    writeFileSync(junk, '{"hello":1}');
    const notRun = cli(['bench', 'compare', junk, junk]);
    expect(notRun.status).toBe(1);
    expect(notRun.stderr).toContain('is not a fundreturns bench JSON file');
  });
});
