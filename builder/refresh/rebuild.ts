/**
 * The build a load or a redo ends with: the source directory built as `build --source`
 * then `build --daily` would, each step in a thread of its own, in a private directory
 * of the snapshots directory, checked against its manifest and published with one rename.
 */
import { createHash } from 'node:crypto';
import { createReadStream, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { prune, publish, readCurrent } from '../../core/snapshot/directory.js';
import { readManifest } from '../../core/snapshot/reader.js';
import { startWorker } from '../../core/start-thread.js';
import { BuildError } from '../build.js';
import { BuildReport, type ReportJson } from '../report/build-report.js';
import type { BuildStep, BuildStepResult } from './build-worker.js';

/** Where the build runs, inside the snapshots directory (same file system: published by a rename). */
const BUILD_DIR = '.first-load-build';

/**
 * A source directory built and published as `build --source` then `build --daily`
 * would (the same pipeline, so the same figures), in a private directory of the
 * snapshots directory; checked against its manifest, then published with one rename.
 * The caller holds the builds' lock.
 */
export async function rebuildAndPublish(opts: {
  source: string;
  snapshots: string;
  keep: number;
  maxBadShare: number;
  now: () => number;
  threads?: number;
  /** Whether the source's daily/ files are applied after the full build. */
  days: boolean;
  /** Publish even when the universe shrank to under half the live one's. */
  allowShrink?: boolean;
}): Promise<{ id: string; asOf: string; report: BuildReport }> {
  const work = join(opts.snapshots, BUILD_DIR);
  rmSync(work, { recursive: true, force: true });
  const step = {
    source: opts.source,
    snapshots: work,
    maxBadShare: opts.maxBadShare,
    threads: opts.threads ?? 1,
    allowShrink: opts.allowShrink,
    nowMs: opts.now(),
  };
  try {
    let report = await buildStep({ ...step, kind: 'full' });
    if (opts.days) report = mergeReports(report, await buildStep({ ...step, kind: 'daily' }));
    const id = readCurrent(work) as string;
    await verifyFiles(join(work, id));
    const asOf = readManifest(join(work, id)).as_of;
    const staging = join(opts.snapshots, `.tmp-${id}`);
    renameSync(join(work, id), staging);
    publish(opts.snapshots, staging, id);
    prune(opts.snapshots, opts.keep);
    return { id, asOf, report };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One build step in a thread of its own (build-worker.ts): its memory is gone when it returns. */
function buildStep(step: BuildStep): Promise<BuildReport> {
  return new Promise((resolve, reject) => {
    // A small young generation: the step's large arrays live outside V8's heap, and the
    // default semi-spaces added some 30 MB at the append's peak (1.38 → 1.35 GB
    // measured), which the first load, holding the loader's own memory too, needs
    // under 1.5 GiB; no slower in the same measurement.
    const worker = startWorker(import.meta.url, 'build-worker', {
      workerData: step,
      resourceLimits: { maxYoungGenerationSizeMb: 6 },
    });
    let result: BuildStepResult | null = null;
    worker.on('message', (m: BuildStepResult) => {
      result = m;
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      const r = result as BuildStepResult | null;
      if (r === null)
        reject(new Error(`the ${step.kind} build step ended (exit ${code}) before it said how it went`));
      else if (r.ok) resolve(reportFromJson(r.report));
      else
        reject(new BuildError(r.message, r.report === null ? new BuildReport() : reportFromJson(r.report)));
    });
  });
}

/** A report sent back from a build step, as the report object the summary and the manifest use. */
function reportFromJson(j: ReportJson): BuildReport {
  const r = new BuildReport();
  r.dataRows = j.dataRows;
  r.fundsIn = j.fundsIn;
  r.fundsOut = j.fundsOut;
  r.skippedFundTypes = j.skippedFundTypes;
  for (const s of Object.values(j.reasons)) r.addMany(s.first, s.count);
  for (const [code, n] of Object.entries(j.perFund)) r.perFund.set(code, n);
  r.examples.push(...j.examples);
  return r;
}

/** The full build's report with the append's rows and problems added, for one summary. */
function mergeReports(full: BuildReport, daily: BuildReport): BuildReport {
  full.dataRows += daily.dataRows;
  for (const s of daily.reasons.values()) full.addMany(s.first, s.count);
  return full;
}

/** Every file of a snapshot against its manifest (size and SHA-256), read as a stream. */
async function verifyFiles(dir: string): Promise<void> {
  const manifest = readManifest(dir);
  for (const [name, f] of Object.entries(manifest.files)) {
    const path = join(dir, name);
    const size = statSync(path).size;
    if (size !== f.bytes)
      throw new Error(`${path} has ${size} bytes, its manifest says ${f.bytes}: not published`);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    const digest = hash.digest('hex');
    if (digest !== f.sha256)
      throw new Error(`${path}: SHA-256 ${digest}, its manifest says ${f.sha256}: not published`);
  }
}
