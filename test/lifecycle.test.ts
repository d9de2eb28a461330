/**
 * The server's life with its data: hot swap under load, refused snapshots,
 * stale and empty data, graceful stop. Real processes over real files.
 */

import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  copyFileSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCurrent, setCurrent } from '../core/snapshot/directory.js';
import {
  CLI,
  cli,
  freePort,
  generateAndBuild,
  rawConnection,
  setupAccess,
  spawnCli,
  startServe,
  type TestAccess,
  tempDir,
  testEnv,
  waitFor,
} from './harness.js';
import { track } from './processes.js';

let dir: string;
let access: TestAccess;

beforeAll(() => {
  dir = tempDir('life');
  access = setupAccess(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function json(
  url: string,
): Promise<{ status: number; body: Record<string, unknown>; asOf: string | null }> {
  const r = await fetch(url, { headers: access.headers });
  return {
    status: r.status,
    body: (await r.json()) as Record<string, unknown>,
    asOf: r.headers.get('x-data-as-of'),
  };
}

describe('hot swap', () => {
  it('serves without a single failed request while a daily append is published, and the new as_of appears', async () => {
    const { source, snapshots } = generateAndBuild(join(dir, 'swap'), 60, ['--daily-days', '2']);
    const server = await startServe([
      ...access.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '2',
      '--poll-ms',
      '200',
    ]);
    try {
      const funds = (await json(`${server.url}/v1/funds?limit=5`)).body.data as Array<{ code: string }>;
      const before = (await json(`${server.url}/v1/funds/${funds[0].code}/trailing-returns`)).body.as_of_date;
      let stop = false;
      let ok = 0;
      const failures: string[] = [];
      const seen = new Set<string>();
      const loop = async () => {
        for (let k = 0; !stop && k < 100_000; k++) {
          const code = funds[k % funds.length].code;
          try {
            const r = await fetch(`${server.url}/v1/funds/${code}/trailing-returns`, {
              headers: access.headers,
            });
            const body = (await r.json()) as { as_of_date: string };
            if (r.status !== 200) failures.push(`${r.status}`);
            else {
              ok++;
              seen.add(body.as_of_date);
            }
          } catch (e) {
            failures.push((e as Error).message);
          }
        }
      };
      const loops = Array.from({ length: 8 }, loop);
      await waitFor(() => ok > 200, 20_000, 'requests before the swap');
      const dailyDir = join(source, 'daily');
      const first = join(dailyDir, readdirSync(dailyDir).sort()[0]);
      const r = cli(['build', '--daily', first, '--snapshots', snapshots]);
      expect(r.status, r.stderr).toBe(0);
      await waitFor(() => seen.size > 1, 20_000, 'the new as_of');
      const after = ok;
      await waitFor(() => ok > after + 200, 20_000, 'requests after the swap');
      stop = true;
      await Promise.all(loops);
      expect(failures).toEqual([]);
      expect([...seen].sort()).toEqual([before, [...seen].sort()[1]]);
      expect([...seen].sort()[1] > String(before)).toBe(true);
      const h = await json(`${server.url}/healthz`);
      expect((h.body.snapshot as { id: string }).id).toBe(readCurrent(snapshots));
    } finally {
      await server.stop();
    }
  });

  it('refuses a corrupt snapshot, keeps serving the old one and says why in /healthz', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'corrupt'), 20);
    const server = await startServe([
      ...access.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '2',
      '--poll-ms',
      '100',
    ]);
    try {
      const good = readCurrent(snapshots)!;
      const bad = `${good}-corrupt`;
      mkdirSync(join(snapshots, bad));
      for (const f of readdirSync(join(snapshots, good)))
        copyFileSync(join(snapshots, good, f), join(snapshots, bad, f));
      // Flip one byte in the middle of the series: the checksum must catch it.
      const path = join(snapshots, bad, 'series.arrow');
      const size = readFileSync(path).length;
      const fd = openSync(path, 'r+');
      writeSync(fd, Buffer.from([0xff]), 0, 1, Math.floor(size / 2));
      closeSync(fd);
      setCurrent(snapshots, bad);
      await waitFor(
        async () => typeof (await json(`${server.url}/healthz`)).body.last_error === 'string',
        10_000,
        'last_error',
      );
      const h = await json(`${server.url}/healthz`);
      expect(h.body.last_error).toMatch(/refused/);
      expect(h.body.last_error).toMatch(/series\.arrow/);
      expect((h.body.snapshot as { id: string }).id).toBe(good);
      const list = await json(`${server.url}/v1/funds?limit=1`);
      expect(list.status).toBe(200);
      // Pointing CURRENT back at a good snapshot clears the error.
      setCurrent(snapshots, good);
      await waitFor(
        async () => (await json(`${server.url}/healthz`)).body.last_error === undefined,
        10_000,
        'error cleared',
      );
      // CURRENT names a directory inside the snapshots directory, never a path out of it.
      writeFileSync(join(snapshots, 'CURRENT'), `../${basename(snapshots)}/${good}\n`);
      await waitFor(
        async () => /^CURRENT_INVALID: /.test(String((await json(`${server.url}/healthz`)).body.last_error)),
        10_000,
        'path refused',
      );
      // The path is the operator's business: in the log, never on the public page.
      expect(String((await json(`${server.url}/healthz`)).body.last_error)).not.toContain(snapshots);
      await waitFor(() => /not a snapshot in that directory/.test(server.logs()), 10_000, 'path logged');
      expect(((await json(`${server.url}/healthz`)).body.snapshot as { id: string }).id).toBe(good);
      // A CURRENT no file name could be (megabytes of it) is refused without being copied whole.
      writeFileSync(join(snapshots, 'CURRENT'), 'a'.repeat(1_000_000));
      await waitFor(() => /holds 1000000 characters/.test(server.logs()), 10_000, 'long CURRENT refused');
      expect(server.logs().length).toBeLessThan(100_000);
      expect((await json(`${server.url}/healthz`)).body.last_error).toMatch(/^CURRENT_INVALID: /);
      setCurrent(snapshots, good);
      await waitFor(
        async () => (await json(`${server.url}/healthz`)).body.last_error === undefined,
        10_000,
        'path error cleared',
      );
    } finally {
      await server.stop();
    }
  });
});

describe('refused snapshots, tried again and fallen back on', () => {
  /** A byte-for-byte copy of snapshot `good` under `name`, with one byte of its series flipped. */
  function corruptCopy(snapshots: string, good: string, name: string): string {
    mkdirSync(join(snapshots, name));
    for (const f of readdirSync(join(snapshots, good)))
      copyFileSync(join(snapshots, good, f), join(snapshots, name, f));
    const path = join(snapshots, name, 'series.arrow');
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from([0xff]), 0, 1, Math.floor(readFileSync(path).length / 2));
    closeSync(fd);
    return path;
  }

  it('a refused snapshot repaired in place is loaded once CURRENT is published again', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'retry'), 10);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--poll-ms', '100']);
    try {
      const good = readCurrent(snapshots)!;
      const bad = `${good}-repaired`;
      const series = corruptCopy(snapshots, good, bad);
      setCurrent(snapshots, bad);
      await waitFor(
        async () => /refused/.test(String((await json(`${server.url}/healthz`)).body.last_error)),
        10_000,
        'the refusal',
      );
      // The operator puts the right bytes back (same file, same directory) and publishes again.
      copyFileSync(join(snapshots, good, 'series.arrow'), series);
      setCurrent(snapshots, bad);
      await waitFor(
        async () => ((await json(`${server.url}/healthz`)).body.snapshot as { id: string }).id === bad,
        10_000,
        'the repaired snapshot',
      );
      expect((await json(`${server.url}/healthz`)).body.last_error).toBeUndefined();
      await waitFor(() => /"retry_in_s":30/.test(server.logs()), 10_000, 'the refusal logged');
    } finally {
      await server.stop();
    }
  });

  it('a restart onto a refused newest snapshot serves the newest one that loads, and says why', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'fallback'), 10);
    const good = readCurrent(snapshots)!;
    const bad = `${good}-broken`;
    corruptCopy(snapshots, good, bad);
    setCurrent(snapshots, bad);
    // The CLI reads CURRENT only: it refuses, naming the snapshot as well as its file.
    const q = cli(['query', 'fund', 'ANY', '--snapshots', snapshots]);
    expect(q.status).toBe(1);
    expect(q.stderr).toContain(`snapshot ${bad} in ${snapshots} refused: series.arrow`);
    const server = await startServe([...access.flags, '--snapshots', snapshots]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect((h.body.snapshot as { id: string }).id).toBe(good);
      expect(h.body.last_error).toMatch(new RegExp(`snapshot ${bad} refused: series\\.arrow`));
      expect((await json(`${server.url}/v1/funds?limit=1`)).status).toBe(200);
      await waitFor(
        () => /CURRENT names a refused snapshot: serving the newest older one that loads/.test(server.logs()),
        10_000,
        'the fallback logged',
      );
    } finally {
      await server.stop();
    }
  });

  it('a restart onto a CURRENT that names no snapshot (a path, `..`) serves the newest that loads, and says why', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'fallback-path'), 10);
    const good = readCurrent(snapshots)!;
    for (const written of [join(snapshots, good), '..']) {
      writeFileSync(join(snapshots, 'CURRENT'), `${written}\n`);
      const server = await startServe([...access.flags, '--snapshots', snapshots]);
      try {
        const h = await json(`${server.url}/healthz`);
        expect((h.body.snapshot as { id: string }).id, written).toBe(good);
        expect(h.body.last_error, written).toMatch(/^CURRENT_INVALID: /);
        expect(h.body.last_error, written).not.toContain(snapshots);
        expect((await json(`${server.url}/v1/funds?limit=1`)).status).toBe(200);
      } finally {
        await server.stop();
      }
    }
    // CURRENT a directory: the error names CURRENT, not a bare EISDIR.
    rmSync(join(snapshots, 'CURRENT'));
    mkdirSync(join(snapshots, 'CURRENT'));
    const server = await startServe([...access.flags, '--snapshots', snapshots]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect((h.body.snapshot as { id: string }).id).toBe(good);
      expect(h.body.last_error).toBe('CURRENT_UNREADABLE: CURRENT cannot be read (detail in the server log)');
      await waitFor(
        () =>
          server
            .logs()
            .includes(
              `${join(snapshots, 'CURRENT')} cannot be read: EISDIR: illegal operation on a directory, read`,
            ),
        10_000,
        'the detail logged',
      );
    } finally {
      await server.stop();
    }
    // CURRENT a link to a file that is none of the public's business (its line passes as a name).
    rmSync(join(snapshots, 'CURRENT'), { recursive: true });
    writeFileSync(join(dir, 'secret-token'), 'the-secret-in-another-file\n');
    symlinkSync(join(dir, 'secret-token'), join(snapshots, 'CURRENT'));
    const linked = await startServe([...access.flags, '--snapshots', snapshots]);
    try {
      const h = await json(`${linked.url}/healthz`);
      expect((h.body.snapshot as { id: string }).id).toBe(good);
      expect(h.body.last_error).toBe(
        'SNAPSHOT_MISSING: CURRENT names no snapshot directory (detail in the server log)',
      );
      expect(JSON.stringify(h.body)).not.toContain('the-secret-in-another-file');
      // The log says what the name was refused for and where CURRENT leads, never what it holds.
      await waitFor(
        () => linked.logs().includes(`is a link to ${join(dir, 'secret-token')}`),
        10_000,
        'the detail logged',
      );
      expect(linked.logs()).not.toContain('the-secret-in-another-file');
    } finally {
      await linked.stop();
    }
  });

  it('a refused copy of a good snapshot (same build time, a snapshot name) still falls back to the good one', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'fallback-copy'), 10);
    const good = readCurrent(snapshots)!;
    // A restored or renamed copy: another snapshot name, the same manifest, then damaged.
    const copy = `${good.slice(0, -4)}${good.endsWith('ffff') ? 'eeee' : 'ffff'}`;
    corruptCopy(snapshots, good, copy);
    setCurrent(snapshots, copy);
    const server = await startServe([...access.flags, '--snapshots', snapshots]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect((h.body.snapshot as { id: string }).id).toBe(good);
      expect(h.body.last_error).toMatch(new RegExp(`snapshot ${copy} refused`));
    } finally {
      await server.stop();
    }
  });

  it('never falls back to a snapshot newer than the refused one: CURRENT may be a rollback away from it', async () => {
    const { source, snapshots } = generateAndBuild(join(dir, 'rollback'), 5, ['--daily-days', '1']);
    const older = readCurrent(snapshots)!;
    const dailyDir = join(source, 'daily');
    const daily = cli([
      'build',
      '--daily',
      join(dailyDir, readdirSync(dailyDir)[0]),
      '--snapshots',
      snapshots,
    ]);
    expect(daily.status, daily.stderr).toBe(0);
    expect(readCurrent(snapshots)).not.toBe(older);
    // Rolled back to the older snapshot, which has since been damaged.
    const series = join(snapshots, older, 'series.arrow');
    const fd = openSync(series, 'r+');
    writeSync(fd, Buffer.from([0xff]), 0, 1, Math.floor(readFileSync(series).length / 2));
    closeSync(fd);
    setCurrent(snapshots, older);
    const server = await startServe([...access.flags, '--snapshots', snapshots]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect(h.body.status).toBe('empty');
      expect(h.body.last_error).toMatch(new RegExp(`snapshot ${older} refused`));
    } finally {
      await server.stop();
    }
  });

  it('CURRENT deleted while serving is reported, the loaded snapshot goes on serving', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'gone'), 5);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--poll-ms', '100']);
    try {
      const id = readCurrent(snapshots)!;
      rmSync(join(snapshots, 'CURRENT'));
      await waitFor(
        async () => /CURRENT is missing/.test(String((await json(`${server.url}/healthz`)).body.last_error)),
        10_000,
        'the report',
      );
      expect((await json(`${server.url}/v1/funds?limit=1`)).status).toBe(200);
      setCurrent(snapshots, id);
      await waitFor(
        async () => (await json(`${server.url}/healthz`)).body.last_error === undefined,
        10_000,
        'the report cleared',
      );
    } finally {
      await server.stop();
    }
  });
});

describe('data freshness (C24, C31)', () => {
  it('stale data is still served but /healthz is 503 stale', async () => {
    const root = join(dir, 'stale');
    const source = join(root, 'source');
    const snapshots = join(root, 'snapshots');
    expect(
      cli([
        'generate',
        '--out',
        source,
        '--funds',
        '10',
        '--from',
        '2015-01-01',
        '--to',
        '2020-06-01',
        '--threads',
        '1',
      ]).status,
    ).toBe(0);
    expect(cli(['build', '--source', source, '--snapshots', snapshots]).status).toBe(0);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '1']);
    try {
      const h = await json(`${server.url}/healthz`);
      expect(h.status).toBe(503);
      expect(h.body.status).toBe('stale');
      expect(h.body.data_as_of).toBe('2020-06-01');
      const list = await json(`${server.url}/v1/funds?limit=1`);
      expect(list.status).toBe(200);
      expect(list.asOf).toBe('2020-06-01');
    } finally {
      await server.stop();
    }
  });

  it('--freshness-hours moves the threshold', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'fresh'), 5);
    const server = await startServe([
      ...access.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '1',
      '--freshness-hours',
      '100000',
    ]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect(h.status).toBe(200);
      expect(h.body.status).toBe('ok');
      expect(h.body.freshness_max_age_hours).toBe(100000);
    } finally {
      await server.stop();
    }
  });

  it('with no snapshot every data endpoint is 503 No data loaded, until one is published', async () => {
    const root = join(dir, 'empty');
    const snapshots = join(root, 'snapshots');
    mkdirSync(snapshots, { recursive: true });
    const server = await startServe([
      ...access.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '2',
      '--poll-ms',
      '100',
    ]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect(h.status).toBe(503);
      expect(h.body.status).toBe('empty');
      expect(h.body.snapshot).toBeNull();
      expect(h.body.last_error).toBe('NO_SNAPSHOT: no snapshot published: CURRENT is missing or empty');
      for (const path of [
        '/v1/funds',
        '/v1/funds/ABC',
        '/v1/funds/ABC/trailing-returns',
        '/v1/funds/ABC/calendar-returns',
      ]) {
        const r = await json(server.url + path);
        expect(r.status, path).toBe(503);
        expect(r.body).toEqual({ detail: 'No data loaded' });
      }
      const b = await fetch(`${server.url}/v1/trailing-returns/batch`, {
        method: 'POST',
        body: '{"codes":["A"]}',
        headers: { ...access.headers, 'content-type': 'application/json' },
      });
      expect(b.status).toBe(503);
      generateAndBuild(root, 5);
      await waitFor(
        async () => (await json(`${server.url}/v1/funds?limit=1`)).status === 200,
        15_000,
        'first snapshot',
      );
    } finally {
      await server.stop();
    }
  });
});

describe('graceful stop', () => {
  it('SIGTERM, even twice, finishes a request whose body is still arriving, then exits 0', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'stop'), 5);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '1']);
    const funds = (await json(`${server.url}/v1/funds?limit=1`)).body.data as Array<{ code: string }>;
    const body = JSON.stringify({ codes: [funds[0].code] });
    const conn = await rawConnection(server.port);
    conn.write(
      `POST /v1/trailing-returns/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${access.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const exited = server.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    // An impatient second signal changes nothing: the request still finishes.
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    conn.write(body.slice(5));
    await waitFor(() => conn.received().includes('"code"'), 10_000, 'the in-flight response');
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(await exited).toBe(0);
    conn.close();
  });

  it('a reader of its output that goes away (serve 2>&1 | head -1) stops the logging, not the serving; SIGTERM still exits 0', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'epipe'), 5);
    const port = await freePort();
    // stdout and stderr on one pipe (a FIFO here), whose reader leaves after the first bytes.
    const fifo = join(dir, 'epipe.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, 'w');
    const child = track(
      spawn(
        process.execPath,
        [CLI, 'serve', '--port', String(port), ...access.flags, '--snapshots', snapshots, '--threads', '2'],
        { stdio: ['ignore', writer, writer], env: testEnv() },
      ),
      'fundreturns serve (output to a FIFO)',
    );
    closeSync(writer);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const buf = Buffer.alloc(1);
    await waitFor(
      () => {
        try {
          return readSync(reader, buf) > 0;
        } catch {
          return false; // EAGAIN: nothing written yet
        }
      },
      30_000,
      'the first byte of output',
    );
    closeSync(reader);
    // Any answer will do (a health check's 200 or 503 alike): the server is serving.
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null)) !== null,
      30_000,
      'the server answering',
    );
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`http://127.0.0.1:${port}/v1/funds/NOSUCH${i}`, { headers: access.headers });
      expect(r.status).toBe(404);
    }
    const started = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('SIGTERM under keep-alive load: each busy connection gets an answer with Connection: close, never a reset', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'drain'), 5);
    const server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '2']);
    const code = ((await json(`${server.url}/v1/funds?limit=1`)).body.data as Array<{ code: string }>)[0]
      .code;
    // Node's own keep-alive agent, as an API client would use it: it does not retry.
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const errors: string[] = [];
    let ok = 0;
    let told = 0;
    const once = () =>
      new Promise<boolean>((resolve) => {
        const req = httpGet(
          `${server.url}/v1/funds/${code}/trailing-returns`,
          { agent, headers: access.headers },
          (res) => {
            if (res.headers.connection === 'close') told++;
            res.resume();
            res.on('end', () => {
              ok++;
              resolve(true);
            });
          },
        );
        req.on('error', (e: NodeJS.ErrnoException) => {
          // A kept-alive connection that had answers before, or one opened for this request.
          errors.push(`${req.reusedSocket ? 'reused' : 'new'} ${e.code ?? e.message}`);
          resolve(false);
        });
      });
    const loops = Array.from({ length: 8 }, async () => {
      while (await once()) {
        /* until the server is gone */
      }
    });
    await waitFor(() => ok > 500, 10_000, 'load');
    const exited = server.stop('SIGTERM');
    await Promise.all(loops);
    agent.destroy();
    expect(await exited).toBe(0);
    // A busy kept-alive connection is told to go, never reset. A new one may be refused once
    // the server stops listening, or reset if it was still in the kernel's accept queue
    // then (a load balancer drains before stopping a server for that).
    expect(errors.filter((e) => e.startsWith('reused'))).toEqual([]);
    expect(told).toBeGreaterThan(0);
  });

  it('a signal while the snapshot loads and threads start stops the server once up, exit 0', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'early'), 20);
    const { child, output, exited } = spawnCli([
      'serve',
      '--port',
      '0',
      ...access.flags,
      '--snapshots',
      snapshots,
    ]);
    // The snapshot is logged as loaded before any thread starts listening.
    await waitFor(() => output().includes('"msg":"snapshot loaded"'), 30_000, 'the snapshot loaded');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(output()).toMatch(/"msg":"stopped"/);
  });
});

describe('start', () => {
  it('the port opens only once the snapshot is served: the first answer is data, never No data loaded', async () => {
    const { snapshots } = generateAndBuild(join(dir, 'first-answer'), 20);
    const port = await freePort();
    const { child, exited } = spawnCli([
      'serve',
      '--port',
      String(port),
      ...access.flags,
      '--snapshots',
      snapshots,
      '--threads',
      '2',
    ]);
    try {
      let first: { status: number; body: Record<string, unknown> } | null = null;
      const deadline = Date.now() + 60_000;
      while (first === null && Date.now() < deadline) {
        try {
          first = await json(`http://127.0.0.1:${port}/v1/funds?limit=1`);
        } catch {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
      expect(first?.status).toBe(200);
      expect(first?.body.data).toHaveLength(1);
    } finally {
      // Waited for: the next test's server takes over the same store.
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('a snapshots directory that does not exist is reported in /healthz', async () => {
    const missing = join(dir, 'no-such-dir', 'snapshots');
    const server = await startServe([...access.flags, '--snapshots', missing]);
    try {
      const h = await json(`${server.url}/healthz`);
      expect(h.body.status).toBe('empty');
      expect(h.body.last_error).toBe('NO_SNAPSHOTS_DIRECTORY: the snapshots directory does not exist');
      // Made, but nothing published in it yet: /healthz follows (a new reason, said once).
      mkdirSync(missing, { recursive: true });
      await waitFor(
        async () =>
          /CURRENT is missing or empty/.test(String((await json(`${server.url}/healthz`)).body.last_error)),
        10_000,
        'the new reason',
      );
    } finally {
      await server.stop();
    }
  });
});
