/**
 * The dashboard under a flood of wrong passwords: waves of 200 sign-ins sent at once
 * from eight client addresses (127.0.0.2 to 127.0.0.9: Linux answers for all of
 * 127/8, and the dashboard tells clients apart by address, so each has its own
 * per-client budget), each with another email address, the next wave a second after
 * the last is answered, while
 * two probes, each on one kept-alive connection in a thread of its own, measure:
 *  - `/v1/funds/CODE/trailing-returns`, one request every 4 ms: its p99 must stay
 *    within 1.5× its value with no flood;
 *  - a signed-in person's `/account/keys`, one every 25 ms: its p99 under 100 ms;
 * each over the samples sent while a wave was in flight.
 * Then one sign-in with the right password in the midst of a flood: its time.
 *
 *   npm run build && npx tsx bench/hash-flood.bench.ts --snapshots DIR [--seconds 8] [--bin PATH]
 *
 * `--bin` runs another checkout's bin/fundreturns.js (built), for before/after figures.
 * The last run's figures: bench/reports/hash-flood.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, type Started, startProcess } from '../cli/bench/processes.js';
import { startWorker } from '../core/start-thread.js';
import { signedInCookie } from './dashboard-session.js';
import type { ProbeInput, ProbeResult } from './latency-probe.js';
import { benchArgs, DEFAULT_SNAPSHOTS } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = benchArgs();
const snapshots = args.get('snapshots') ?? DEFAULT_SNAPSHOTS;
const seconds = Number(args.get('seconds') ?? 8);
const bin = resolve(args.get('bin') ?? join(root, 'bin/fundreturns.js'));
const FLOOD = 200;
const CLIENTS = 8;
const work = `/tmp/fr-hash-flood-bench-${process.pid}`;
mkdirSync(work, { recursive: true });
const store = join(work, 'store');
const plans = join(work, 'plans.json');
writeFileSync(plans, JSON.stringify({ business: { burst: 1e9, monthly: 1e9 } }));

function cli(a: string[]): string {
  const r = spawnSync(process.execPath, [bin, ...a, '--store', store], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fundreturns ${a.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
cli(['accounts', 'create', 'bench', '--plan', 'business']);
const key = (JSON.parse(cli(['keys', 'create', 'bench', '--json'])) as { key: string }).key;

let server: Started | null = null;
process.on('exit', () => server?.child.kill('SIGKILL'));
const port = await freePort();
server = await startProcess(
  [
    bin,
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
  ],
  /serving on/,
);
const url = `http://127.0.0.1:${port}`;
const code = await (async () => {
  const r = await fetch(`${url}/v1/funds?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await r.json()) as { data?: Array<{ code: string }>; items?: Array<{ code: string }> };
  return (body.data ?? body.items ?? [])[0].code;
})();
const cookie = await signedInCookie(url, server, 'reader@example.test');
await signedInCookie(url, server, 'legit@example.test', 'the right password');

function probe(path: string, headers: Record<string, string>, intervalMs: number): Promise<ProbeResult> {
  const w = startWorker(import.meta.url, 'latency-probe', {
    workerData: { url: url + path, headers, intervalMs, seconds } satisfies ProbeInput,
  });
  return new Promise((res, rej) => {
    w.once('message', (m: ProbeResult) => {
      res(m);
      void w.terminate();
    });
    w.once('error', rej);
  });
}
const probes = () =>
  Promise.all([
    probe(`/v1/funds/${code}/trailing-returns`, { authorization: `Bearer ${key}` }, 4),
    probe('/account/keys', { cookie }, 25),
  ]);

interface Posted {
  status: number;
  ms: number;
}

/** One form POST over a new connection from `from`, with the cookie and token of a sign-in page. */
function post(
  from: string,
  path: string,
  form: Record<string, string>,
  jar: string,
  csrf: string,
): Promise<Posted> {
  const body = new URLSearchParams({ ...form, csrf }).toString();
  const t = performance.now();
  return new Promise((res) => {
    const req = request(
      url + path,
      {
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, cookie: jar },
      },
      (r) => {
        r.resume();
        r.on('end', () => res({ status: r.statusCode ?? 0, ms: performance.now() - t }));
      },
    );
    req.on('error', () => res({ status: 0, ms: performance.now() - t }));
    req.end(body);
  });
}

/** A sign-in page's cookie and form token, as `from` gets them. */
function loginPage(from: string): Promise<{ jar: string; csrf: string }> {
  return new Promise((res, rej) => {
    const req = request(`${url}/account/login`, { localAddress: from, agent: false }, (r) => {
      let text = '';
      r.on('data', (d) => {
        text += d;
      });
      r.on('end', () => {
        const jar = (r.headers['set-cookie'] ?? []).map((l) => l.split(';')[0]).join('; ');
        res({ jar, csrf: /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? '' });
      });
    });
    req.on('error', rej);
    req.end();
  });
}

/**
 * Waves of FLOOD wrong sign-ins sent at once from CLIENTS addresses (each with another
 * email address), the next a second after the last is answered, until `stop()`: their
 * answers, and when each wave was in flight (epoch ms), for the probes' samples.
 */
async function flood(): Promise<{
  stop: () => Promise<{ answers: Posted[]; waves: Array<[number, number]> }>;
}> {
  const pages = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => loginPage(`127.0.0.${2 + i}`)));
  const answers: Posted[] = [];
  const waves: Array<[number, number]> = [];
  let going = true;
  let n = 0;
  const clock = () => performance.timeOrigin + performance.now();
  const run = (async () => {
    while (going) {
      const start = clock();
      const wave = Array.from({ length: FLOOD }, () => {
        const c = n % CLIENTS;
        const email = `flood${n++}@example.test`;
        return post(
          `127.0.0.${2 + c}`,
          '/account/login',
          { email, password: 'wrong password' },
          pages[c].jar,
          pages[c].csrf,
        );
      });
      answers.push(...(await Promise.all(wave)));
      waves.push([start, clock()]);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    stop: async () => {
      going = false;
      await run;
      return { answers, waves };
    },
  };
}

/** The samples of a probe sent while a wave was in flight. */
function during(r: ProbeResult, waves: ReadonlyArray<readonly [number, number]>): ProbeResult {
  const keep = r.at.map((t) => waves.some(([a, b]) => t >= a && t <= b));
  return { ms: r.ms.filter((_, i) => keep[i]), at: r.at.filter((_, i) => keep[i]), statuses: r.statuses };
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const fmt = (r: ProbeResult) =>
  `${r.ms.length} answers (${Object.entries(r.statuses)
    .map(([k, v]) => `${v}×${k}`)
    .join(
      ', ',
    )}), p50 ${pct(r.ms, 0.5).toFixed(2)} ms, p99 ${pct(r.ms, 0.99).toFixed(2)} ms, max ${pct(r.ms, 1).toFixed(1)} ms`;

const report: string[] = [`server: ${bin} (--threads 2), ${seconds} s a phase`];
const say = (line: string) => {
  report.push(line);
  console.log(line);
};

const [v1Idle, pageIdle] = await probes();
say(`idle   /v1: ${fmt(v1Idle)}`);
say(`idle   /account/keys: ${fmt(pageIdle)}`);

const f = await flood();
const [v1All, pageAll] = await probes();
// A person who knows their password, in the midst of it.
const legit = await loginPage('127.0.0.1');
const signIn = await post(
  '127.0.0.1',
  '/account/login',
  { email: 'legit@example.test', password: 'the right password' },
  legit.jar,
  legit.csrf,
);
const { answers, waves } = await f.stop();
const [v1Flood, pageFlood] = [during(v1All, waves), during(pageAll, waves)];
say(
  `flood  ${waves.length} waves of ${FLOOD}, in flight ${waves.map(([a, b]) => `${((b - a) / 1000).toFixed(2)} s`).join(', ')}; the probes' samples sent meanwhile:`,
);
say(`flood  /v1: ${fmt(v1Flood)}`);
say(`flood  /account/keys: ${fmt(pageFlood)}`);
const byStatus = new Map<number, number[]>();
for (const a of answers) byStatus.set(a.status, [...(byStatus.get(a.status) ?? []), a.ms]);
say(
  `flood  sign-ins: ${answers.length} answered: ${[...byStatus]
    .sort(([a], [b]) => a - b)
    .map(
      ([s, ms]) =>
        `${ms.length}×${s} (p50 ${pct(ms, 0.5).toFixed(1)} ms, p99 ${pct(ms, 0.99).toFixed(1)} ms)`,
    )
    .join(', ')}`,
);
say(`flood  a sign-in with the right password: ${signIn.status} in ${signIn.ms.toFixed(1)} ms`);
say(
  `ratio  /v1 p99 flood/idle ${(pct(v1Flood.ms, 0.99) / pct(v1Idle.ms, 0.99)).toFixed(2)} (target ≤ 1.5); /account/keys p99 under flood ${pct(pageFlood.ms, 0.99).toFixed(1)} ms (target < 100)`,
);
await server.stop();
server = null;
writeFileSync(join(work, 'report.txt'), `${report.join('\n')}\n`);
console.log(`report: ${join(work, 'report.txt')}`);
