/**
 * Starting a worker thread from a module that may run compiled (dist/*.js) or from
 * source under tsx/vitest (*.ts): the worker file sits beside the caller with the
 * caller's extension. Node 20 does not apply loader hooks from a worker's
 * `execArgv: ['--import', 'tsx']` to the worker's own entry, so a .ts worker starts
 * from a small bootstrap that registers tsx and then imports it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(callerUrl: string, basename: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${basename}.js`, callerUrl), options);
  const url = new URL(`./${basename}.ts`, callerUrl).href;
  const bootstrap = `import(${JSON.stringify(tsxApiUrl())}).then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** tsx's API module as an absolute URL, so the bootstrap does not depend on the working directory. */
function tsxApiUrl(): string {
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json');
  return pathToFileURL(join(dirname(pkg), 'dist', 'esm', 'api', 'index.mjs')).href;
}
