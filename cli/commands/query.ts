/** `fundreturns query`: one fund's row from the live snapshot, as the API would give it. */
import { codeProblem, unknownCodeDetail } from '../../core/codes.js';
import { SnapshotLookup } from '../../core/snapshot/lookup.js';
import { UsageError } from '../shared/args.js';
import { type Command, parseCommand } from '../shared/command.js';
import { dayOption, optionalIntOption, SNAPSHOTS } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { openCurrent } from './snapshot-open.js';

const AS_OF = dayOption('as-of', {
  value: 'YYYY-MM-DD',
  help: 'query trailing: the trailing returns as of this day (default: the latest)',
});
const YEAR = optionalIntOption('year', {
  value: 'YYYY',
  min: 1900,
  max: 2100,
  help: "query calendar: this year's row (default: the latest complete year, as the API chooses it)",
});

export const query: Command = {
  name: 'query',
  summary: "print one fund's row from the live snapshot (exit 3 when there is none)",
  forms: [{ args: 'fund|trailing|calendar CODE', flags: [AS_OF, YEAR, SNAPSHOTS] }],
  run: runQuery,
};

async function runQuery(argv: string[], io: CliIo): Promise<number> {
  const args = parseCommand(query, argv, io.env);
  const [kind, code, ...extra] = args.positionals;
  if (kind !== 'fund' && kind !== 'trailing' && kind !== 'calendar') {
    throw new UsageError('query: the first argument must be fund, trailing or calendar');
  }
  if (code === undefined) throw new UsageError('query: a fund CODE is required');
  // A code that cannot exist is a usage error, as it is a 422 over HTTP (C15), not "no row".
  const bad = codeProblem(code);
  if (bad !== null) throw new UsageError(`query: ${JSON.stringify(code)} cannot be a fund code (${bad})`);
  if (extra.length > 0) throw new UsageError(`query: unexpected argument ${JSON.stringify(extra[0])}`);
  const asOf = AS_OF.read(args);
  if (asOf !== undefined && kind !== 'trailing')
    throw new UsageError('--as-of applies to query trailing only');
  const year = YEAR.read(args);
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
