/**
 * The account dashboard's targets, measured on loopback:
 *  1. /v1 throughput (single lookup and batch of 100) with the dashboard on and a
 *     person browsing it is the same as with it off: three alternating pairs, the
 *     ratio on/off of each, and their median.
 *  2. A dashboard page answers in under 50 ms at p99 with 10 concurrent users
 *     (autocannon, 10 connections, each a signed-in person's session).
 *
 *   npm run build && npx tsx bench/dashboard.bench.ts --snapshots /tmp/fr-bench/snapshots [--seconds 5] [--pairs 3]
 *
 * Needs wrk (apt-get install -y wrk) and a built snapshot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadResult, runLoad } from '../cli/bench/load.js';
import { freePort, runCli, type Started, startProcess } from '../cli/bench/processes.js';
import { signedInCookie } from './dashboard-session.js';
import { benchArgs, DEFAULT_SNAPSHOTS } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = benchArgs();
const snapshots = args.get('snapshots') ?? DEFAULT_SNAPSHOTS;
const seconds = Number(args.get('seconds') ?? 5);
const pairs = Number(args.get('pairs') ?? 3);
const work = `/tmp/fr-dashboard-bench-${process.pid}`;
mkdirSync(work, { recursive: true });
const store = join(work, 'store');
const plans = join(work, 'plans.json');
writeFileSync(plans, JSON.stringify({ business: { burst: 1e9, monthly: 1e9 } }));
runCli(['accounts', 'create', 'bench', '--plan', 'business', '--store', store]);
const key = (JSON.parse(runCli(['keys', 'create', 'bench', '--json', '--store', store])) as { key: string })
  .key;

/** Every server this run started: none outlives it, even when a step throws. */
const running = new Set<Started>();
process.on('exit', () => {
  for (const r of running) r.child.kill('SIGKILL');
});

async function serve(dashboard: 'on' | 'off'): Promise<{ s: Started; url: string }> {
  const port = await freePort();
  const s = await startProcess(
    [
      join(root, 'bin/fundreturns.js'),
      'serve',
      '--port',
      String(port),
      '--threads',
      '2',
      '--snapshots',
      snapshots,
      '--store',
      store,
      '--plans',
      plans,
      '--access-log-sample',
      '0',
      '--dashboard',
      dashboard,
    ],
    /serving on/,
  );
  running.add(s);
  const stop = s.stop;
  s.stop = async () => {
    await stop();
    running.delete(s);
  };
  return { s, url: `http://127.0.0.1:${port}` };
}

const fundCodes: string[] = await (async () => {
  const { s, url } = await serve('off');
  const r = await fetch(`${url}/v1/funds?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  if (r.status !== 200) throw new Error(`/v1/funds answered ${r.status}: ${await r.text()}`);
  const body = (await r.json()) as { data?: Array<{ code: string }>; items?: Array<{ code: string }> };
  await s.stop();
  return (body.data ?? body.items ?? []).map((f) => f.code);
})();
if (fundCodes.length === 0) throw new Error('no fund codes from /v1/funds');

const CASES = {
  trailing: fundCodes.map((c) => ({ method: 'GET' as const, path: `/v1/funds/${c}/trailing-returns` })),
  batch: [
    {
      method: 'POST' as const,
      path: '/v1/trailing-returns/batch',
      body: JSON.stringify({ codes: fundCodes.slice(0, 100) }),
    },
  ],
};

async function measure(url: string, name: keyof typeof CASES): Promise<LoadResult> {
  return await runLoad('wrk', {
    url,
    requests: CASES[name],
    headers: { Authorization: `Bearer ${key}` },
    seconds,
    connections: 64,
    threads: 2,
    maxRequests: 50_000_000,
    workDir: work,
    name: `dash-${name}`,
    allowRemote: false,
  });
}

/** A person reading their usage and keys pages, one page every 200 ms, until stopped. */
function browse(url: string, cookie: string): () => Promise<number> {
  let stop = false;
  let pages = 0;
  const loop = (async () => {
    const paths = ['/account', '/account/usage', '/account/keys', '/account/plans'];
    for (let i = 0; !stop && i < 10_000; i++) {
      const r = await fetch(url + paths[i % paths.length], { headers: { cookie } });
      await r.text();
      if (r.status === 200) pages++;
      await new Promise((res) => setTimeout(res, 200));
    }
  })();
  return async () => {
    stop = true;
    await loop;
    return pages;
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const report: string[] = [];
for (const name of ['trailing', 'batch'] as const) {
  const ratios: number[] = [];
  for (let p = 0; p < pairs; p++) {
    const off = await serve('off');
    const a = await measure(off.url, name);
    await off.s.stop();
    const on = await serve('on');
    const cookie = await signedInCookie(on.url, on.s, `browser${p}-${name}@example.test`);
    const stopBrowsing = browse(on.url, cookie);
    const b = await measure(on.url, name);
    const pages = await stopBrowsing();
    await on.s.stop();
    // A wrong path or body would measure 404s: every answer must be a 200.
    if (a.non2xx + b.non2xx + a.errors + b.errors > 0)
      throw new Error(`${name}: ${a.non2xx + b.non2xx} answers not 2xx, ${a.errors + b.errors} errors`);
    ratios.push(b.rps / a.rps);
    report.push(
      `${name} pair ${p + 1}: off ${a.rps.toFixed(0)} req/s, on+browsing ${b.rps.toFixed(0)} req/s (${pages} pages), ratio ${(b.rps / a.rps).toFixed(3)}`,
    );
    console.log(report[report.length - 1]);
  }
  report.push(`${name}: median ratio on/off ${median(ratios).toFixed(3)}`);
  console.log(report[report.length - 1]);
}

// Target 2: ten connections at once on a signed-in person's pages (each page reads the
// store, checks the session and renders: the work of ten people browsing at once).
{
  const on = await serve('on');
  const cookie = await signedInCookie(on.url, on.s, 'p99@example.test');
  for (const path of ['/account', '/account/usage', '/account/keys', '/account/plans']) {
    const r = await runLoad('autocannon', {
      url: on.url,
      requests: [{ method: 'GET', path }],
      headers: { cookie },
      seconds,
      connections: 10,
      threads: 1,
      maxRequests: 200_000,
      workDir: work,
      name: 'dash-page',
      allowRemote: false,
    });
    report.push(
      `${path}: 10 connections, ${r.rps.toFixed(0)} pages/s, p50 ${r.p50ms.toFixed(1)} ms, p99 ${r.p99ms.toFixed(1)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
    );
    console.log(report[report.length - 1]);
  }
  await on.s.stop();
}
writeFileSync(join(work, 'report.txt'), `${report.join('\n')}\n`);
console.log(`report: ${join(work, 'report.txt')}`);
