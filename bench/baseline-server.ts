/**
 * The yardstick for the HTTP benchmark: a trivial uWS server with the same thread
 * layout as ours (N worker threads on one port) answering every GET with a fixed
 * small body and every POST, once its body is in, with a fixed body of a chosen
 * size. Whatever our server reaches is reported as a share of this.
 *
 *   npx tsx bench/baseline-server.ts PORT THREADS POST_BODY_BYTES
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadUws } from '../server/uws.js';

interface Input {
  port: number;
  postBytes: number;
}

if (isMainThread) {
  const [port, threads, postBytes] = process.argv.slice(2).map(Number);
  const url = new URL(import.meta.url);
  const fromSource = url.pathname.endsWith('.ts');
  const workers: Worker[] = [];
  for (let i = 0; i < threads; i++) {
    const w = fromSource
      ? new Worker(
          `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`,
          {
            eval: true,
            workerData: { port, postBytes } satisfies Input,
          },
        )
      : new Worker(url, { workerData: { port, postBytes } satisfies Input });
    workers.push(w);
    await new Promise((resolve) => w.once('message', resolve));
  }
  process.stdout.write(`baseline listening on ${port}\n`);
  process.on('SIGTERM', () => process.exit(0));
} else {
  const input = workerData as Input;
  const small = Buffer.from('{"ok":true}');
  const big = Buffer.alloc(input.postBytes, 0x20);
  const app = loadUws().App();
  app.get('/*', (res) => {
    res.writeHeader('Content-Type', 'application/json').end(small);
  });
  app.post('/*', (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((_chunk, last) => {
      if (last && !aborted) {
        res.cork(() => {
          res.writeHeader('Content-Type', 'application/json').end(big);
        });
      }
    });
  });
  app.listen('127.0.0.1', input.port, (s) => {
    if (!s) throw new Error(`baseline cannot listen on ${input.port}`);
    parentPort!.postMessage('up');
  });
}
