/**
 * The operator's nginx example (deploy/nginx/fundreturns.conf) run for real in front
 * of test servers: the same file, with only what a machine must change rewritten (the
 * upstream addresses, the listen ports, the certificate paths), under a main config of
 * our own so it needs no root and touches nothing in /etc or /var. Each rewrite must
 * match, so a change to the example that the tests cannot follow fails here, loudly.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort, lastLines, ROOT } from './harness.js';
import { track } from './processes.js';

const NGINX_EXAMPLE = join(ROOT, 'deploy', 'nginx', 'fundreturns.conf');

/** A throwaway self-signed certificate for `name` (and 127.0.0.1), made by openssl. */
export function selfSignedCertificate(dir: string, name: string): { cert: string; key: string; pem: string } {
  mkdirSync(dir, { recursive: true });
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name},IP:127.0.0.1`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl could not make a certificate: ${r.stderr}`);
  return { cert, key, pem: readFileSync(cert, 'utf8') };
}

function rewrite(text: string, pattern: RegExp, by: string, what: string): string {
  if (!pattern.test(text)) throw new Error(`deploy/nginx/fundreturns.conf no longer has ${what}`);
  return text.replace(pattern, by);
}

export interface ProxyOptions {
  dir: string;
  /** Loopback ports of the upstream servers, in the example's order. */
  upstreams: number[];
  httpPort: number;
  httpsPort: number;
  cert: string;
  key: string;
}

/** The example config with this machine's ports and certificate, inside a main config of our own. */
export function proxyConfig(o: ProxyOptions): string {
  let site = readFileSync(NGINX_EXAMPLE, 'utf8');
  let n = 0;
  site = rewrite(
    site,
    /server 10\.0\.0\.\d+:8080/g,
    // The example's two upstreams become ours; a third upstream line would not.
    '__UPSTREAM__',
    'upstream server lines',
  );
  site = site.replace(/__UPSTREAM__/g, () => `server 127.0.0.1:${o.upstreams[n++]}`);
  if (n !== o.upstreams.length)
    throw new Error(`the example names ${n} upstreams, the test has ${o.upstreams.length}`);
  site = rewrite(site, /listen 80;/, `listen 127.0.0.1:${o.httpPort};`, 'a plain-HTTP listener on port 80');
  site = rewrite(site, /listen 443 ssl/, `listen 127.0.0.1:${o.httpsPort} ssl`, 'a TLS listener on port 443');
  site = rewrite(site, /ssl_certificate \S+;/, `ssl_certificate ${o.cert};`, 'ssl_certificate');
  site = rewrite(site, /ssl_certificate_key \S+;/, `ssl_certificate_key ${o.key};`, 'ssl_certificate_key');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((t) => `  ${t}_temp_path ${join(o.dir, t)};`)
    .join('\n');
  return (
    `error_log ${join(o.dir, 'error.log')};\npid ${join(o.dir, 'nginx.pid')};\n` +
    `events {}\nhttp {\n  access_log off;\n${temp}\n${site}\n}\n`
  );
}

export interface RunningProxy {
  httpPort: number;
  httpsPort: number;
  /** The certificate, to trust it (undici's `connect.ca`). */
  ca: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** nginx in the foreground (tracked: it ends with its test) serving the example before `upstreams`. */
export async function startProxy(
  dir: string,
  upstreams: number[],
  name: string,
  ports?: { http: number; https: number },
): Promise<RunningProxy> {
  mkdirSync(dir, { recursive: true });
  const { cert, key, pem } = selfSignedCertificate(join(dir, 'tls'), name);
  const httpPort = ports?.http ?? (await freePort());
  const httpsPort = ports?.https ?? (await freePort());
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, proxyConfig({ dir, upstreams, httpPort, httpsPort, cert, key }));
  const child = track(
    spawn('nginx', ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' }),
    'nginx',
  );
  const deadline = Date.now() + 15_000;
  while (!(await listening(httpsPort))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      let log = '';
      try {
        log = readFileSync(join(dir, 'error.log'), 'utf8');
      } catch {}
      child.kill('SIGKILL');
      throw new Error(`nginx did not start; its error log:\n${lastLines(log)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    httpPort,
    httpsPort,
    ca: pem,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        // QUIT: nginx's graceful stop.
        child.kill('SIGQUIT');
      }),
  };
}
