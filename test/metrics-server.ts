/** A `fundreturns serve` with its admin listener on a free port, for the /metrics tests. */
import { freePort, type ServerProcess, startServe } from './harness.js';

export interface MetricsServer {
  server: ServerProcess;
  adminPort: number;
  /** GET /metrics on the admin listener: its text. */
  scrape(): Promise<string>;
}

export async function startServeWithMetrics(
  flags: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<MetricsServer> {
  const adminPort = await freePort();
  const server = await startServe([...flags, '--threads', '2', '--admin-port', String(adminPort)], env);
  return {
    server,
    adminPort,
    scrape: async () => (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text(),
  };
}
