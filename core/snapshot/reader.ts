/**
 * Loads a snapshot directory into SharedArrayBuffers, verifies it (manifest,
 * sizes, SHA-256, Arrow structure, invariants) and returns its columns as typed
 * arrays viewing those buffers, so that the server can hand the same memory to
 * every worker thread (attachSnapshot) without copying or re-hashing.
 *
 * apache-arrow's reader does not copy column bodies when given a Uint8Array over
 * the whole file: it makes typed-array views at the offsets in the IPC metadata
 * (8-byte aligned by the format). The column reader (column-reader.ts) checks `.buffer === sab` for every
 * numeric column anyway, so a library change that copied would be caught, not
 * silently multiply memory by the thread count.
 */

import { readFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { formatDay } from '../dates.js';
import { RISK_WINDOW_KEYS, STORED_DATES, STORED_FIGURES } from '../risk.js';
import { type FundType, TRAILING_KEYS } from '../types.js';
import { ColumnReader, openBatch } from './column-reader.js';
import type { CalendarColumns, FundColumns, RiskColumns, SnapshotColumns } from './columns.js';
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

type Readers = Record<ArrowFileName, ColumnReader>;

function decodeColumns(buffers: Record<ArrowFileName, SharedArrayBuffer>, verify: boolean): SnapshotColumns {
  const r = {} as Readers;
  for (const name of ARROW_FILES)
    r[name] = new ColumnReader(name, openBatch(name, buffers[name]), buffers[name], verify);
  const t = r[TRAILING_FILE];
  const q = r[RATES_FILE];
  const cols: SnapshotColumns = {
    funds: fundColumns(r[FUNDS_FILE]),
    series: { date: r[SERIES_FILE].int32('date'), value: r[SERIES_FILE].float64('value') },
    trailing: { asOf: t.int32('as_of_date'), values: TRAILING_KEYS.map((k) => t.nullableFloat64(k)) },
    calendar: calendarColumns(r[CALENDAR_FILE]),
    risk: riskColumns(r[RISK_FILE]),
    rates: { date: q.int32('date'), yield: q.float64('yield') },
  };
  if (!verify) return cols;
  checkColumns(cols);
  checkAcrossFiles(cols, r);
  return cols;
}

function fundColumns(f: ColumnReader): FundColumns {
  return {
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
  };
}

function calendarColumns(c: ColumnReader): CalendarColumns {
  return {
    length: c.batch.numRows,
    fund: c.int32('fund_index'),
    year: c.int32('year'),
    totalReturn: c.nullableFloat64('total_return'),
    startDate: c.int32('start_date'),
    endDate: c.int32('end_date'),
    isPartial: c.bool('is_partial'),
  };
}

function riskColumns(k: ColumnReader): RiskColumns {
  return {
    endMonth: k.int32('end_month'),
    figures: RISK_WINDOW_KEYS.flatMap((w) => STORED_FIGURES.map((f) => k.nullableFloat64(`${f}_${w}`))),
    dates: RISK_WINDOW_KEYS.flatMap((w) => STORED_DATES.map((d) => k.nullableDay(`${d}_${w}`))),
  };
}

function violated(file: string, reason: string): SnapshotError {
  return new SnapshotError('INVARIANT_VIOLATED', reason, file);
}

/**
 * What only the files together can break, checked on the loaded bytes: funds.arrow's
 * date range against its series, and the code of every trailing, risk and calendar
 * row against the fund it belongs to.
 */
function checkAcrossFiles(cols: SnapshotColumns, r: Readers): void {
  const f = r[FUNDS_FILE];
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
  const fundCodes = f.utf8Raw('code', false);
  checkRowPerFund(r[TRAILING_FILE], funds, fundCodes);
  checkRowPerFund(r[RISK_FILE], funds, fundCodes);
  const calendarCodes = r[CALENDAR_FILE].utf8Raw('code', false);
  const fund = cols.calendar.fund;
  for (let i = 0; i < cols.calendar.length; i++) {
    if (!sameUtf8(calendarCodes, i, fundCodes, fund[i])) {
      throw violated(
        CALENDAR_FILE,
        `row ${i}: code differs from fund_index ${fund[i]} (${funds.code[fund[i]]})`,
      );
    }
  }
}

/** A file with one row per fund (row i = fund i) whose `code` column must repeat funds.arrow's. */
function checkRowPerFund(
  file: ColumnReader,
  funds: FundColumns,
  fundCodes: { offsets: Int32Array; bytes: Uint8Array },
): void {
  if (file.batch.numRows !== funds.length) {
    throw violated(file.file, `${file.batch.numRows} rows, expected one per fund (${funds.length})`);
  }
  const codes = file.utf8Raw('code', false);
  for (let i = 0; i < funds.length; i++) {
    if (!sameUtf8(codes, i, fundCodes, i)) {
      throw violated(file.file, `row ${i}: code differs from funds.arrow row ${i} (${funds.code[i]})`);
    }
  }
}
