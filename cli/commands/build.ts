/**
 * `fundreturns build`: a snapshot from a source directory, or daily files appended to
 * the live one; builds into one snapshots directory take turns.
 */
import { resolve } from 'node:path';
import { type BuildResult, buildFromSource } from '../../builder/build.js';
import { appendDaily } from '../../builder/daily-append.js';
import { takeBuildLock } from '../../builder/lock.js';
import { UsageError } from '../shared/args.js';
import { type Command, noPositionals, parseCommand } from '../shared/command.js';
import { KEEP, MAX_BAD_SHARE, SNAPSHOTS, stringOption, switchOption, THREADS } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { progressLine } from '../shared/progress.js';

const SOURCE = stringOption('source', {
  value: 'DIR',
  text: '--source DIR | --daily FILE|DIR',
  help: 'the source directory to build from (funds.csv and prices/)',
});
const DAILY = stringOption('daily', {
  value: 'FILE|DIR',
  text: '',
  help: 'a daily file, or a directory of them, to append to the live snapshot (with --source: inside its daily/)',
});
const ALLOW_SHRINK = switchOption('allow-shrink', {
  help: "publish even with fewer than half the live snapshot's funds",
});

export const build: Command = {
  name: 'build',
  summary: 'build and publish a snapshot from a source directory, or append daily files to the live one',
  forms: [{ flags: [SOURCE, DAILY, SNAPSHOTS, KEEP, MAX_BAD_SHARE, ALLOW_SHRINK, THREADS] }],
  run: runBuild,
};

async function runBuild(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(build, argv, io.env);
  noPositionals(args, 'build');
  const source = SOURCE.read(args);
  const daily = DAILY.read(args);
  if (source === undefined && daily === undefined)
    throw new UsageError('build: --source DIR or --daily FILE is required');
  const snapshots = resolve(SNAPSHOTS.read(args));
  // Every flag is checked before the lock is taken: a usage error touches nothing.
  const opts: BuildOptions = {
    source,
    daily,
    snapshots,
    keep: KEEP.read(args),
    maxBadShare: MAX_BAD_SHARE.read(args),
    threads: THREADS.read(args),
    allowShrink: ALLOW_SHRINK.read(args),
  };
  const started = performance.now();
  const release = await takeBuildLock(snapshots, io.err);
  let result: BuildResult;
  try {
    result = await buildOrAppend(opts, io);
  } finally {
    await release();
  }
  io.err(result.report.summary());
  if (result.unchanged) {
    io.err(`nothing to append: ${result.id} stays live`);
    io.out(result.dir);
    return 0;
  }
  const secs = (performance.now() - started) / 1000;
  const rows = result.manifest.counts.observations;
  io.err(
    `published ${result.id} (${result.manifest.counts.funds} funds, ${rows} observations, ` +
      `${result.manifest.counts.calendar_rows} calendar rows) in ${secs.toFixed(1)} s; ` +
      `phases ${Object.entries(result.timings)
        .map(([k, v]) => `${k} ${v} ms`)
        .join(', ')}`,
  );
  io.out(result.dir);
  return 0;
}

interface BuildOptions {
  source: string | undefined;
  daily: string | undefined;
  snapshots: string;
  keep: number;
  maxBadShare: number;
  threads: number;
  allowShrink: boolean;
}

async function buildOrAppend(o: BuildOptions, io: CliIo): Promise<BuildResult> {
  const { source, daily, snapshots, keep, maxBadShare, threads } = o;
  if (source !== undefined && daily === undefined) {
    const progress = io.isTty ? progressLine('build') : undefined;
    const built = await buildFromSource({
      source: resolve(source),
      snapshots,
      keep,
      maxBadShare,
      allowShrink: o.allowShrink,
      threads,
      onProgress: progress ? (_phase, done, total) => progress(done, total) : undefined,
    });
    progress?.(1, 1);
    return built;
  }
  // With both flags, --daily names files inside the source directory's daily/ folder.
  const path =
    source !== undefined && daily !== undefined ? resolve(source, daily) : resolve(daily as string);
  return await appendDaily({ daily: path, snapshots, keep, maxBadShare });
}
