/**
 * Writes a snapshot's four Arrow IPC files and manifest.json into an existing
 * directory. Publishing (temp directory, rename, CURRENT) is the builder's job.
 *
 * Memory: apache-arrow's file writer queues its output as a list of chunks that are
 * views onto the input typed arrays (only metadata, padding, bitmaps and the string
 * columns are new bytes), and we drain that queue straight to the file descriptor,
 * hashing as we go. The series may come in parts (columns.ts SeriesInput), queued
 * part by part, so an append never assembles a second whole series. Writing 100M
 * series rows needs little beyond the columns: a few staging buffers.
 */

import { closeSync, fsyncSync, openSync, writeSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { DateDay, Float64, makeData, type RecordBatch, RecordBatchFileWriter } from 'apache-arrow';
import { BufferRegion, FieldNode } from 'apache-arrow/ipc/metadata/message';
import { type ArrayBufferViewInput, toUint8Array } from 'apache-arrow/util/buffer';
import { formatDay } from '../dates.js';
import { fsyncDirSync } from '../files/atomic.js';
import { namingPath, namingPathAsync } from '../files/io-error.js';
import {
  batchOf,
  calendarBatch,
  fundsBatch,
  padded8,
  ratesBatch,
  riskBatch,
  trailingBatch,
} from './batches.js';
import { type ColumnsToWrite, type SeriesInput, seriesParts, seriesRows } from './columns.js';
import { Hasher } from './hasher.js';
import { checkColumns, maxLastDate } from './invariants.js';
import { isIsoTimestamp, type Manifest, type ManifestFileEntry, validateManifest } from './manifest.js';
import {
  ARROW_FILES,
  type ArrowFileName,
  CALENDAR_FILE,
  FORMAT_VERSION,
  FUNDS_FILE,
  MANIFEST_FILE,
  RATES_FILE,
  RISK_FILE,
  SERIES_FILE,
  SERIES_SCHEMA,
  TRAILING_FILE,
} from './schema.js';
import { SnapshotError } from './snapshot-error.js';

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

/** A write batch: one writev and one message to the hasher (IOV_MAX is 1024 on Linux). */
const WRITE_BATCH_BYTES = 8 << 20;
const WRITE_BATCH_VIEWS = 1024;

/** Staging buffers for bytes not in shared memory (metadata, padding, strings, derived columns: ~20 MB). */
const STAGING_BYTES = 1 << 20;
const STAGING_SLOTS = 4;

/**
 * Verifies the columns' invariants, writes funds/series/trailing/calendar.arrow and
 * manifest.json into `dir` (which must exist), fsyncing each file and the directory,
 * and returns the manifest. Throws SnapshotError ('INVARIANT_VIOLATED' for bad
 * columns, 'MANIFEST_INVALID' for bad meta) before writing anything.
 */
export async function writeSnapshotFiles(
  dir: string,
  cols: ColumnsToWrite,
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
  const writers: Record<ArrowFileName, () => ChunkedFileWriter> = {
    [FUNDS_FILE]: () => batchWriter(fundsBatch(cols)),
    [SERIES_FILE]: () => seriesWriter(cols.series),
    [TRAILING_FILE]: () => batchWriter(trailingBatch(cols)),
    [CALENDAR_FILE]: () => batchWriter(calendarBatch(cols)),
    [RISK_FILE]: () => batchWriter(riskBatch(cols)),
    [RATES_FILE]: () => batchWriter(ratesBatch(cols)),
  };
  const hasher = new Hasher();
  try {
    const out = new HashedOutput(hasher);
    for (const name of ARROW_FILES) {
      files[name] = await writeArrowFile(join(dir, name), writers[name](), out, ARROW_FILES.indexOf(name));
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
      observations: seriesRows(cols.series),
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
  fsyncDirSync(dir);
  return manifest;
}

/** Streams one Arrow file to disk, hashing it on the way (HashedOutput). */
async function writeArrowFile(
  path: string,
  writer: ChunkedFileWriter,
  out: HashedOutput,
  id: number,
): Promise<ManifestFileEntry> {
  let bytes = 0;
  await namingPathAsync(path, async () => {
    const fd = openSync(path, 'w');
    try {
      for (const chunk of writer.chunks) {
        if (chunk instanceof Uint8Array) {
          await out.put(fd, id, chunk);
          bytes += chunk.byteLength;
          continue;
        }
        for (const a of chunk.parts) {
          await out.put(fd, id, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
          bytes += a.byteLength;
        }
      }
      out.flush(fd, id);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
  return { bytes, sha256: await out.hasher.digest(id) };
}

/**
 * Writes a file's chunks in order and has the hasher's thread hash them. Chunks in
 * shared memory (the series, wherever its parts lie: a reader thread's region, runs of
 * the live snapshot) are never copied: they are written with writev in batches and
 * hashed where they lie, one message per batch. The rest (metadata, padding, strings,
 * the derived columns) is first copied into a small ring of shared staging buffers,
 * each reused only once the hasher is done with it.
 */
class HashedOutput {
  readonly #slots = Array.from({ length: STAGING_SLOTS }, () => {
    const sab = new SharedArrayBuffer(STAGING_BYTES);
    return { sab, bytes: new Uint8Array(sab), free: Promise.resolve() };
  });
  #slot = 0;
  #fill = 0;
  /** The batch: views to write, and the same bytes as (buffer index, from, to) ranges to hash. */
  #views: Uint8Array[] = [];
  #bytes = 0;
  #sabs: SharedArrayBuffer[] = [];
  #ranges: number[] = [];

  constructor(readonly hasher: Hasher) {}

  async put(fd: number, id: number, chunk: Uint8Array): Promise<void> {
    if (chunk.buffer instanceof SharedArrayBuffer) {
      for (let p = 0; p < chunk.byteLength; p += IO_PIECE)
        this.#queue(fd, id, chunk.subarray(p, Math.min(p + IO_PIECE, chunk.byteLength)));
      return;
    }
    for (let p = 0; p < chunk.byteLength; ) {
      if (this.#fill === STAGING_BYTES) {
        this.flush(fd, id);
        this.#slots[this.#slot].free = this.hasher.synced();
        this.#slot = (this.#slot + 1) % STAGING_SLOTS;
        this.#fill = 0;
      }
      const s = this.#slots[this.#slot];
      if (this.#fill === 0) await s.free;
      const take = Math.min(STAGING_BYTES - this.#fill, chunk.byteLength - p);
      s.bytes.set(take === chunk.byteLength ? chunk : chunk.subarray(p, p + take), this.#fill);
      this.#queue(fd, id, s.bytes.subarray(this.#fill, this.#fill + take));
      this.#fill += take;
      p += take;
    }
  }

  /** Writes and hashes the batch; a file's last bytes must be flushed before its digest. */
  flush(fd: number, id: number): void {
    if (this.#views.length === 0) return;
    // Sent first, so that the hasher works while this thread writes.
    this.hasher.updateRanges(id, this.#sabs, this.#ranges);
    writevFully(fd, this.#views);
    this.#views = [];
    this.#bytes = 0;
    this.#sabs = [];
    this.#ranges = [];
  }

  #queue(fd: number, id: number, view: Uint8Array): void {
    if (view.byteLength === 0) return;
    const sab = view.buffer as SharedArrayBuffer;
    const r = this.#ranges.length;
    const last = this.#views.length - 1;
    if (r > 0 && this.#sabs[this.#ranges[r - 3]] === sab && this.#ranges[r - 1] === view.byteOffset) {
      // Contiguous with the last piece (staged bytes, a region read whole): one piece.
      this.#ranges[r - 1] += view.byteLength;
      const v = this.#views[last];
      this.#views[last] = new Uint8Array(sab, v.byteOffset, v.byteLength + view.byteLength);
    } else {
      let k = this.#sabs.lastIndexOf(sab);
      if (k < 0) k = this.#sabs.push(sab) - 1;
      this.#ranges.push(k, view.byteOffset, view.byteOffset + view.byteLength);
      this.#views.push(view);
    }
    this.#bytes += view.byteLength;
    if (this.#bytes >= WRITE_BATCH_BYTES || this.#views.length >= WRITE_BATCH_VIEWS) this.flush(fd, id);
  }
}

/** writev until every byte is written (a call may write only some). */
function writevFully(fd: number, views: Uint8Array[]): void {
  let i = 0;
  let skip = 0;
  while (i < views.length) {
    const batch = skip === 0 ? views.slice(i) : [views[i].subarray(skip), ...views.slice(i + 1)];
    let n = writevSync(fd, batch);
    while (n > 0) {
      const left = views[i].byteLength - skip;
      if (n < left) {
        skip += n;
        n = 0;
      } else {
        n -= left;
        i++;
        skip = 0;
      }
    }
  }
}

function writeFully(fd: number, buf: Uint8Array): void {
  let p = 0;
  while (p < buf.byteLength) p += writeSync(fd, buf, p, buf.byteLength - p);
}

// --- Arrow data construction: every numeric column is handed over without copying.

/** A column's body queued as the typed arrays it is made of, viewed as bytes only as it is written. */
interface QueuedParts {
  parts: readonly ArrayBufferView[];
}

/**
 * apache-arrow's file writer with its output kept as a plain list of chunks (views
 * onto the columns, and the writer's own small pieces) rather than in its async
 * queue, which takes each chunk with Array.shift: quadratic over the ~130,000 parts
 * of an append's series.
 */
class ChunkedFileWriter extends RecordBatchFileWriter {
  readonly chunks: (Uint8Array | QueuedParts)[] = [];

  protected override _write(chunk: ArrayBufferViewInput): this {
    if (this._started) {
      const bytes = toUint8Array(chunk);
      if (bytes.byteLength > 0) {
        this.chunks.push(bytes);
        this._position += bytes.byteLength;
      }
    }
    return this;
  }
}

function batchWriter(batch: RecordBatch): ChunkedFileWriter {
  const writer = new ChunkedFileWriter();
  writer.write(batch);
  writer.finish();
  return writer;
}

/** series.arrow: one record batch, its two columns queued part by part (PartsFileWriter). */
function seriesWriter(series: SeriesInput): ChunkedFileWriter {
  const parts = seriesParts(series);
  const n = seriesRows(series);
  const writer = new PartsFileWriter([parts.map((p) => p.date), parts.map((p) => p.value)]);
  // The batch gives the schema and row count; its columns' bodies come from the parts.
  writer.write(
    batchOf(SERIES_SCHEMA, n, [
      makeData({ type: new DateDay(), length: n, nullCount: 0, data: new Int32Array(0) }),
      makeData({ type: new Float64(), length: n, nullCount: 0, data: new Float64Array(0) }),
    ]),
  );
  writer.finish();
  return writer;
}

/**
 * Arrow's file writer for a batch of fixed-width columns without nulls whose bodies
 * arrive in parts. The message lists each column's buffers as apache-arrow's
 * VectorAssembler lists a whole column's (an empty validity buffer, then the values
 * padded to 8 bytes), and the body is queued part by part, so the file is byte for
 * byte the one the plain writer makes of the joined columns (snapshot.test.ts) without
 * the columns ever being joined.
 */
class PartsFileWriter extends ChunkedFileWriter {
  readonly #columns: readonly (readonly ArrayBufferView[])[];
  constructor(columns: readonly (readonly ArrayBufferView[])[]) {
    super();
    this.#columns = columns;
  }

  protected override _assembleRecordBatch(batch: RecordBatch) {
    const nodes: FieldNode[] = [];
    const bufferRegions: BufferRegion[] = [];
    let offset = 0;
    for (const parts of this.#columns) {
      let bytes = 0;
      for (const p of parts) bytes += p.byteLength;
      nodes.push(new FieldNode(batch.numRows, 0));
      bufferRegions.push(new BufferRegion(offset, 0), new BufferRegion(offset, padded8(bytes)));
      offset += padded8(bytes);
    }
    return { byteLength: offset, nodes, bufferRegions, buffers: [], variadicBufferCounts: [] };
  }

  protected override _writeBodyBuffers(): this {
    for (const parts of this.#columns) {
      let bytes = 0;
      for (const p of parts) bytes += p.byteLength;
      // Not a view per part kept until written: 130,000 of them weigh tens of MB.
      this.chunks.push({ parts });
      this._position += bytes;
      this._writePadding(padded8(bytes) - bytes);
    }
    return this;
  }
}
