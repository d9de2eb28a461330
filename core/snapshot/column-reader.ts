/**
 * One Arrow IPC file of a snapshot, held in a SharedArrayBuffer: opened as a single
 * record batch whose schema is the format's, and read column by column as typed
 * arrays viewing that buffer (strings and booleans decoded). With `verify`, null
 * slots and null counts are checked too; attaching in a worker thread skips that.
 */
import {
  type Bool,
  type Data,
  type DataType,
  type RecordBatch,
  type Schema,
  tableFromIPC,
  type Utf8,
} from 'apache-arrow';
import { NULL_DAY } from './columns.js';
import { type ArrowFileName, SCHEMAS } from './schema.js';
import { SnapshotError } from './snapshot-error.js';

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // "ARROW1"

function arrowInvalid(file: string, reason: string, cause?: unknown): SnapshotError {
  return new SnapshotError('ARROW_INVALID', reason, file, cause === undefined ? undefined : { cause });
}

export function openBatch(name: ArrowFileName, sab: SharedArrayBuffer): RecordBatch {
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
export class ColumnReader {
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
