/**
 * The admin listener (`serve --admin-port N [--admin-host H]`): GET /metrics in
 * Prometheus's text format on its own port, loopback by default, on the main thread
 * with node:http. Never on the public port: the metrics name routes, refusals and
 * the snapshot, which are the operator's business, and a scrape's work stays off the
 * serving threads.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface AdminListener {
  port: number;
  close(): Promise<void>;
}

export function startAdmin(registry: Registry, host: string, port: number): Promise<AdminListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: try /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end();
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (e: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${(e as Error).message}\n`);
      },
    );
  });
  // A scrape is one short request: idle keep-alive connections must not hold a stop.
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new Error(
          e.code === 'EADDRINUSE'
            ? `--admin-port ${port} on ${host} is in use`
            : `cannot listen on --admin-host ${host} --admin-port ${port}: ${e.code ?? e.message}`,
        ),
      ),
    );
    server.listen({ host, port, exclusive: true }, () => {
      const a = server.address();
      resolve({
        port: typeof a === 'object' && a !== null ? a.port : port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
