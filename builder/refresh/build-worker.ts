/**
 * Worker entry: one step of a first load's (or a redo's) build, `build --source` or
 * `build --daily`, in a thread of its own, so that all the memory the step held is
 * let go when the thread ends, before the next step starts (the same process
 * otherwise keeps the full build's buffers while the append allocates its own).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BuildError, buildFromSource } from '../build.js';
import { appendDaily } from '../daily-append.js';
import type { ReportJson } from '../report/build-report.js';

export interface BuildStep {
  kind: 'full' | 'daily';
  source: string;
  snapshots: string;
  maxBadShare: number;
  threads: number;
  allowShrink?: boolean;
  /** The service's clock when the step started (ms), for built_at and the future-date bound. */
  nowMs: number;
}

export type BuildStepResult =
  | { ok: true; report: ReportJson }
  | { ok: false; message: string; report: ReportJson | null };

const port = parentPort;
if (port === null) throw new Error('builder/refresh/build-worker must run as a worker thread');
const step = workerData as BuildStep;
const now = () => new Date(step.nowMs);
try {
  const r =
    step.kind === 'full'
      ? await buildFromSource({
          source: step.source,
          snapshots: step.snapshots,
          keep: 1,
          maxBadShare: step.maxBadShare,
          threads: step.threads,
          allowShrink: step.allowShrink,
          now,
        })
      : await appendDaily({
          daily: step.source,
          snapshots: step.snapshots,
          keep: 1,
          maxBadShare: step.maxBadShare,
          now,
        });
  port.postMessage({ ok: true, report: r.report.toJSON() } satisfies BuildStepResult);
} catch (e) {
  port.postMessage({
    ok: false,
    message: (e as Error).message,
    report: e instanceof BuildError ? e.report.toJSON() : null,
  } satisfies BuildStepResult);
}
