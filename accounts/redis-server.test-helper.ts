/**
 * A throw-away redis-server for tests: a free loopback port, no persistence, killed
 * afterwards. Tests use a real engine rather than a fake so the Lua scripts, pub/sub
 * and reconnection paths run as they do in production.
 */
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { track } from '../test/processes.js';

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Kill the server (SIGKILL when `crash`, as an outage would) and wait for it to exit. */
  stop(opts?: { crash?: boolean }): Promise<void>;
}

let checked = false;

function assertInstalled(): void {
  if (checked) return;
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8', env: redisEnv(), timeout: 10_000 });
  if (r.error || r.status !== 0) {
    throw new Error(
      'redis-server is not installed or not on PATH; install it with ' +
        '`apt-get install -y redis-server` (.ci/run does this)',
    );
  }
  checked = true;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One PING over a raw socket: no client library, so the helper cannot mask a client bug. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.once('error', () => done(false));
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
    sock.once('connect', () => sock.write('PING\r\n'));
  });
}

/**
 * The environment for redis-server: the tests' own, less libfaketime. redis-server
 * does not start under it ("Cannot recover from unexpected recursive calls to
 * clock_gettime()"), and its clock is not one the service reads: limits are decided
 * on the servers' clock, passed to the scripts (server/access/limiter-redis.ts).
 */
function redisEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'LD_PRELOAD' || k.startsWith('FAKETIME') || k === 'DONT_FAKE_MONOTONIC') continue;
    env[k] = v;
  }
  return env;
}

async function startOn(port: number, dir: string | undefined): Promise<RedisServer> {
  // With a directory, an append-only file synced on every write, as the README asks of
  // production: a crashed and restarted Redis comes back with everything it acknowledged.
  const persistence =
    dir === undefined
      ? ['--appendonly', 'no']
      : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir];
  // Tracked, so that no test leaves it running, pass or fail (test/processes.ts).
  const child = track(
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--daemonize', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: redisEnv() },
    ),
    `redis-server :${port}`,
  );
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server on port ${port} exited before answering PING:\n${output}`);
    }
    if (await ping(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING within 10 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop(opts) {
      if (child.exitCode === null && child.signalCode === null)
        child.kill(opts?.crash ? 'SIGKILL' : 'SIGTERM');
      await exited;
    },
  };
}

/**
 * Start redis-server on a free loopback port (or on `port`, to restart one after a
 * simulated outage) and resolve once it answers PING. With `dir`, it persists there
 * (restart it with the same `dir` to get its data back); without, it keeps nothing.
 */
export async function startRedis(opts?: { port?: number; dir?: string }): Promise<RedisServer> {
  assertInstalled();
  if (opts?.port !== undefined) return startOn(opts.port, opts.dir);
  // The free port can be taken between probing and binding; try a few.
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOn(await freePort(), opts?.dir);
    } catch (err) {
      last = err;
    }
  }
  throw last;
}
