/** `fundreturns inspect`: what the live snapshot holds, or its manifest with --json. */
import { type Command, noPositionals, parseCommand } from '../shared/command.js';
import { JSON_OUTPUT, SNAPSHOTS } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { openCurrent } from './snapshot-open.js';

export const inspect: Command = {
  name: 'inspect',
  summary: 'describe the live snapshot (its manifest with --json)',
  forms: [{ flags: [SNAPSHOTS, JSON_OUTPUT] }],
  run: runInspect,
};

async function runInspect(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(inspect, argv, io.env);
  noPositionals(args, 'inspect');
  const snap = await openCurrent(args);
  const m = snap.manifest;
  if (JSON_OUTPUT.read(args)) {
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
