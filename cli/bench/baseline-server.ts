/**
 * The yardstick for the HTTP benchmark: a trivial uWS server with the same thread
 * layout as ours (N worker threads on one port) answering every GET with a fixed
 * small body and every POST, once its body is in, with a fixed body of a chosen
 * size. Whatever our server reaches is reported as a share of this.
 *
 * Given a shape (our server's header lines and body size for one answer), GET
 * /shaped/NS/… answers with exactly that many bytes after NS nanoseconds of busy
 * work: how throughput falls with work per request on this machine, which tells
 * what a ratio target leaves for everything a server does besides sending bytes.
 *
 *   npx tsx cli/bench/baseline-server.ts PORT THREADS POST_BODY_BYTES [SHAPE_JSON]
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadUws } from '../../server/http/uws.js';

/** One of our answers as bytes on the wire: its header lines after Content-Type, and its body size. */
export interface Shape {
  headers: string;
  bodyBytes: number;
}

interface Input {
  port: number;
  postBytes: number;
  shape: Shape | null;
}

if (isMainThread) {
  const [port, threads, postBytes] = process.argv.slice(2, 5).map(Number);
  const shape = process.argv[5] ? (JSON.parse(process.argv[5]) as Shape) : null;
  const url = new URL(import.meta.url);
  const fromSource = url.pathname.endsWith('.ts');
  const workers: Worker[] = [];
  for (let i = 0; i < threads; i++) {
    const w = fromSource
      ? new Worker(
          `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`,
          {
            eval: true,
            workerData: { port, postBytes, shape } satisfies Input,
          },
        )
      : new Worker(url, { workerData: { port, postBytes, shape } satisfies Input });
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
  const shape = input.shape;
  if (shape !== null) {
    const headers = Buffer.from(`application/json${shape.headers}`, 'latin1');
    const body = Buffer.alloc(shape.bodyBytes, 0x20);
    app.get('/shaped/*', (res, req) => {
      const ns = Number.parseInt(req.getUrl().slice('/shaped/'.length), 10);
      const until = performance.now() + ns / 1e6;
      while (performance.now() < until) {
        // busy: the stand-in for a request's own work
      }
      res.writeHeader('Content-Type', headers).end(body);
    });
  }
  // /sized/N: a body of exactly N bytes (GET, or POST once its body is in), the
  // yardstick of the instruction counts (bench/instructions.bench.ts) for an answer of
  // that size.
  const sized = new Map<number, Buffer>();
  const sizedBody = (url: string) => {
    const n = Math.min(16 << 20, Number.parseInt(url.slice('/sized/'.length), 10) || 0);
    let b = sized.get(n);
    if (b === undefined) {
      b = Buffer.alloc(n, 0x20);
      sized.set(n, b);
    }
    return b;
  };
  app.get('/sized/*', (res, req) => {
    res.writeHeader('Content-Type', 'application/json').end(sizedBody(req.getUrl()));
  });
  app.post('/sized/*', (res, req) => {
    const body = sizedBody(req.getUrl());
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((_chunk, last) => {
      if (last && !aborted) res.cork(() => res.writeHeader('Content-Type', 'application/json').end(body));
    });
  });
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
