/**
 * What an operator plugs in (deploy/, docs/monitoring.md) is checked by the tools that
 * will read it: the alert rules by `promtool check rules` and their unit tests by
 * `promtool test rules`; the nginx example by `nginx -t`; the systemd units by
 * `systemd-analyze verify` where it runs; and every query of the dashboard and the
 * rules names a metric the server exports.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { metricsRegistry } from '../server/metrics/registry.js';
import { ROOT, tempDir } from './harness.js';
import { proxyConfig, selfSignedCertificate } from './nginx.js';
import { hasTool, toolForTest } from './system-tool.js';

const DEPLOY = join(ROOT, 'deploy');
const RULES = join(DEPLOY, 'prometheus', 'fundreturns-alerts.yml');
const DASHBOARD = join(DEPLOY, 'grafana', 'fundreturns-dashboard.json');
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every metric name /metrics can show (histograms with their series), from the registry itself. */
async function exportedNames(): Promise<Set<string>> {
  const reg = metricsRegistry({
    threads: () => [],
    snapshot: () => null,
    swaps: () => 0,
    refusals: () => new Map(),
    refusedNow: () => null,
    freshnessHours: 120,
    now: () => 0,
    build: { version: '0', node: '0', commit: 'unknown' },
    refresh: () => null,
  });
  const names = new Set<string>();
  for (const m of await reg.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
  }
  return names;
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
]);

/** The metric names a PromQL expression reads (not functions, labels, keywords or Grafana variables). */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\boffset\s+-?\w+/g, '')
    .replace(/\$\w+/g, '');
  const out: string[] = [];
  for (const m of bare.matchAll(/(?<![\w.])[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(m.index + m[0].length);
    if (/^\s*\(/.test(after) || KEYWORDS.has(m[0])) continue;
    out.push(m[0]);
  }
  return out;
}

/** Every `expr` of the dashboard's panels and templates. */
function dashboardExprs(): string[] {
  const exprs: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null)
      for (const [k, x] of Object.entries(v)) {
        if (k === 'expr' && typeof x === 'string') exprs.push(x);
        else walk(x);
      }
  };
  walk(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
  return exprs;
}

/** The rules' `expr` texts (block scalars included) and the names they record. */
function rules(): { exprs: string[]; recorded: string[] } {
  const text = readFileSync(RULES, 'utf8');
  const recorded = [...text.matchAll(/^\s*- record:\s*(\S+)/gm)].map((m) => m[1]);
  const exprs: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]);
    if (!m) continue;
    if (m[2] !== '|') {
      exprs.push(m[2]);
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1].trim() === '' || lines[i + 1].search(/\S/) > m[1].length))
      block.push(lines[++i]);
    exprs.push(block.join('\n'));
  }
  return { exprs, recorded };
}

describe('deploy/: the alert rules', () => {
  it('pass `promtool check rules`', (ctx) => {
    if (!toolForTest('promtool', 'prometheus', true)) return ctx.skip();
    const r = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('fire as their unit tests say (`promtool test rules`): stale data, a refused snapshot, Redis, a failed refresh, 5xx, no snapshot', (ctx) => {
    if (!toolForTest('promtool', 'prometheus', true)) return ctx.skip();
    const r = spawnSync('promtool', ['test', 'rules', 'fundreturns-alerts.test.yml'], {
      cwd: join(DEPLOY, 'prometheus'),
      encoding: 'utf8',
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('cover each condition the guide lists', () => {
    const text = readFileSync(RULES, 'utf8');
    for (const alert of [
      'FundReturnsDataStale',
      'FundReturnsRefreshFailed',
      'FundReturnsHigh5xxRate',
      'FundReturnsRedisUnreachable',
      'FundReturnsRateLimitedShareJump',
      'FundReturnsSnapshotRefused',
    ])
      expect(text).toContain(`- alert: ${alert}`);
  });
});

describe('deploy/: every query names a metric the server exports', () => {
  it('the PromQL reader finds metric names and nothing else', () => {
    expect(
      metricNames(
        'sum by (route, le) (rate(fundreturns_x_bucket{instance=~"$instance"}[$__rate_interval])) / 3600 and on (instance) up offset 1d',
      ),
    ).toEqual(['fundreturns_x_bucket', 'up']);
  });

  it('the Grafana dashboard', async () => {
    const names = await exportedNames();
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(15);
    const unknown = exprs.flatMap((e) =>
      metricNames(e)
        .filter((n) => !names.has(n))
        .map((n) => `${n} in ${e}`),
    );
    expect(unknown).toEqual([]);
  });

  it('the alert rules (besides `up` and their own recorded series)', async () => {
    const names = await exportedNames();
    const { exprs, recorded } = rules();
    expect(exprs.length).toBe(10);
    const known = (n: string) => names.has(n) || recorded.includes(n) || n === 'up';
    const unknown = exprs.flatMap((e) =>
      metricNames(e)
        .filter((n) => !known(n))
        .map((n) => `${n} in ${e}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe('deploy/: the nginx example and the systemd units', () => {
  it('the nginx config for two servers passes `nginx -t` (with a throwaway certificate at its paths)', (ctx) => {
    if (!toolForTest('nginx', 'nginx', true) || !toolForTest('openssl', 'openssl', true)) return ctx.skip();
    const d = tempDir('nginx');
    dirs.push(d);
    const { cert, key } = selfSignedCertificate(join(d, 'tls'), 'funds.example.com');
    // A main config of our own, so the test needs no root and touches nothing in /etc or /var.
    const conf = join(d, 'nginx.conf');
    writeFileSync(
      conf,
      proxyConfig({ dir: d, upstreams: [8080, 8081], httpPort: 8080, httpsPort: 8443, cert, key }),
    );
    const r = spawnSync('nginx', ['-t', '-p', d, '-c', conf], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('test is successful');
  });

  it('the snapshot copy script is valid sh', () => {
    const r = spawnSync('sh', ['-n', join(DEPLOY, 'nginx', 'sync-snapshots.sh')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it.runIf(hasTool('systemd-analyze'))('the serve and schedule units pass `systemd-analyze verify`', () => {
    const units = ['fundreturns-serve.service', 'fundreturns-schedule.service'].map((u) =>
      join(DEPLOY, 'systemd', u),
    );
    const r = spawnSync('systemd-analyze', ['verify', ...units], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    // Its warnings about these units (a bad setting it ignores) count as failures too.
    expect(r.stderr.split('\n').filter((l) => l.includes('fundreturns-'))).toEqual([]);
  });

  it('each file says what it is for in a comment at its top', () => {
    for (const sub of readdirSync(DEPLOY)) {
      for (const f of readdirSync(join(DEPLOY, sub))) {
        const text = readFileSync(join(DEPLOY, sub, f), 'utf8');
        if (f.endsWith('.json'))
          expect((JSON.parse(text) as { __comment?: string }).__comment, f).toBeTruthy();
        else
          expect(
            text.split('\n').find((l) => !l.startsWith('#!')),
            f,
          ).toMatch(/^# \S/);
      }
    }
  });
});
