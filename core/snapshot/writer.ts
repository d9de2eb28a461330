/**
 * Writes a snapshot's four Arrow IPC files and manifest.json into an existing
 * directory. Publishing (temp directory, rename, CURRENT) is the builder's job.
 *
 * Memory: apache-arrow's file writer queues its output as a list of chunks that are
 * views onto the input typed arrays (only metadata, padding, bitmaps and the string
 * columns are new bytes), and we drain that queue straight to the file descriptor,
 * hashing as we go. So writing 100M series rows needs little beyond the columns.
 */

import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import {
  Bool,
  type Data,
  DateDay,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  type Schema,
  Struct,
  Utf8,
} from 'apache-arrow';
import { formatDay } from '../dates.js';
import { namingPath, namingPathAsync } from '../io-error.js';
import { NULL_DAY, type SnapshotColumns } from './columns.js';
import { SnapshotError } from './errors.js';
import { Hasher } from './hasher.js';
import { checkColumns, maxLastDate } from './invariants.js';
import { isIsoTimestamp, type Manifest, type ManifestFileEntry, validateManifest } from './manifest.js';
import {
  ARROW_FILES,
  type ArrowFileName,
  CALENDAR_FILE,
  CALENDAR_SCHEMA,
  FORMAT_VERSION,
  FUNDS_FILE,
  FUNDS_SCHEMA,
  MANIFEST_FILE,
  SERIES_FILE,
  SERIES_SCHEMA,
  TRAILING_FILE,
  TRAILING_SCHEMA,
} from './schema.js';

export interface SnapshotMeta {
  id: string;
  /** YYYY-MM-DD; must equal the latest last-observation date over all funds. */
  asOf: string;
  /** ISO 8601 timestamp. */
  builtAt: string;
  /** The build report summary: a JSON object. */
  report: unknown;
  source?: unknown;
}

/** Bounded so hashing and writing of one piece stay cache- and syscall-friendly, and below write(2)'s 2 GiB cap. */
const IO_PIECE = 16 << 20;

/**
 * Verifies the columns' invariants, writes funds/series/trailing/calendar.arrow and
 * manifest.json into `dir` (which must exist), fsyncing each file and the directory,
 * and returns the manifest. Throws SnapshotError ('INVARIANT_VIOLATED' for bad
 * columns, 'MANIFEST_INVALID' for bad meta) before writing anything.
 */
export async function writeSnapshotFiles(
  dir: string,
  cols: SnapshotColumns,
  meta: SnapshotMeta,
): Promise<Manifest> {
  checkColumns(cols);
  const asOf = formatDay(maxLastDate(cols));
  const metaError = (reason: string) => new SnapshotError('MANIFEST_INVALID', reason, MANIFEST_FILE);
  if (typeof meta.id !== 'string' || meta.id.length === 0) throw metaError('id is not a non-empty string');
  if (meta.asOf !== asOf) {
    throw metaError(`asOf ${JSON.stringify(meta.asOf)} differs from the latest last observation ${asOf}`);
  }
  if (!isIsoTimestamp(meta.builtAt))
    throw metaError(`builtAt ${JSON.stringify(meta.builtAt)} is not ISO 8601`);
  // A JSON round trip makes the stored report exactly what readers will parse back.
  const report: unknown = JSON.parse(JSON.stringify(meta.report ?? null));
  if (typeof report !== 'object' || report === null || Array.isArray(report)) {
    throw metaError('report is not a JSON object');
  }
  const source: unknown = meta.source === undefined ? undefined : JSON.parse(JSON.stringify(meta.source));

  const files = {} as Record<ArrowFileName, ManifestFileEntry>;
  const batches: Record<ArrowFileName, () => RecordBatch> = {
    [FUNDS_FILE]: () => fundsBatch(cols),
    [SERIES_FILE]: () => seriesBatch(cols),
    [TRAILING_FILE]: () => trailingBatch(cols),
    [CALENDAR_FILE]: () => calendarBatch(cols),
  };
  const hasher = new Hasher();
  try {
    for (const name of ARROW_FILES) {
      files[name] = await writeArrowFile(join(dir, name), batches[name](), hasher, ARROW_FILES.indexOf(name));
    }
  } finally {
    hasher.close();
  }

  const manifest: Manifest = {
    format_version: FORMAT_VERSION,
    id: meta.id,
    as_of: asOf,
    built_at: meta.builtAt,
    counts: {
      funds: cols.funds.length,
      observations: cols.series.date.length,
      calendar_rows: cols.calendar.length,
    },
    files,
    report: report as Record<string, unknown>,
  };
  if (source !== undefined) manifest.source = source;
  validateManifest(manifest);
  const manifestPath = join(dir, MANIFEST_FILE);
  namingPath(manifestPath, () => {
    const fd = openSync(manifestPath, 'w');
    try {
      writeFully(fd, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
  fsyncDir(dir);
  return manifest;
}

/**
 * Streams one Arrow file to disk. Column data in shared memory (the series) is
 * hashed by reference in the helper thread while this thread writes it; the
 * writer's own small pieces (metadata, padding) are sent as copies.
 */
async function writeArrowFile(
  path: string,
  batch: RecordBatch,
  hasher: Hasher,
  id: number,
): Promise<ManifestFileEntry> {
  const writer = new RecordBatchFileWriter();
  writer.write(batch);
  writer.finish();
  let bytes = 0;
  await namingPathAsync(path, async () => {
    const fd = openSync(path, 'w');
    try {
      for await (const chunk of writer) {
        for (let p = 0; p < chunk.byteLength; p += IO_PIECE) {
          const piece = chunk.subarray(p, Math.min(p + IO_PIECE, chunk.byteLength));
          if (piece.buffer instanceof SharedArrayBuffer) {
            hasher.update(id, piece.buffer, piece.byteOffset, piece.byteOffset + piece.byteLength);
          } else {
            hasher.updateBytes(id, piece);
          }
          writeFully(fd, piece);
        }
        bytes += chunk.byteLength;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
  return { bytes, sha256: await hasher.digest(id) };
}

function writeFully(fd: number, buf: Uint8Array): void {
  let p = 0;
  while (p < buf.byteLength) p += writeSync(fd, buf, p, buf.byteLength - p);
}

/** So that the new directory entries survive a crash, not just the file contents. */
export function fsyncDir(dir: string): void {
  namingPath(dir, () => {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
}

// --- Arrow data construction: every numeric column is handed over without copying.

function batchOf(schema: Schema, length: number, children: Data[]): RecordBatch {
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

function fundsBatch({ funds, series }: SnapshotColumns): RecordBatch {
  const F = funds.length;
  const minDate = new Int32Array(F);
  const maxDate = new Int32Array(F);
  for (let i = 0; i < F; i++) {
    minDate[i] = series.date[funds.seriesOffset[i]];
    maxDate[i] = series.date[funds.seriesOffset[i] + funds.seriesLength[i] - 1];
  }
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

function seriesBatch({ series }: SnapshotColumns): RecordBatch {
  return batchOf(SERIES_SCHEMA, series.date.length, [
    dateData(series.date, false),
    float64Data(series.value, false),
  ]);
}

function trailingBatch({ funds, trailing }: SnapshotColumns): RecordBatch {
  return batchOf(TRAILING_SCHEMA, funds.length, [
    utf8Data(funds.code),
    dateData(trailing.asOf, false),
    ...trailing.values.map((v) => float64Data(v, true)),
  ]);
}

function calendarBatch({ funds, calendar }: SnapshotColumns): RecordBatch {
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
