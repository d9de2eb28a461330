/** `fundreturns generate`: a synthetic source universe, as a data provider would deliver it. */
import { resolve } from 'node:path';
import { generateUniverse } from '../../builder/generate/index.js';
import { lastClosedDay } from '../../core/us-close.js';
import { UsageError } from '../shared/args.js';
import { type Command, noPositionals, parseCommand } from '../shared/command.js';
import { dayOption, dayOptionOr, intOption, stringOption, THREADS } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { progressLine } from '../shared/progress.js';

const OUT = stringOption('out', {
  value: 'DIR',
  required: true,
  help: 'the source directory to write (funds.csv, prices/, daily/)',
});
const FUNDS = intOption('funds', { default: 32000, min: 1, max: 1_000_000, help: 'how many funds' });
const SEED = intOption('seed', {
  default: 1,
  min: 0,
  max: 2 ** 31 - 1,
  help: 'the random seed: the same seed writes the same universe',
});
const FROM = dayOptionOr('from', '1970-01-01', { help: 'the first day of price history' });
const TO = dayOption('to', {
  value: 'last-close',
  help: 'the last day written (default: the last session that has closed, 16:00 New York time)',
});
const DAILY_DAYS = intOption('daily-days', {
  default: 0,
  min: 0,
  max: 1000,
  help: 'put the last K trading days into daily/<date>.csv files instead of the price files',
});
const HORIZON = dayOption('horizon', {
  value: 'YYYY-MM-DD',
  help: 'plan the universe to this day (default --to); refresh --provider synthetic delivers the days after --to',
});

export const generate: Command = {
  name: 'generate',
  summary: 'write a synthetic source universe (funds.csv, price files, daily files)',
  forms: [{ flags: [OUT, FUNDS, SEED, FROM, TO, DAILY_DAYS, HORIZON, THREADS] }],
  run: runGenerate,
};

async function runGenerate(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(generate, argv, io.env);
  noPositionals(args, 'generate');
  const out = OUT.read(args);
  if (out === undefined) throw new UsageError('generate: --out DIR is required');
  const from = FROM.read(args);
  // By default the last session that has closed: a demo built at 10:00 New York time
  // must not carry a close still to come (its /healthz age would be negative).
  const to = TO.read(args) ?? lastClosedDay();
  if (from > to) throw new UsageError('--from must not be after --to');
  const horizon = HORIZON.read(args) ?? to;
  if (horizon < to) throw new UsageError('--horizon must not be before --to');
  const progress = io.isTty ? progressLine('generate') : undefined;
  const summary = await generateUniverse({
    out: resolve(out),
    funds: FUNDS.read(args),
    seed: SEED.read(args),
    from,
    to,
    horizon,
    dailyDays: DAILY_DAYS.read(args),
    threads: THREADS.read(args),
    onProgress: progress,
  });
  progress?.(1, 1);
  io.err(
    `generated ${summary.funds} funds, ${summary.priceRows} price rows, ${summary.dailyFiles} daily files ` +
      `(${summary.dailyRows} rows), ${(summary.bytes / 2 ** 20).toFixed(1)} MiB, last date ${summary.lastDate} in ${out}`,
  );
  return 0;
}
