/** `fundreturns schedule`: refresh on a cron schedule, trading days only, with retries. */
import { resolve } from 'node:path';
import { type Command, noPositionals, parseCommand } from '../shared/command.js';
import { SNAPSHOTS } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import {
  checkProvider,
  REFRESH_SOURCE_FLAGS,
  refreshConfig,
  SCHEDULE_TIME_FLAGS,
  scheduleConfig,
} from './refresh-config.js';
import { runScheduleUntilSignal } from './refresh-run.js';

export const schedule: Command = {
  name: 'schedule',
  summary: 'run refresh on a cron schedule in New York time, trading days only, with retries',
  forms: [{ flags: [...REFRESH_SOURCE_FLAGS, SNAPSHOTS, ...SCHEDULE_TIME_FLAGS] }],
  run: runSchedule,
};

async function runSchedule(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(schedule, argv, io.env);
  noPositionals(args, 'schedule');
  const cfg = refreshConfig(args);
  checkProvider(cfg, io.env);
  const sched = scheduleConfig(args);
  const snapshots = resolve(SNAPSHOTS.read(args));
  await runScheduleUntilSignal(cfg, sched, snapshots, io);
  return 0;
}
