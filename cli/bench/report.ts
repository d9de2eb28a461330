/**
 * A bench run as files people read: a Markdown table, the JSON it is made from (what
 * `bench compare` reads) and an SVG chart a browser opens, all named by date and commit.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult, ScenarioResult } from './result.js';

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const msText = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

/** `2026-11-26T1530-093f0cb`: sorts by time, says which code ran. */
function runName(r: BenchResult): string {
  const t = r.started_at.replace(/:\d\d\.\d+Z$/, '').replace(':', '');
  return `${t}-${r.commit ?? 'nocommit'}`;
}

export function markdownReport(r: BenchResult): string {
  const local = r.mode === 'local';
  const head = local
    ? '| scenario | req/s | baseline req/s | ratio | ratios of the pairs | spread | p50 ms | p90 ms | p99 ms | errors |'
    : '| scenario | req/s | runs req/s | spread | p50 ms | p90 ms | p99 ms | errors |';
  const rows = r.scenarios.map((s) =>
    local
      ? `| ${s.label} | ${int(s.ours.rps)} | ${s.baseline ? int(s.baseline.rps) : 'n/a'} | ${s.ratio === null ? 'n/a' : pct(s.ratio)} | ${s.runs.map((x) => (x.ratio === null ? '-' : pct(x.ratio))).join(', ')} | ${pct(s.spread)} | ${msText(s.ours.p50ms)} | ${msText(s.ours.p90ms)} | ${msText(s.ours.p99ms)} | ${s.ours.errors + s.ours.non2xx} |`
      : `| ${s.label} | ${int(s.ours.rps)} | ${s.runs.map((x) => int(x.rps)).join(', ')} | ${pct(s.spread)} | ${msText(s.ours.p50ms)} | ${msText(s.ours.p90ms)} | ${msText(s.ours.p99ms)} | ${s.ours.errors + s.ours.non2xx} |`,
  );
  const sep = `|${head
    .split('|')
    .slice(1, -1)
    .map(() => '---')
    .join('|')}|`;
  const h = r.hot_swap;
  const c = r.cold_start;
  const failed = r.scenarios.filter((s) => s.ours.errors + s.ours.non2xx > 0).map((s) => s.name);
  return [
    `# fundreturns bench ${runName(r)}`,
    '',
    `${local ? `Local server on \`${r.target}\`` : `Deployment ${r.target}`} (${r.universe.funds.toLocaleString('en-US')} funds${r.universe.snapshot ? `, snapshot ${r.universe.snapshot}` : ''}); ` +
      `${r.tool}, ${r.settings.connections} connections, ${r.settings.load_threads} load thread${r.settings.load_threads === 1 ? '' : 's'}, ` +
      `${r.settings.seconds} s per run, ${r.settings.pairs} ${local ? 'alternating pairs (baseline, then ours)' : 'runs'} per scenario` +
      `${local ? `; server and baseline with ${r.settings.server_threads} thread${r.settings.server_threads === 1 ? '' : 's'}` : ''}. ` +
      `Commit ${r.commit ?? 'unknown'}, ${r.started_at}, ${r.machine.cpus} CPUs, load average ${r.machine.loadavg.join(' ')} at the end, Node ${r.machine.node}; ${r.seconds_total} s in all.`,
    '',
    local
      ? 'Ratio: our throughput over the trivial uWS baseline (a fixed small body for GET, a fixed body the size of a batch answer for POST) on the same requests, the median of the pairs; spread: (max − min) / median of the pairs, the run-to-run noise `bench compare` allows for.'
      : 'Absolute figures against the deployment (no baseline); spread: (max − min) / median of the runs.',
    '',
    head,
    sep,
    ...rows,
    '',
    ...instructionLines(r),
    h === null
      ? `Hot swap under load: not run${local ? '' : ' (a local server only)'}.`
      : `Hot swap under load: CURRENT flipped ${h.swaps} times during latest-trailing load; ${h.requests.toLocaleString('en-US')} requests, ${h.errors} socket errors, ${h.non2xx} non-2xx; served ${h.served.join(' → ') || 'n/a'}; ${int(h.rps)} req/s, p99 ${msText(h.p99ms)} ms.`,
    c === null
      ? `Cold start: not run${local ? '' : ' (a local server only)'}.`
      : `Cold start: ${c.ms.toLocaleString('en-US')} ms from process start to the first answered lookup, RSS ${c.rss_mib} MiB then.`,
    ...(r.rss_mib === null ? [] : [`Server RSS after the load runs: ${r.rss_mib} MiB.`]),
    r.scenarios.some((s) => s.ours.capped || s.baseline?.capped)
      ? `WARNING: some runs reached --max-requests (${r.settings.max_requests}) before their duration ended; their req/s understate the server (${r.scenarios
          .filter((s) => s.ours.capped || s.baseline?.capped)
          .map((s) => s.name)
          .join(', ')}).`
      : '',
    ...(failed.length === 0
      ? []
      : [
          `Failed requests (socket errors or answers other than 2xx/3xx) in ${failed.join(', ')}: their figures include refused answers; against a deployment, 429s mean the key's plan limits the run.`,
        ]),
  ]
    .filter((line, k, all) => line !== '' || (k > 0 && all[k - 1] !== ''))
    .join('\n')
    .trimEnd()
    .concat('\n');
}

/**
 * Server instructions per request (callgrind), when the run counted them: the
 * figures that repeat whatever else the machine does.
 */
function instructionLines(r: BenchResult): string[] {
  const counted = r.scenarios.filter((s) => s.instructions !== undefined);
  const how = r.instructions;
  if (counted.length === 0 || how === undefined || how === null)
    return [
      r.mode === 'local'
        ? 'Instructions per request: not counted (valgrind is not installed, or --instructions 0).'
        : '',
      '',
    ];
  return [
    `Server instructions per request (valgrind's callgrind, one server thread, ${int(how.warmup)} requests of warm-up, the least of ${how.windows} windows of ${int(how.requests)}; a batch a tenth and a quarter of those), beside the trivial uWS server's for a body of the same size:`,
    '',
    '| scenario | body bytes | instructions | baseline instructions | ratio |',
    '|---|---|---|---|---|',
    ...counted.map((s) => {
      const f = s.instructions as NonNullable<ScenarioResult['instructions']>;
      return `| ${s.label} | ${int(f.body_bytes)} | ${int(f.server)} | ${int(f.baseline)} | ${f.ratio.toFixed(2)}× |`;
    }),
    '',
  ];
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * Two panels per scenario row: throughput (ratio to the baseline, or req/s against a
 * URL) and latency p50/p99 on a log scale. Each bar's `data-value` carries the JSON
 * figure it draws.
 */
function svgChart(r: BenchResult): string {
  const ratios = r.mode === 'local';
  const rowH = 34;
  const top = 64;
  const labelW = 210;
  const panelW = 330;
  const gap = 70;
  const width = labelW + panelW * 2 + gap + 90;
  const bottom = top + rowH * r.scenarios.length;
  const height = bottom + 40;
  const value = (s: ScenarioResult) => (ratios ? (s.ratio ?? 0) : s.ours.rps);
  const maxV = Math.max(ratios ? 1 : 1, ...r.scenarios.map(value));
  // Whole decades, so a p50 of 0.3 ms and a p99 of 100 ms both show.
  const finite = r.scenarios
    .flatMap((s) => [s.ours.p50ms, s.ours.p99ms])
    .filter((v) => Number.isFinite(v) && v > 0);
  const lo = Math.floor(Math.log10(Math.min(1, ...finite)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(1, ...finite))));
  const msX = (v: number) => (Number.isFinite(v) && v > 0 ? (panelW * (Math.log10(v) - lo)) / (hi - lo) : 0);
  const x0 = labelW;
  const x1 = labelW + panelW + gap;
  const f1 = (v: number) => v.toFixed(1);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>fundreturns bench ${esc(runName(r))}</title>`,
    '<rect width="100%" height="100%" fill="#fff"/>',
    `<text x="10" y="20" font-size="15" font-weight="bold">fundreturns bench ${esc(runName(r))}</text>`,
    `<text x="10" y="38" fill="#555">${esc(`${r.universe.funds} funds, ${r.tool} ${r.settings.connections} connections, ${r.settings.seconds} s × ${r.settings.pairs}${ratios ? ' pairs' : ' runs'}`)}</text>`,
    `<text x="${x0}" y="${top - 8}" font-weight="bold">${ratios ? 'throughput, share of the uWS baseline' : 'throughput, req/s'}</text>`,
    `<text x="${x1}" y="${top - 8}" font-weight="bold">latency, ms, log scale (p50 dark, p99 light)</text>`,
  ];
  for (let d = lo; d <= hi; d++) {
    const x = f1(x1 + msX(10 ** d));
    const label = d >= 0 ? String(10 ** d) : (10 ** d).toFixed(-d);
    parts.push(
      `<line x1="${x}" y1="${top}" x2="${x}" y2="${bottom}" stroke="#ddd"/>`,
      `<text x="${x}" y="${bottom + 14}" text-anchor="middle" fill="#555">${label}</text>`,
    );
  }
  if (ratios) {
    const x = f1(x0 + panelW / maxV);
    parts.push(
      `<line x1="${x}" y1="${top}" x2="${x}" y2="${bottom}" stroke="#999" stroke-dasharray="4 3"/>`,
      `<text x="${x}" y="${bottom + 14}" text-anchor="middle" fill="#555">100 %</text>`,
    );
  }
  r.scenarios.forEach((s, i) => {
    const y = top + i * rowH;
    const v = value(s);
    const w = (panelW * v) / maxV;
    const shown = ratios ? (s.ratio === null ? 'n/a' : pct(s.ratio)) : `${int(s.ours.rps)}/s`;
    const w99 = msX(s.ours.p99ms);
    const w50 = msX(s.ours.p50ms);
    parts.push(
      `<text x="${labelW - 8}" y="${y + 20}" text-anchor="end">${esc(s.label)}</text>`,
      `<rect class="throughput" data-scenario="${s.name}" data-value="${v}" x="${x0}" y="${y + 6}" width="${f1(w)}" height="20" fill="#3b7dd8"/>`,
      `<text x="${f1(x0 + w + 4)}" y="${y + 20}">${shown}</text>`,
      `<rect class="p99" data-scenario="${s.name}" data-value="${s.ours.p99ms}" x="${x1}" y="${y + 6}" width="${f1(w99)}" height="20" fill="#f2a65a"/>`,
      `<rect class="p50" data-scenario="${s.name}" data-value="${s.ours.p50ms}" x="${x1}" y="${y + 11}" width="${f1(w50)}" height="10" fill="#b5531c"/>`,
      `<text x="${f1(x1 + Math.max(w99, w50) + 4)}" y="${y + 20}">${msText(s.ours.p50ms)} / ${msText(s.ours.p99ms)}</text>`,
    );
  });
  parts.push('</svg>', '');
  return parts.join('\n');
}

/** Make NAME.md and NAME.svg again beside a run's NAME.json (after the report's code changed). */
export function rerender(r: BenchResult, jsonPath: string): { md: string; svg: string } {
  const base = jsonPath.replace(/\.json$/, '');
  const paths = { md: `${base}.md`, svg: `${base}.svg` };
  writeFileSync(paths.md, markdownReport(r));
  writeFileSync(paths.svg, svgChart(r));
  return paths;
}

/** Write NAME.md, NAME.json and NAME.svg into `dir`; returns their paths. */
export function writeReports(r: BenchResult, dir: string): { md: string; json: string; svg: string } {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, runName(r));
  const paths = { md: `${base}.md`, json: `${base}.json`, svg: `${base}.svg` };
  writeFileSync(paths.json, `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(paths.md, markdownReport(r));
  writeFileSync(paths.svg, svgChart(r));
  return paths;
}
