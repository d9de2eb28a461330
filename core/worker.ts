/**
 * Starting a worker thread from a module that may run compiled (dist/*.js) or from
 * source under tsx/vitest (*.ts): the worker file sits beside the caller with the
 * caller's extension. A .ts worker first registers tsx's loader in its own thread,
 * since on Node 20 the parent's loader hooks do not reach workers' entry modules.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(callerUrl: string, basename: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${basename}.js`, callerUrl), options);
  const url = new URL(`./${basename}.ts`, callerUrl).href;
  const bootstrap = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
