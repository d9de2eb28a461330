/**
 * Format 1, written before risk figures existed: funds, series, trailing and calendar,
 * without risk.arrow and rates.arrow. This release reads it, so that servers can be
 * upgraded before the machine that builds (docs/operating.md) and a rollback to an
 * older snapshot still serves. The two files are made in memory when such a snapshot
 * loads: risk.arrow from its series with the builder's own code (core/risk-columns.ts),
 * rates.arrow empty since the snapshot has no rates (so Sharpe and Sortino are null,
 * C41). Everything after the load sees the files of the current format.
 */
import { type Data, type Int32, Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import { RateTable } from '../risk.js';
import { ratesBatch, riskBatch } from './batches.js';
import { RiskRows } from './risk-columns.js';
import { FUNDS_FILE, RATES_FILE, RISK_FILE, SERIES_FILE } from './schema.js';
import { SnapshotError } from './snapshot-error.js';

type Buffers = Record<typeof FUNDS_FILE | typeof SERIES_FILE, SharedArrayBuffer>;

/** A column's values as the file holds them (Arrow views them without copying). */
function int32Values(table: Table, file: string, column: string): Int32Array {
  const data = table.getChild(column)?.data as Data<Int32>[] | undefined;
  if (data === undefined || data.length !== 1)
    throw new SnapshotError('ARROW_INVALID', `no single column ${column}`, file);
  return data[0].values as Int32Array;
}

function float64Values(table: Table, file: string, column: string): Float64Array {
  const data = table.getChild(column)?.data;
  if (data === undefined || data.length !== 1)
    throw new SnapshotError('ARROW_INVALID', `no single column ${column}`, file);
  return data[0].values as Float64Array;
}

function open(buffer: SharedArrayBuffer, file: string): Table {
  try {
    return tableFromIPC(new Uint8Array(buffer));
  } catch (e) {
    throw new SnapshotError('ARROW_INVALID', `unreadable Arrow IPC (${(e as Error).message})`, file, {
      cause: e,
    });
  }
}

function shared(bytes: Uint8Array): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(bytes.byteLength);
  new Uint8Array(sab).set(bytes);
  return sab;
}

/**
 * The risk.arrow and rates.arrow a format-1 snapshot lacks, as the writer would have
 * written them without a rates file. About 0.2 ms a fund (seconds at 32,000 funds),
 * once per load.
 */
export function filesFormat1Lacks(
  buffers: Buffers,
): Record<typeof RISK_FILE | typeof RATES_FILE, SharedArrayBuffer> {
  const funds = open(buffers[FUNDS_FILE], FUNDS_FILE);
  const series = open(buffers[SERIES_FILE], SERIES_FILE);
  const code = funds.getChild('code')?.toArray() as string[] | undefined;
  if (code === undefined) throw new SnapshotError('ARROW_INVALID', 'no column code', FUNDS_FILE);
  const offset = int32Values(funds, FUNDS_FILE, 'series_offset');
  const length = int32Values(funds, FUNDS_FILE, 'series_length');
  const date = int32Values(series, SERIES_FILE, 'date');
  const value = float64Values(series, SERIES_FILE, 'value');
  const rows = new RiskRows(code.length, RateTable.EMPTY);
  for (let i = 0; i < code.length; i++) {
    // A fund outside the series is the invariant checks' to report, after this.
    if (length[i] < 1 || offset[i] < 0 || offset[i] + length[i] > date.length) continue;
    rows.add(i, { date, value, start: offset[i], length: length[i] });
  }
  const rates = { date: new Int32Array(0), yield: new Float64Array(0) };
  return {
    [RISK_FILE]: shared(
      tableToIPC(new Table(riskBatch({ funds: { code, length: code.length }, risk: rows.columns })), 'file'),
    ),
    [RATES_FILE]: shared(tableToIPC(new Table(ratesBatch({ rates })), 'file')),
  };
}
