/**
 * `fundreturns`: one entry, one subcommand per job (DESIGN "Command line").
 * Exit codes: 0 done, 1 failed (a build that published nothing), 2 usage error,
 * 3 `query` found no row.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { BuildError, type BuildResult, buildFromSource } from '../builder/build.js';
import { appendDaily } from '../builder/daily.js';
import { generateUniverse } from '../builder/generate/index.js';
import { takeBuildLock } from '../builder/lock.js';
import { testClockProblem } from '../core/clock.js';
import { codeProblem, unknownCodeDetail } from '../core/codes.js';
import { fromYmd } from '../core/dates.js';
import { describeHolder, LockHeld, takeLock } from '../core/files/lock.js';
import { SnapshotLookup } from '../core/lookup.js';
import { readCurrent } from '../core/snapshot/directory.js';
import { loadSnapshot } from '../core/snapshot/reader.js';
import { lastClosedDay } from '../core/us-close.js';
import {
  boolFlag,
  dayFlag,
  floatFlag,
  HelpRequested,
  intFlag,
  type ParsedArgs,
  parseArgs,
  stringFlag,
  UsageError,
} from './args.js';
import { type CliIo, processIo } from './io.js';
import { progressLine } from './progress.js';
import { refreshCommand } from './refresh-command.js';
import { checkProvider, refreshConfig, scheduleConfig } from './refresh-config.js';
import { runScheduleUntilSignal } from './refresh-run.js';
import { commandUsage, flagSpec, usageText } from './usage.js';

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  const clockProblem = testClockProblem();
  if (clockProblem !== null) {
    io.err(`fundreturns: ${clockProblem}`);
    return 2;
  }
  try {
    switch (command) {
      case 'generate':
        return await generate(rest, io);
      case 'build':
        return await build(rest, io);
      case 'refresh':
        return await refreshCommand(rest, io);
      case 'schedule':
        return await scheduleCommand(rest, io);
      case 'query':
        return await query(rest, io);
      case 'inspect':
        return await inspect(rest, io);
      case 'serve':
        // The server side loads uWS; imported only when asked for.
        return await (await import('./serve.js')).runServe(rest, io);
      case 'mcp':
        // Only the MCP session: its stdout must carry JSON-RPC alone.
        return await (await import('./mcp.js')).runMcp(rest, io);
      case 'bench':
        // Load generation and reports: nothing else needs them loaded.
        return await (await import('./bench.js')).runBenchCommand(rest, io);
      case 'accounts':
      case 'keys': {
        // Store administration only: no uWS, no snapshot.
        const access = await import('./accounts.js');
        return await access.run(command, rest, io);
      }
      case 'users':
        // Dashboard people (issue 22), against the same store.
        return await (await import('./users.js')).run(rest, io);
      case 'store':
        // Backup and restore of the same store.
        return await (await import('./store.js')).run(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(usageText());
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (e) {
    if (e instanceof HelpRequested) {
      io.out(usageText());
      return 0;
    }
    if (e instanceof UsageError) {
      // The mistake, the one command's usage and where the rest is: not all fifteen lines.
      const usage = command === undefined ? null : commandUsage(command);
      io.err(`fundreturns: ${e.message}`);
      if (usage !== null) io.err(usage);
      io.err('see `fundreturns --help`');
      return 2;
    }
    if (e instanceof BuildError) {
      io.err(e.report.summary());
      io.err(`fundreturns: build failed: ${e.message}`);
      return 1;
    }
    io.err(`fundreturns: ${(e as Error).message}`);
    return 1;
  }
}

function threadsFlag(args: ParsedArgs): number {
  return intFlag(args, 'threads', availableParallelism(), 1, 256);
}

function noPositionals(args: ParsedArgs, command: string): void {
  if (args.positionals.length > 0)
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(args.positionals[0])}`);
}

async function generate(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, flagSpec('generate'), io.env);
  noPositionals(args, 'generate');
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('generate: --out DIR is required');
  const from = dayFlag(args, 'from') ?? fromYmd(1970, 1, 1);
  // By default the last session that has closed: a demo built at 10:00 New York time
  // must not carry a close still to come (its /healthz age would be negative).
  const to = dayFlag(args, 'to') ?? lastClosedDay();
  if (from > to) throw new UsageError('--from must not be after --to');
  const horizon = dayFlag(args, 'horizon') ?? to;
  if (horizon < to) throw new UsageError('--horizon must not be before --to');
  const progress = io.isTty ? progressLine('generate') : undefined;
  const summary = await generateUniverse({
    out: resolve(out),
    funds: intFlag(args, 'funds', 32000, 1, 1_000_000),
    seed: intFlag(args, 'seed', 1, 0, 2 ** 31 - 1),
    from,
    to,
    horizon,
    dailyDays: intFlag(args, 'daily-days', 0, 0, 1000),
    threads: threadsFlag(args),
    onProgress: progress,
  });
  progress?.(1, 1);
  io.err(
    `generated ${summary.funds} funds, ${summary.priceRows} price rows, ${summary.dailyFiles} daily files ` +
      `(${summary.dailyRows} rows), ${(summary.bytes / 2 ** 20).toFixed(1)} MiB, last date ${summary.lastDate} in ${out}`,
  );
  return 0;
}

async function build(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, flagSpec('build'), io.env);
  noPositionals(args, 'build');
  const source = stringFlag(args, 'source');
  const daily = stringFlag(args, 'daily');
  if (source === undefined && daily === undefined)
    throw new UsageError('build: --source DIR or --daily FILE is required');
  const snapshots = resolve(stringFlag(args, 'snapshots', './snapshots'));
  const keep = intFlag(args, 'keep', 5, 1, 1000);
  const maxBadShare = floatFlag(args, 'max-bad-share', 0.01, 0, 1);
  const threads = threadsFlag(args);
  const started = performance.now();
  const release = await takeBuildLock(snapshots, io.err);
  let result: BuildResult;
  try {
    result = await runBuild();
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

  async function runBuild(): Promise<BuildResult> {
    if (source !== undefined && daily === undefined) {
      const progress = io.isTty ? progressLine('build') : undefined;
      const built = await buildFromSource({
        source: resolve(source),
        snapshots,
        keep,
        maxBadShare,
        allowShrink: boolFlag(args, 'allow-shrink'),
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
}

async function scheduleCommand(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, flagSpec('schedule'), io.env);
  noPositionals(args, 'schedule');
  const cfg = refreshConfig(args);
  checkProvider(cfg, io.env);
  const sched = scheduleConfig(args, { cron: 'cron', tz: 'tz', retry: 'retry-minutes' });
  const snapshots = resolve(stringFlag(args, 'snapshots', './snapshots'));
  await runScheduleUntilSignal(cfg, sched, snapshots, io);
  return 0;
}

async function openCurrent(args: ParsedArgs) {
  const snapshots = resolve(stringFlag(args, 'snapshots', './snapshots'));
  if (!existsSync(snapshots)) throw new Error(`the snapshots directory ${snapshots} does not exist`);
  const current = readCurrent(snapshots);
  if (current === null)
    throw new Error(`no snapshot published in ${snapshots}: run \`fundreturns build\` first`);
  try {
    return await loadSnapshot(join(snapshots, current));
  } catch (e) {
    // The verifier speaks of files; say which snapshot they belong to.
    throw new Error(`snapshot ${current} in ${snapshots} refused: ${(e as Error).message}`);
  }
}

async function query(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, flagSpec('query'), io.env);
  const [kind, code, ...extra] = args.positionals;
  if (kind !== 'fund' && kind !== 'trailing' && kind !== 'calendar') {
    throw new UsageError('query: the first argument must be fund, trailing or calendar');
  }
  if (code === undefined) throw new UsageError('query: a fund CODE is required');
  // A code that cannot exist is a usage error, as it is a 422 over HTTP (C15), not "no row".
  const bad = codeProblem(code);
  if (bad !== null) throw new UsageError(`query: ${JSON.stringify(code)} cannot be a fund code (${bad})`);
  if (extra.length > 0) throw new UsageError(`query: unexpected argument ${JSON.stringify(extra[0])}`);
  const asOf = dayFlag(args, 'as-of');
  if (asOf !== undefined && kind !== 'trailing')
    throw new UsageError('--as-of applies to query trailing only');
  const year = args.flags.has('year') ? intFlag(args, 'year', 0, 1900, 2100) : undefined;
  if (year !== undefined && kind !== 'calendar')
    throw new UsageError('--year applies to query calendar only');

  const snap = await openCurrent(args);
  const lookup = new SnapshotLookup(snap.columns);
  const i = lookup.find(code);
  let row: string | null = null;
  if (i >= 0) {
    if (kind === 'fund') row = lookup.fundJson(i);
    else if (kind === 'trailing')
      row = asOf === undefined ? lookup.latestTrailingJson(i) : lookup.trailingAtJson(i, asOf);
    else row = year === undefined ? lookup.defaultCalendarJson(i) : lookup.calendarYearJson(i, year);
  }
  io.out(row ?? 'null');
  // As the API's 404 says it (C21), on stderr: stdout stays the row or `null` for scripts.
  if (i < 0) io.err(`fundreturns: ${unknownCodeDetail(code, (c) => lookup.find(c) >= 0)}`);
  return row === null ? 3 : 0;
}

async function inspect(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, flagSpec('inspect'), io.env);
  noPositionals(args, 'inspect');
  const snap = await openCurrent(args);
  const m = snap.manifest;
  if (boolFlag(args, 'json')) {
    io.out(JSON.stringify(m, null, 2));
    return 0;
  }
  const bytes = Object.values(m.files).reduce((a, f) => a + f.bytes, 0);
  const report = m.report as { dataRows?: number; skippedRows?: number };
  io.out(
    [
      `snapshot      ${m.id}`,
      `directory     ${snap.dir}`,
      `format        ${m.format_version}`,
      `as_of         ${m.as_of}`,
      `built_at      ${m.built_at}`,
      `funds         ${m.counts.funds}`,
      `observations  ${m.counts.observations}`,
      `calendar rows ${m.counts.calendar_rows}`,
      `bytes         ${bytes} (${(bytes / 2 ** 20).toFixed(1)} MiB)`,
      ...Object.entries(m.files).map(
        ([name, f]) => `  ${name.padEnd(15)} ${String(f.bytes).padStart(12)}  sha256 ${f.sha256}`,
      ),
      `report        ${report.dataRows ?? '?'} data rows, ${report.skippedRows ?? '?'} skipped`,
    ].join('\n'),
  );
  return 0;
}
