/**
 * Loads a snapshot directory into SharedArrayBuffers, verifies it (manifest,
 * sizes, SHA-256, Arrow structure, invariants) and returns its columns as typed
 * arrays viewing those buffers, so that the server can hand the same memory to
 * every worker thread (attachSnapshot) without copying or re-hashing.
 *
 * apache-arrow's reader does not copy column bodies when given a Uint8Array over
 * the whole file: it makes typed-array views at the offsets in the IPC metadata
 * (8-byte aligned by the format). The decoder checks `.buffer === sab` for every
 * numeric column anyway, so a library change that copied would be caught, not
 * silently multiply memory by the thread count.
 */

import { readFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Bool,
  type Data,
  type DataType,
  type RecordBatch,
  type Schema,
  tableFromIPC,
  type Utf8,
} from 'apache-arrow';
import { formatDay } from '../dates.js';
import { RISK_WINDOW_KEYS, STORED_DATES, STORED_FIGURES } from '../risk.js';
import { type FundType, TRAILING_KEYS } from '../types.js';
import { NULL_DAY, type SnapshotColumns } from './columns.js';
import { filesFormat1Lacks } from './format-1.js';
import { Hasher } from './hasher.js';
import { checkColumns, maxLastDate } from './invariants.js';
import { type Manifest, parseManifest, validateManifest } from './manifest.js';
import {
  ARROW_FILES,
  type ArrowFileName,
  arrowFilesOf,
  CALENDAR_FILE,
  FUNDS_FILE,
  MANIFEST_FILE,
  RATES_FILE,
  RISK_FILE,
  SCHEMAS,
  SERIES_FILE,
  TRAILING_FILE,
} from './schema.js';
import { SnapshotError } from './snapshot-error.js';

/** What a worker thread needs to rebuild the columns: postMessage shares the buffers, it does not copy them. */
export interface SharedSnapshot {
  manifest: Manifest;
  buffers: Record<ArrowFileName, SharedArrayBuffer>;
}

export interface LoadedSnapshot extends SharedSnapshot {
  dir: string;
  columns: SnapshotColumns;
}

export interface LoadOptions {
  /** Default true. Turning it off skips only the SHA-256 pass; sizes and invariants are still checked. */
  verifyChecksums?: boolean;
}

/** Large enough that per-read overhead vanishes, small enough that the hash worker starts early. */
const READ_PIECE = 32 << 20;

/** Reads and validates `<dir>/manifest.json` (FILE_MISSING, MANIFEST_INVALID, VERSION_UNSUPPORTED). */
export function readManifest(dir: string): Manifest {
  let text: string;
  try {
    text = readFileSync(join(dir, MANIFEST_FILE), 'utf8');
  } catch (e) {
    throw new SnapshotError('FILE_MISSING', `cannot read (${(e as Error).message})`, MANIFEST_FILE, {
      cause: e,
    });
  }
  return parseManifest(text);
}

/**
 * Loads and verifies the snapshot in `dir`. Asynchronous: file reads run on libuv's
 * pool and SHA-256 runs in a short-lived worker thread that hashes each piece as
 * soon as it is read, so hashing overlaps reading, decoding and the invariant scans
 * on this thread (both are memory-bound; on two cores this halves load time). A
 * checksum mismatch is reported in preference to any decoding or invariant error,
 * since it explains them. Throws SnapshotError with a code and a message naming the
 * file and the reason.
 */
export async function loadSnapshot(dir: string, opts: LoadOptions = {}): Promise<LoadedSnapshot> {
  const manifest = readManifest(dir);
  const hasher = (opts.verifyChecksums ?? true) ? new Hasher() : null;
  try {
    const buffers = {} as Record<ArrowFileName, SharedArrayBuffer>;
    const digests: [ArrowFileName, Promise<string>][] = [];
    for (const name of arrowFilesOf(manifest.format_version)) {
      const id = digests.length;
      buffers[name] = await readShared(join(dir, name), name, manifest.files[name]!.bytes, hasher, id);
      if (hasher !== null) digests.push([name, hasher.digest(id)]);
    }
    let columns: SnapshotColumns | undefined;
    let failure: unknown;
    try {
      if (manifest.format_version === 1) Object.assign(buffers, filesFormat1Lacks(buffers));
      columns = decodeColumns(buffers, true);
      checkAgainstManifest(manifest, columns);
    } catch (e) {
      failure = e;
    }
    for (const [name, digest] of digests) {
      const actual = await digest;
      const expected = manifest.files[name]!.sha256;
      if (actual !== expected) {
        throw new SnapshotError('CHECKSUM_MISMATCH', `SHA-256 is ${actual}, manifest says ${expected}`, name);
      }
    }
    if (failure !== undefined || columns === undefined) throw failure;
    return { dir, manifest, buffers, columns };
  } finally {
    hasher?.close();
  }
}

/**
 * Rebuilds the column views over buffers that loadSnapshot already verified
 * (typically in a worker thread). Cheap: no hashing and no invariant scans; strings
 * and booleans are decoded, numeric columns are views.
 */
export function attachSnapshot(shared: SharedSnapshot): SnapshotColumns {
  validateManifest(shared.manifest);
  for (const name of ARROW_FILES) {
    if (!(shared.buffers[name] instanceof SharedArrayBuffer)) {
      throw new SnapshotError('FILE_MISSING', 'no SharedArrayBuffer was handed over', name);
    }
  }
  return decodeColumns(shared.buffers, false);
}

async function readShared(
  path: string,
  name: ArrowFileName,
  expectedBytes: number,
  hasher: Hasher | null,
  hashId: number,
): Promise<SharedArrayBuffer> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw new SnapshotError('FILE_MISSING', `cannot open (${(e as Error).message})`, name, { cause: e });
  }
  try {
    const { size } = await fh.stat();
    if (size !== expectedBytes) {
      throw new SnapshotError('SIZE_MISMATCH', `${size} bytes on disk, manifest says ${expectedBytes}`, name);
    }
    const sab = new SharedArrayBuffer(size);
    const u8 = new Uint8Array(sab);
    for (let pos = 0; pos < size; ) {
      const end = Math.min(pos + READ_PIECE, size);
      while (pos < end) {
        const { bytesRead } = await fh.read(u8, pos, end - pos, pos);
        if (bytesRead === 0)
          throw new SnapshotError('SIZE_MISMATCH', `file ended at byte ${pos} while being read`, name);
        hasher?.update(hashId, sab, pos, pos + bytesRead);
        pos += bytesRead;
      }
    }
    return sab;
  } finally {
    await fh.close();
  }
}

/** Plain CommonJS so that it runs in an eval worker whatever the host's loader (tsx, vitest, compiled). */

function checkAgainstManifest(manifest: Manifest, cols: SnapshotColumns): void {
  const mismatch = (what: string, inManifest: unknown, inFiles: unknown) =>
    new SnapshotError(
      'INVARIANT_VIOLATED',
      `manifest ${what} is ${JSON.stringify(inManifest)} but the files hold ${JSON.stringify(inFiles)}`,
      MANIFEST_FILE,
    );
  if (manifest.counts.funds !== cols.funds.length)
    throw mismatch('counts.funds', manifest.counts.funds, cols.funds.length);
  if (manifest.counts.observations !== cols.series.date.length) {
    throw mismatch('counts.observations', manifest.counts.observations, cols.series.date.length);
  }
  if (manifest.counts.calendar_rows !== cols.calendar.length) {
    throw mismatch('counts.calendar_rows', manifest.counts.calendar_rows, cols.calendar.length);
  }
  const asOf = formatDay(maxLastDate(cols));
  if (manifest.as_of !== asOf) throw mismatch('as_of', manifest.as_of, asOf);
}

// --- Arrow decoding

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // "ARROW1"

function arrowInvalid(file: string, reason: string, cause?: unknown): SnapshotError {
  return new SnapshotError('ARROW_INVALID', reason, file, cause === undefined ? undefined : { cause });
}

function openBatch(name: ArrowFileName, sab: SharedArrayBuffer): RecordBatch {
  const u8 = new Uint8Array(sab);
  const n = u8.length;
  // The IPC *file* format starts and ends with the magic; a stream or a truncated file does not.
  if (n < 12 || MAGIC.some((b, i) => u8[i] !== b || u8[n - 6 + i] !== b)) {
    throw arrowInvalid(name, 'not an Arrow IPC file (ARROW1 magic missing at start or end)');
  }
  let batches: RecordBatch[];
  let schema: Schema;
  try {
    const table = tableFromIPC(u8);
    batches = table.batches;
    schema = table.schema;
  } catch (e) {
    throw arrowInvalid(name, `unreadable Arrow IPC (${(e as Error).message})`, e);
  }
  checkSchema(name, schema, SCHEMAS[name]);
  if (batches.length !== 1) throw arrowInvalid(name, `${batches.length} record batches, expected exactly 1`);
  const batch = batches[0];
  for (let i = 0; i < batch.data.children.length; i++) {
    const d = batch.data.children[i];
    if (d.offset !== 0 || d.length !== batch.numRows) {
      throw arrowInvalid(name, `column ${schema.fields[i].name} is not a whole column of the batch`);
    }
  }
  return batch;
}

function checkSchema(name: string, actual: Schema, expected: Schema): void {
  const describe = (s: Schema) =>
    s.fields.map((f) => `${f.name}: ${f.type}${f.nullable ? '' : ' not null'}`).join(', ');
  const same =
    actual.fields.length === expected.fields.length &&
    actual.fields.every((f, i) => {
      const e = expected.fields[i];
      return f.name === e.name && String(f.type) === String(e.type) && f.nullable === e.nullable;
    });
  if (!same) throw arrowInvalid(name, `schema is (${describe(actual)}), expected (${describe(expected)})`);
}

/** Reads Arrow columns of one file; with `verify`, also checks null slots and null counts. */
class ColumnReader {
  constructor(
    readonly file: ArrowFileName,
    readonly batch: RecordBatch,
    readonly sab: SharedArrayBuffer,
    readonly verify: boolean,
  ) {}

  #data<T extends DataType>(column: string): Data<T> {
    const i = this.batch.schema.fields.findIndex((f) => f.name === column);
    return this.batch.data.children[i] as Data<T>;
  }

  #zeroCopy<A extends Int32Array | Float64Array>(column: string, values: A): A {
    const n = this.batch.numRows;
    if (values.length < n)
      throw arrowInvalid(this.file, `column ${column} holds ${values.length} values for ${n} rows`);
    const view = (values.length === n ? values : values.subarray(0, n)) as A;
    // An empty column (rates.arrow without rates) has no body to share.
    if (view.buffer !== this.sab && n > 0) {
      throw arrowInvalid(
        this.file,
        `column ${column} was copied instead of viewed (misaligned body buffer?)`,
      );
    }
    return view;
  }

  #noNulls(column: string, d: Data): void {
    if (this.verify && d.nullCount !== 0)
      throw arrowInvalid(this.file, `column ${column} has nulls but must not`);
  }

  /** Int32 or Date32 without nulls. */
  int32(column: string): Int32Array {
    const d = this.#data(column);
    this.#noNulls(column, d);
    return this.#zeroCopy(column, d.values as Int32Array);
  }

  /** Date32 whose null slots hold NULL_DAY (checked when verifying). */
  nullableDay(column: string): Int32Array {
    const d = this.#data(column);
    const a = this.#zeroCopy(column, d.values as Int32Array);
    if (this.verify) {
      const bits = d.nullBitmap;
      for (let i = 0; i < a.length; i++) {
        const valid = bits === undefined || bits.length === 0 || ((bits[i >> 3] >> (i & 7)) & 1) === 1;
        if (valid === (a[i] === NULL_DAY)) {
          throw this.#slotError(
            column,
            i,
            valid ? `holds the reserved day ${NULL_DAY}` : `is null but its slot is not ${NULL_DAY}`,
          );
        }
      }
    }
    return a;
  }

  float64(column: string): Float64Array {
    const d = this.#data(column);
    this.#noNulls(column, d);
    return this.#zeroCopy(column, d.values as Float64Array);
  }

  /** Float64 whose null slots hold NaN (checked when verifying), so the raw array can be used alone. */
  nullableFloat64(column: string): Float64Array {
    const d = this.#data(column);
    const a = this.#zeroCopy(column, d.values as Float64Array);
    if (this.verify) {
      const bits = d.nullBitmap;
      const allValid = bits === undefined || bits.length === 0;
      if (allValid && d.nullCount > 0)
        throw arrowInvalid(this.file, `column ${column} counts nulls but has no bitmap`);
      for (let i = 0; i < a.length; i++) {
        const valid = allValid || ((bits[i >> 3] >> (i & 7)) & 1) === 1;
        if (valid === Number.isNaN(a[i])) {
          throw this.#slotError(
            column,
            i,
            valid ? 'holds NaN but is not null' : 'is null but its slot is not NaN',
          );
        }
      }
    }
    return a;
  }

  bool(column: string): Uint8Array {
    const d = this.#data<Bool>(column);
    this.#noNulls(column, d);
    const bits = d.values;
    const n = this.batch.numRows;
    if (bits.length < (n + 7) >> 3) throw arrowInvalid(this.file, `column ${column} bitmap is short`);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = (bits[i >> 3] >> (i & 7)) & 1;
    return out;
  }

  utf8Raw(
    column: string,
    nullable: boolean,
  ): { offsets: Int32Array; bytes: Uint8Array; nulls: Uint8Array | null } {
    const d = this.#data<Utf8>(column);
    if (!nullable) this.#noNulls(column, d);
    const n = this.batch.numRows;
    const offsets = d.valueOffsets;
    const bytes = d.values;
    if (offsets.length < n + 1 || offsets[0] < 0 || offsets[n] > bytes.length) {
      throw arrowInvalid(this.file, `column ${column} offsets point outside its data`);
    }
    for (let i = 0; i < n; i++) {
      if (offsets[i + 1] < offsets[i])
        throw arrowInvalid(this.file, `column ${column} offsets decrease at row ${i}`);
    }
    const bm = d.nullBitmap;
    return { offsets, bytes, nulls: nullable && d.nullCount > 0 && bm && bm.length > 0 ? bm : null };
  }

  strings(column: string, nullable: boolean): (string | null)[] {
    const { offsets, bytes, nulls } = this.utf8Raw(column, nullable);
    const n = this.batch.numRows;
    const out: (string | null)[] = new Array(n);
    const from = offsets[0];
    const to = offsets[n];
    let ascii = true;
    for (let i = from; i < to; i++) {
      if (bytes[i] >= 0x80) {
        ascii = false;
        break;
      }
    }
    // One decode plus substrings is several times faster than a decode per row.
    const whole = ascii
      ? Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1')
      : '';
    for (let i = 0; i < n; i++) {
      if (nulls !== null && ((nulls[i >> 3] >> (i & 7)) & 1) === 0) {
        out[i] = null;
      } else if (ascii) {
        out[i] = whole.slice(offsets[i] - from, offsets[i + 1] - from);
      } else {
        try {
          out[i] = UTF8.decode(bytes.subarray(offsets[i], offsets[i + 1]));
        } catch (e) {
          throw arrowInvalid(this.file, `column ${column} row ${i} is not valid UTF-8`, e);
        }
      }
    }
    return out;
  }

  #slotError(column: string, row: number, reason: string): SnapshotError {
    return new SnapshotError('INVARIANT_VIOLATED', `column ${column} row ${row} ${reason}`, this.file);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function sameUtf8(
  a: { offsets: Int32Array; bytes: Uint8Array },
  i: number,
  b: { offsets: Int32Array; bytes: Uint8Array },
  j: number,
): boolean {
  const a0 = a.offsets[i];
  const len = a.offsets[i + 1] - a0;
  const b0 = b.offsets[j];
  if (b.offsets[j + 1] - b0 !== len) return false;
  for (let k = 0; k < len; k++) if (a.bytes[a0 + k] !== b.bytes[b0 + k]) return false;
  return true;
}

function decodeColumns(buffers: Record<ArrowFileName, SharedArrayBuffer>, verify: boolean): SnapshotColumns {
  const r = {} as Record<ArrowFileName, ColumnReader>;
  for (const name of ARROW_FILES)
    r[name] = new ColumnReader(name, openBatch(name, buffers[name]), buffers[name], verify);
  const f = r[FUNDS_FILE];
  const s = r[SERIES_FILE];
  const t = r[TRAILING_FILE];
  const c = r[CALENDAR_FILE];
  const k = r[RISK_FILE];
  const q = r[RATES_FILE];

  const cols: SnapshotColumns = {
    funds: {
      length: f.batch.numRows,
      code: f.strings('code', false) as string[],
      name: f.strings('name', true),
      country: f.strings('country', true),
      exchange: f.strings('exchange', true),
      currency: f.strings('currency', true),
      type: f.strings('type', false) as FundType[],
      isin: f.strings('isin', true),
      isInactive: f.bool('is_inactive'),
      inactiveDate: f.nullableDay('inactive_date'),
      seriesOffset: f.int32('series_offset'),
      seriesLength: f.int32('series_length'),
      lastClose: f.nullableFloat64('last_close'),
    },
    series: { date: s.int32('date'), value: s.float64('value') },
    trailing: { asOf: t.int32('as_of_date'), values: TRAILING_KEYS.map((k) => t.nullableFloat64(k)) },
    calendar: {
      length: c.batch.numRows,
      fund: c.int32('fund_index'),
      year: c.int32('year'),
      totalReturn: c.nullableFloat64('total_return'),
      startDate: c.int32('start_date'),
      endDate: c.int32('end_date'),
      isPartial: c.bool('is_partial'),
    },
    risk: {
      endMonth: k.int32('end_month'),
      figures: RISK_WINDOW_KEYS.flatMap((w) => STORED_FIGURES.map((f) => k.nullableFloat64(`${f}_${w}`))),
      dates: RISK_WINDOW_KEYS.flatMap((w) => STORED_DATES.map((d) => k.nullableDay(`${d}_${w}`))),
    },
    rates: { date: q.int32('date'), yield: q.float64('yield') },
  };
  if (!verify) return cols;

  checkColumns(cols);
  const violated = (file: string, reason: string) => new SnapshotError('INVARIANT_VIOLATED', reason, file);
  const { funds, series } = cols;
  const minDate = f.int32('min_return_date');
  const maxDate = f.int32('max_return_date');
  for (let i = 0; i < funds.length; i++) {
    const first = series.date[funds.seriesOffset[i]];
    const last = series.date[funds.seriesOffset[i] + funds.seriesLength[i] - 1];
    if (minDate[i] !== first || maxDate[i] !== last) {
      throw violated(
        FUNDS_FILE,
        `fund ${i} (${funds.code[i]}): min/max_return_date ${formatDay(minDate[i])}..${formatDay(maxDate[i])} differ from its series ${formatDay(first)}..${formatDay(last)}`,
      );
    }
  }
  if (t.batch.numRows !== funds.length) {
    throw violated(TRAILING_FILE, `${t.batch.numRows} rows, expected one per fund (${funds.length})`);
  }
  const fundCodes = f.utf8Raw('code', false);
  const trailingCodes = t.utf8Raw('code', false);
  for (let i = 0; i < funds.length; i++) {
    if (!sameUtf8(trailingCodes, i, fundCodes, i)) {
      throw violated(TRAILING_FILE, `row ${i}: code differs from funds.arrow row ${i} (${funds.code[i]})`);
    }
  }
  if (k.batch.numRows !== funds.length) {
    throw violated(RISK_FILE, `${k.batch.numRows} rows, expected one per fund (${funds.length})`);
  }
  const riskCodes = k.utf8Raw('code', false);
  for (let i = 0; i < funds.length; i++) {
    if (!sameUtf8(riskCodes, i, fundCodes, i)) {
      throw violated(RISK_FILE, `row ${i}: code differs from funds.arrow row ${i} (${funds.code[i]})`);
    }
  }
  const calendarCodes = c.utf8Raw('code', false);
  const fund = cols.calendar.fund;
  for (let i = 0; i < cols.calendar.length; i++) {
    if (!sameUtf8(calendarCodes, i, fundCodes, fund[i])) {
      throw violated(
        CALENDAR_FILE,
        `row ${i}: code differs from fund_index ${fund[i]} (${funds.code[fund[i]]})`,
      );
    }
  }
  return cols;
}
