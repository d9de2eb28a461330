/**
 * The Arrow record batches of a snapshot's funds, trailing and calendar files, built
 * straight from the typed columns the builder hands over (writer.ts writes them).
 */
import {
  Bool,
  type Data,
  DateDay,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  type Schema,
  Struct,
  Utf8,
} from 'apache-arrow';
import { RISK_WINDOWS, STORED_DATES, STORED_FIGURES } from '../risk.js';
import { type ColumnsToWrite, NULL_DAY, type RateColumns, type RiskColumns } from './columns.js';
import { firstDates, lastDates } from './invariants.js';
import { CALENDAR_SCHEMA, FUNDS_SCHEMA, RATES_SCHEMA, RISK_SCHEMA, TRAILING_SCHEMA } from './schema.js';

export const padded8 = (bytes: number) => (bytes + 7) & ~7;

export function batchOf(schema: Schema, length: number, children: Data[]): RecordBatch {
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }),
  );
}

function int32Data(a: Int32Array): Data<Int32> {
  return makeData({ type: new Int32(), length: a.length, nullCount: 0, data: a });
}

/** Date32 column; NULL_DAY entries become nulls (the slot keeps NULL_DAY). */
function dateData(a: Int32Array, nullable: boolean): Data<DateDay> {
  const v = nullable ? validity(a.length, (i) => a[i] !== NULL_DAY) : { nullCount: 0 };
  return makeData({ type: new DateDay(), length: a.length, data: a, ...v });
}

/** Float64 column; NaN entries become nulls (the slot keeps NaN). */
function float64Data(a: Float64Array, nullable: boolean): Data<Float64> {
  const v = nullable ? validity(a.length, (i) => !Number.isNaN(a[i])) : { nullCount: 0 };
  return makeData({ type: new Float64(), length: a.length, data: a, ...v });
}

function boolData(a: Uint8Array): Data<Bool> {
  const bits = new Uint8Array((a.length + 7) >> 3);
  for (let i = 0; i < a.length; i++) if (a[i]) bits[i >> 3] |= 1 << (i & 7);
  return makeData({ type: new Bool(), length: a.length, nullCount: 0, data: bits });
}

/** A validity bitmap, or none when nothing is null (Arrow's convention, and smaller files). */
function validity(
  n: number,
  isValid: (i: number) => boolean,
): { nullBitmap?: Uint8Array; nullCount: number } {
  const bits = new Uint8Array((n + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < n; i++) {
    if (isValid(i)) bits[i >> 3] |= 1 << (i & 7);
    else nullCount++;
  }
  return nullCount === 0 ? { nullCount } : { nullBitmap: bits, nullCount };
}

function utf8Data(strings: readonly (string | null)[]): Data<Utf8> {
  const n = strings.length;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const s = strings[i];
    if (s !== null) total += Buffer.byteLength(s, 'utf8');
  }
  const bytes = Buffer.alloc(total);
  const offsets = new Int32Array(n + 1);
  let pos = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = pos;
    const s = strings[i];
    if (s !== null) pos += bytes.write(s, pos, 'utf8');
  }
  offsets[n] = pos;
  const v = validity(n, (i) => strings[i] !== null);
  return makeData({ type: new Utf8(), length: n, valueOffsets: offsets, data: bytes, ...v });
}

/** The code column of a per-row table: fund codes repeated by fund index, copied as bytes. */
function codesByIndex(codes: Data<Utf8>, fund: Int32Array): Data<Utf8> {
  const srcOff = codes.valueOffsets;
  const src = codes.values;
  const n = fund.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += srcOff[fund[i] + 1] - srcOff[fund[i]];
  const bytes = new Uint8Array(total);
  const offsets = new Int32Array(n + 1);
  let pos = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = pos;
    const a = srcOff[fund[i]];
    const b = srcOff[fund[i] + 1];
    bytes.set(src.subarray(a, b), pos);
    pos += b - a;
  }
  offsets[n] = pos;
  return makeData({ type: new Utf8(), length: n, valueOffsets: offsets, data: bytes, nullCount: 0 });
}

export function fundsBatch(cols: ColumnsToWrite): RecordBatch {
  const { funds } = cols;
  const F = funds.length;
  const minDate = firstDates(cols);
  const maxDate = lastDates(cols);
  return batchOf(FUNDS_SCHEMA, F, [
    utf8Data(funds.code),
    utf8Data(funds.name),
    utf8Data(funds.country),
    utf8Data(funds.exchange),
    utf8Data(funds.currency),
    utf8Data(funds.type),
    utf8Data(funds.isin),
    boolData(funds.isInactive),
    dateData(funds.inactiveDate, true),
    dateData(minDate, false),
    dateData(maxDate, false),
    int32Data(funds.seriesOffset),
    int32Data(funds.seriesLength),
    float64Data(funds.lastClose, true),
  ]);
}

export function trailingBatch({ funds, trailing }: ColumnsToWrite): RecordBatch {
  return batchOf(TRAILING_SCHEMA, funds.length, [
    utf8Data(funds.code),
    dateData(trailing.asOf, false),
    ...trailing.values.map((v) => float64Data(v, true)),
  ]);
}

export function calendarBatch({ funds, calendar }: ColumnsToWrite): RecordBatch {
  return batchOf(CALENDAR_SCHEMA, calendar.length, [
    codesByIndex(utf8Data(funds.code), calendar.fund),
    int32Data(calendar.fund),
    int32Data(calendar.year),
    float64Data(calendar.totalReturn, true),
    dateData(calendar.startDate, false),
    dateData(calendar.endDate, false),
    boolData(calendar.isPartial),
  ]);
}

export function riskBatch({
  funds,
  risk,
}: {
  funds: Pick<ColumnsToWrite['funds'], 'code' | 'length'>;
  risk: RiskColumns;
}): RecordBatch {
  const perWindow = (w: number) => [
    ...risk.figures
      .slice(w * STORED_FIGURES.length, (w + 1) * STORED_FIGURES.length)
      .map((v) => float64Data(v, true)),
    ...risk.dates.slice(w * STORED_DATES.length, (w + 1) * STORED_DATES.length).map((d) => dateData(d, true)),
  ];
  return batchOf(RISK_SCHEMA, funds.length, [
    utf8Data(funds.code),
    dateData(risk.endMonth, false),
    ...RISK_WINDOWS.flatMap((_, w) => perWindow(w)),
  ]);
}

export function ratesBatch({ rates }: { rates: RateColumns }): RecordBatch {
  return batchOf(RATES_SCHEMA, rates.date.length, [
    dateData(rates.date, false),
    float64Data(rates.yield, false),
  ]);
}
