/**
 * What an operator plugs in (deploy/, docs/monitoring.md) is checked by the tools that
 * will read it: the alert rules by `promtool check rules` and their unit tests by
 * `promtool test rules`; the nginx example by `nginx -t`; the systemd units by
 * `systemd-analyze verify` where it runs, naming the launcher `make install` puts on
 * PATH, which runs the installed app; and every query of the dashboard and the rules
 * names a metric the server exports.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagSpec, usageText } from '../cli/usage.js';
import { metricsRegistry } from '../server/metrics/registry.js';
import { E2E_DATA_END, freePort, ROOT, tempDir, testEnv, waitFor } from './harness.js';
import { proxyConfig, selfSignedCertificate } from './nginx.js';
import { track } from './processes.js';
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

describe('deploy/: the nginx example', () => {
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

  it('each file says what it is for in a comment at its top', () => {
    const files = readdirSync(DEPLOY, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.length).toBeGreaterThan(8);
    for (const e of files) {
      const text = readFileSync(join(e.parentPath, e.name), 'utf8');
      if (e.name.endsWith('.json'))
        expect((JSON.parse(text) as { __comment?: string }).__comment, e.name).toBeTruthy();
      else
        expect(
          text.split('\n').find((l) => !l.startsWith('#!')),
          e.name,
        ).toMatch(/^# \S/);
    }
  });

  it('the install script is valid sh', () => {
    const r = spawnSync('sh', ['-n', join(DEPLOY, 'install.sh')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });
});

/** A unit's `Key=value` lines (comments dropped), in order. */
function unitSettings(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

/** FUNDRETURNS_<FLAG> → flag of a unit's `Environment=` lines and of an example settings file (commented ones too). */
function settingsOf(lines: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of lines) {
    const m = /^#?FUNDRETURNS_([A-Z0-9_]+)=(.*)$/.exec(l.trim());
    if (m) out.set(m[1].toLowerCase().replaceAll('_', '-'), m[2].replace(/^"(.*)"$/, '$1'));
  }
  return out;
}

const UNITS = { serve: 'fundreturns-serve.service', schedule: 'fundreturns-schedule.service' } as const;
const unitText = (cmd: keyof typeof UNITS) => readFileSync(join(DEPLOY, 'systemd', UNITS[cmd]), 'utf8');
const envText = (cmd: keyof typeof UNITS) => readFileSync(join(DEPLOY, 'systemd', `${cmd}.env`), 'utf8');

describe('deploy/: one deployment, one set of paths', () => {
  it('the serve and schedule units run the installed launcher and agree on the data paths', () => {
    const makefile = readFileSync(join(ROOT, 'Makefile'), 'utf8');
    // The paths the units name are the install's defaults.
    expect(makefile).toMatch(/^PREFIX \?= \/opt\/fundreturns$/m);
    expect(makefile).toMatch(/^BINDIR \?= \/usr\/local\/bin$/m);
    expect(makefile).toMatch(/^CONF_DIR \?= \/etc\/fundreturns$/m);
    const env = { serve: new Map<string, string>(), schedule: new Map<string, string>() };
    for (const cmd of ['serve', 'schedule'] as const) {
      const set = unitSettings(unitText(cmd));
      const get = (k: string) => set.filter(([key]) => key === k).map(([, v]) => v);
      expect(get('ExecStart'), cmd).toEqual([`/usr/local/bin/fundreturns ${cmd}`]);
      expect(get('EnvironmentFile'), cmd).toEqual([`-/etc/fundreturns/${cmd}.env`]);
      expect(get('WorkingDirectory'), cmd).toEqual(['/var/lib/fundreturns']);
      expect(get('ReadWritePaths'), cmd).toEqual(['/var/lib/fundreturns']);
      env[cmd] = settingsOf(get('Environment'));
    }
    expect(env.serve.get('snapshots')).toBe('/var/lib/fundreturns/snapshots');
    expect(env.schedule.get('snapshots')).toBe(env.serve.get('snapshots'));
    expect(env.serve.get('store')).toBe('/var/lib/fundreturns/store');
    expect(env.schedule.get('source')).toBe('/var/lib/fundreturns/source');
  });

  it('each example settings file sets only flags of its command, writable paths, and never the token itself', () => {
    for (const cmd of ['serve', 'schedule'] as const) {
      const settings = settingsOf(envText(cmd).split('\n'));
      expect(settings.size, cmd).toBeGreaterThan(3);
      const flags = flagSpec(cmd);
      for (const [flag, value] of settings) {
        const known =
          flag in flags ||
          (cmd === 'serve' && flag.startsWith('refresh-') && flag.slice(8) in flagSpec('schedule'));
        expect(known, `${cmd}.env: FUNDRETURNS_${flag}`).toBe(true);
        // A path is one the unit may write to, or a setting under /etc/fundreturns.
        if (value.startsWith('/'))
          expect(value, `${cmd}.env: ${flag}`).toMatch(/^\/(var\/lib|etc)\/fundreturns\//);
      }
      expect(envText(cmd)).not.toMatch(/EODHD_TOKEN=/);
    }
    expect(settingsOf(envText('schedule').split('\n')).get('token-file')).toBe(
      '/etc/fundreturns/eodhd-token',
    );
  });

  it('the guides carry no unit of their own and no other paths: they point to deploy/systemd', () => {
    for (const f of readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md'))) {
      const text = readFileSync(join(ROOT, 'docs', f), 'utf8');
      expect(text, f).not.toMatch(/^\[Service\]|^ExecStart=/m);
      expect(text, f).not.toContain('/srv/fundreturns');
    }
    for (const f of ['operating.md', 'refresh.md'])
      expect(readFileSync(join(ROOT, 'docs', f), 'utf8'), f).toContain('deploy/systemd/');
  });

  describe('`make install` into a DESTDIR', () => {
    const root = tempDir('install');
    dirs.push(root);
    const prefix = join(root, 'opt', 'fundreturns');
    const launcher = join(root, 'usr', 'local', 'bin', 'fundreturns');
    let installed: ReturnType<typeof spawnSync> | null = null;

    /** make TARGET with DESTDIR=root; the suite built dist/ already, so make does not build again (-o). */
    const make = (...args: string[]) =>
      spawnSync('make', ['-s', '-o', 'dist/.built', ...args, `DESTDIR=${root}`], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 240_000,
      });

    beforeAll(() => {
      installed = make('install');
      if (installed.status === 0) installed = make('install-systemd');
    }, 300_000);

    it('puts the built app and its production dependencies under PREFIX, and a relative `fundreturns` link in BINDIR', () => {
      expect(installed?.status, String(installed?.stderr)).toBe(0);
      expect(lstatSync(launcher).isSymbolicLink()).toBe(true);
      expect(readlinkSync(launcher)).toBe('../../../opt/fundreturns/bin/fundreturns.js');
      expect(realpathSync(launcher)).toBe(join(prefix, 'bin', 'fundreturns.js'));
      for (const f of ['dist/cli/main.js', 'package.json', 'package-lock.json', 'node_modules/apache-arrow'])
        expect(existsSync(join(prefix, f)), f).toBe(true);
      // Production dependencies only.
      expect(existsSync(join(prefix, 'node_modules', 'vitest'))).toBe(false);
      expect(existsSync(join(prefix, 'node_modules', 'typescript'))).toBe(false);
      expect(existsSync(join(`${prefix}.new`))).toBe(false);
    });

    it('the launcher on PATH runs the installed app, from nothing of the checkout: --help, generate, build, inspect, serve', async () => {
      expect(installed?.status).toBe(0);
      const work = tempDir('installed-run');
      dirs.push(work);
      const env = {
        ...testEnv(),
        PATH: `${dirname(launcher)}:${dirname(process.execPath)}:/usr/bin:/bin`,
        NODE_PATH: '',
      };
      const run = (args: string[]) =>
        spawnSync('fundreturns', args, { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
      const help = run(['--help']);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout.trim()).toBe(usageText());
      const gen = run([
        'generate',
        '--out',
        'source',
        '--funds',
        '12',
        '--from',
        '2020-01-01',
        '--to',
        E2E_DATA_END,
      ]);
      expect(gen.status, gen.stderr).toBe(0);
      const built = run(['build', '--source', 'source', '--snapshots', 'snapshots']);
      expect(built.status, built.stderr).toBe(0);
      const inspect = run(['inspect', '--snapshots', 'snapshots']);
      expect(inspect.status, inspect.stderr).toBe(0);
      expect(inspect.stdout).toMatch(/^funds\s+12$/m);
      // The native uWS binary and the worker threads load from the install too.
      const admin = await freePort();
      const serve = track(
        spawn(
          'fundreturns',
          [
            'serve',
            '--port',
            '0',
            '--admin-port',
            String(admin),
            '--threads',
            '1',
            '--snapshots',
            'snapshots',
            '--store',
            'store',
          ],
          {
            cwd: work,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        ),
        'installed fundreturns serve',
      );
      let out = '';
      serve.stdout?.on('data', (d) => {
        out += d;
      });
      serve.stderr?.on('data', (d) => {
        out += d;
      });
      const exited = new Promise<number | null>((r) => serve.once('exit', (code) => r(code)));
      try {
        await waitFor(
          () => /serving on http:\/\/[^:]+:\d+/.test(out),
          60_000,
          'the installed server',
          () => out,
        );
        const port = Number(/serving on http:\/\/[^:]+:(\d+)/.exec(out)?.[1]);
        const health = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(health.status).toBe(200);
        expect(((await health.json()) as { snapshot: { funds: number } }).snapshot.funds).toBe(12);
        // The commit the install recorded (an install has no .git to ask).
        const commit = existsSync(join(prefix, 'COMMIT'))
          ? readFileSync(join(prefix, 'COMMIT'), 'utf8').trim()
          : 'unknown';
        const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
        expect(metrics).toMatch(new RegExp(`^fundreturns_build_info\\{[^}]*commit="${commit}"`, 'm'));
      } finally {
        serve.kill('SIGTERM');
      }
      expect(await exited).toBe(0);
    }, 180_000);

    it('installing again swaps the new tree in and keeps the one it replaced in PREFIX.previous', () => {
      expect(installed?.status).toBe(0);
      // Marks the first install, to tell it from the second.
      writeFileSync(join(prefix, 'first-install'), '');
      const again = make('install');
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toContain(`the previous install is kept in ${prefix}.previous`);
      expect(existsSync(join(`${prefix}.previous`, 'first-install'))).toBe(true);
      expect(existsSync(join(prefix, 'first-install'))).toBe(false);
      expect(existsSync(`${prefix}.new`)).toBe(false);
      const help = spawnSync(launcher, ['--help'], { encoding: 'utf8' });
      expect(help.status, help.stderr).toBe(0);
    }, 300_000);

    it('refuses to replace a PREFIX that is not a fundreturns install, and leaves it as it was', () => {
      const other = join(root, 'srv', 'other');
      mkdirSync(other, { recursive: true });
      writeFileSync(join(other, 'keep.txt'), 'mine\n');
      const r = spawnSync(
        'make',
        ['-s', '-o', 'dist/.built', 'install', `PREFIX=${other}`, `BINDIR=${join(root, 'other-bin')}`],
        {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('is not a fundreturns install: refusing to replace it');
      expect(readdirSync(other)).toEqual(['keep.txt']);
      expect(existsSync(join(root, 'other-bin'))).toBe(false);
    });

    it('`make install-systemd` writes both units and both example settings files', () => {
      expect(installed?.status, String(installed?.stderr)).toBe(0);
      for (const cmd of ['serve', 'schedule'] as const) {
        expect(readFileSync(join(root, 'etc', 'systemd', 'system', UNITS[cmd]), 'utf8')).toBe(unitText(cmd));
        expect(readFileSync(join(root, 'etc', 'fundreturns', `${cmd}.env`), 'utf8')).toBe(envText(cmd));
      }
    });

    it.runIf(hasTool('systemd-analyze'))(
      'the installed units pass `systemd-analyze verify`, their ExecStart the launcher `make install` made',
      () => {
        expect(installed?.status).toBe(0);
        // verify checks that ExecStart is executable on this machine, not under DESTDIR:
        // the units are checked with the launcher's path moved there, nothing else changed.
        const d = tempDir('units');
        dirs.push(d);
        const units = Object.values(UNITS).map((u) => {
          const text = readFileSync(join(root, 'etc', 'systemd', 'system', u), 'utf8');
          expect(text).toContain('ExecStart=/usr/local/bin/fundreturns ');
          writeFileSync(join(d, u), text.replaceAll('/usr/local/bin/fundreturns', launcher));
          return join(d, u);
        });
        const r = spawnSync('systemd-analyze', ['verify', ...units], { encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
        // Its warnings about these units (a bad setting it ignores) count as failures too.
        expect(r.stderr.split('\n').filter((l) => l.includes('fundreturns-'))).toEqual([]);
      },
    );
  });
});
