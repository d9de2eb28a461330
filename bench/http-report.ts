/**
 * The HTTP benchmark's report (bench/reports/http.md), from the figures one run of
 * bench/http.bench.ts measured: each case against the baseline, the paired rounds,
 * where our lookups lie on the shaped baseline's curve, Redis mode, hot swap and RSS.
 */
import type { WrkResult } from './http-wrk.js';

export interface HttpFigures {
  snapshots: string;
  threads: number;
  connections: number;
  seconds: number;
  /** The served snapshot's manifest counts and its bytes on disk. */
  counts: { funds: number; observations: number };
  diskBytes: number;
  /** The baseline's GET (fixed small body) and POST (fixed `batchBytes` body) runs. */
  baseGet: WrkResult;
  basePost: WrkResult;
  batchBytes: number;
  /** Our cases by name. */
  results: Record<string, WrkResult>;
  /** Per single-lookup case, ours over the baseline in each paired round. */
  paired: Record<string, number[]>;
  pairs: number;
  pairSeconds: number;
  /** The baseline sending our latest-trailing bytes (`bodyBytes` of body) with `spins[i]` ns of busy work: `shaped[i]`. */
  bodyBytes: number;
  spins: readonly number[];
  shaped: readonly WrkResult[];
  redisRow: string;
  swap: WrkResult | null;
  rssLoaded: number;
  rssAfterLoad: number;
  rssAfterSwap: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One case's paired rounds, each in percent, and their median. */
export const pairedLine = (paired: Record<string, number[]>, name: string) =>
  `${paired[name].map((x) => `${(x * 100).toFixed(0)} %`).join(', ')} (median ${(median(paired[name]) * 100).toFixed(0)} %)`;

const pct = (x: number, b: number) => `${((x / b) * 100).toFixed(0)} %`;

/**
 * Where a throughput lies on the shaped baseline's curve: the busy work (ns) at which
 * the baseline sending our bytes would reach it, by linear interpolation; null
 * outside the curve.
 */
function workAt(f: HttpFigures, rps: number): number | null {
  const { shaped, spins } = f;
  for (let i = 1; i < shaped.length; i++) {
    const [a, b] = [shaped[i - 1].rps, shaped[i].rps];
    if ((a - rps) * (b - rps) <= 0 && a !== b)
      return spins[i - 1] + ((a - rps) / (a - b)) * (spins[i] - spins[i - 1]);
  }
  return null;
}
const ns = (v: number | null) => (v === null ? 'outside the measured curve' : `${(v / 1000).toFixed(2)} µs`);

/** What a ratio target leaves for a server's own work: the shaped baseline's table and our place on it. */
function budget(f: HttpFigures): string {
  const baseRps = f.baseGet.rps;
  return [
    `Our exact bytes from the baseline (a latest-trailing answer: the same ${f.bodyBytes}-byte body and header lines, ` +
      "with busy work added per request), to show what a ratio target leaves for a server's own work on this machine:",
    '',
    '| busy work per request | req/s | of baseline | server CPU µs/req | preempted /req |',
    '|---|---|---|---|---|',
    ...f.shaped.map(
      (r, i) =>
        `| ${(f.spins[i] / 1000).toFixed(1)} µs | ${Math.round(r.rps).toLocaleString('en-US')} | ${pct(r.rps, baseRps)} | ${r.cpuUs.toFixed(1)} | ${r.preemptions.toFixed(3)} |`,
    ),
    '',
    `80 % of the baseline is reached with ${ns(workAt(f, 0.8 * baseRps))} of work per request on top of sending the bytes; ` +
      `our latest-trailing lookup runs like ${ns(workAt(f, f.results.trailing.rps))} of it, fund metadata like ${ns(workAt(f, f.results.fund.rps))}.`,
  ].join('\n');
}

const row = (label: string, r: WrkResult, b: number, target: string) =>
  `| ${label} | ${Math.round(r.rps).toLocaleString('en-US')} | ${pct(r.rps, b)} | ${r.cpuUs.toFixed(1)} | ${r.preemptions.toFixed(3)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} | ${r.errors + r.non2xx} | ${target} |`;

/** The report's Markdown. */
export function httpReport(f: HttpFigures): string {
  const { snapshots, threads, connections, seconds, results, baseGet, basePost, swap, diskBytes } = f;
  const baseRps = baseGet.rps;
  const limit = 1.5 * (diskBytes / 2 ** 20) + 200;
  return [
    '# HTTP benchmark',
    '',
    `Run: \`npm run build && npx tsx bench/http.bench.ts --snapshots ${snapshots}${threads === 2 ? '' : ` --threads ${threads}`}\` on ${new Date().toISOString().slice(0, 10)}; ` +
      `wrk -t2 -c${connections} -d${seconds}s on loopback; server and baseline with ${threads} worker thread${threads === 1 ? '' : 's'}; ` +
      `snapshot ${f.counts.funds} funds, ${f.counts.observations.toLocaleString('en-US')} observations. ` +
      'Every request carries an API key and passes auth and limits (embedded store, limits set beyond reach); ' +
      'access logs as by default (one line in 1,000 requests). ' +
      'The 2-core machine runs wrk and the server together, so absolute figures are low; ratios are what compare.',
    '',
    `Baseline (trivial uWS, fixed small body): ${Math.round(baseRps).toLocaleString('en-US')} req/s (p99 ${baseGet.p99ms.toFixed(2)} ms, ` +
      `server CPU ${baseGet.cpuUs.toFixed(1)} µs and ${baseGet.preemptions.toFixed(3)} preemptions per request); fixed ${f.batchBytes}-byte POST answer: ` +
      `${Math.round(basePost.rps).toLocaleString('en-US')} req/s (${basePost.cpuUs.toFixed(1)} µs). Server CPU is the user + system ` +
      "time of all the server's threads over a run, per request: the kernel's loopback work is most of it, and it is " +
      'steadier than req/s on a machine that wrk shares.',
    '',
    '| case | req/s | of baseline | server CPU µs/req | preempted /req | p50 ms | p99 ms | errors | target |',
    '|---|---|---|---|---|---|---|---|---|',
    row('latest trailing, one fund', results.trailing, baseRps, '≥ 80 %, p99 < 5 ms'),
    row('fund metadata', results.fund, baseRps, '≥ 80 %, p99 < 5 ms'),
    row('default calendar year', results.calendar, baseRps, ''),
    row('trailing as_of (random dates)', results.asOf, baseRps, '≥ 70 %'),
    row('batch of 100 latest (vs same-size fixed POST)', results.batch, basePost.rps, '≥ 60 %'),
    row('q search, limit=10', results.search, baseRps, '≥ 50 %'),
    row('q search, default limit 100', results.search100, baseRps, '(bigger bodies)'),
    '',
    `The single lookups again in ${f.pairs} paired rounds (the baseline then ours on the same script, ${f.pairSeconds} s each, ` +
      'back to back, so both see the same machine): ' +
      `latest trailing ${pairedLine(f.paired, 'trailing')}; fund metadata ${pairedLine(f.paired, 'fund')}.`,
    '',
    budget(f),
    '',
    f.redisRow,
    '',
    swap
      ? `Hot swap under load (CURRENT flipped twice during 15 s of wrk on latest trailing): ${swap.requests.toLocaleString('en-US')} requests, ${swap.errors} socket errors, ${swap.non2xx} non-2xx.`
      : 'Hot swap under load: skipped (only one snapshot in the directory).',
    '',
    `RSS with the snapshot loaded (${threads} thread${threads === 1 ? '' : 's'}): ${f.rssLoaded.toFixed(0)} MiB after start, ${f.rssAfterLoad.toFixed(0)} MiB after the load runs, ` +
      `${Number.isNaN(f.rssAfterSwap) ? 'n/a' : `${f.rssAfterSwap.toFixed(0)} MiB`} once the swaps are done; snapshot on disk ${(diskBytes / 2 ** 20).toFixed(0)} MiB; ` +
      `limit 1.5 × disk + 200 MiB = ${limit.toFixed(0)} MiB.`,
  ].join('\n');
}
