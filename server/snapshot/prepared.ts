/**
 * Rows served as they are, serialized once per snapshot on the main thread into one
 * shared byte buffer: every fund's Fund JSON, latest trailing row (C3 without a
 * date) and default calendar row (C12). Each worker thread copies that buffer once
 * into its own (PreparedRows: one copy per thread, a few tens of MB each, because
 * reading shared memory is 3× slower) and answers those requests with a hash probe
 * and a view onto its copy: no per-request serialization.
 */

import { viewOf } from '../../core/bytes.js';
import type { SnapshotLookup } from '../../core/snapshot/lookup.js';
import { BATCH_MAX_CODES, LIMIT_MAX } from '../../schemas/common.js';

export enum RowKind {
  Fund = 0,
  Trailing = 1,
  Calendar = 2,
  /** The code as a JSON string: the start of every row computed per request (as_of). */
  Code = 3,
}

const KINDS = 4;

export interface PreparedShared {
  bytes: SharedArrayBuffer;
  /** Int32 offsets, kinds × funds + 1: kind k of fund i is bytes[off[k·F+i] .. off[k·F+i+1]). */
  offsets: SharedArrayBuffer;
  funds: number;
}

export function prepareRows(lookup: SnapshotLookup): PreparedShared {
  const n = lookup.fundCount;
  const parts: string[] = new Array(KINDS * n);
  for (let i = 0; i < n; i++) {
    parts[RowKind.Fund * n + i] = lookup.fundJson(i);
    parts[RowKind.Trailing * n + i] = lookup.latestTrailingJson(i);
    // A fund without calendar rows has an empty slice: the handler answers 404.
    parts[RowKind.Calendar * n + i] = lookup.defaultCalendarJson(i) ?? '';
    parts[RowKind.Code * n + i] = JSON.stringify(lookup.cols.funds.code[i]);
  }
  return packRows(parts, n);
}

/**
 * Texts laid out kind by kind (`parts[k·funds + i]`: kind k of fund i) as UTF-8 in one
 * shared buffer, with their offsets.
 */
export function packRows(parts: readonly string[], funds: number): PreparedShared {
  const encoder = new TextEncoder();
  let capacity = 0;
  for (const p of parts) capacity += p.length * 3;
  const scratch = new Uint8Array(capacity);
  const offsets = new Int32Array(new SharedArrayBuffer(4 * (parts.length + 1)));
  let at = 0;
  for (let j = 0; j < parts.length; j++) {
    offsets[j] = at;
    at += encoder.encodeInto(parts[j], scratch.subarray(at)).written;
  }
  offsets[parts.length] = at;
  const bytes = new SharedArrayBuffer(at);
  new Uint8Array(bytes).set(scratch.subarray(0, at));
  return { bytes, offsets: offsets.buffer as SharedArrayBuffer, funds };
}

/**
 * Prepared texts read where they lie, in the shared buffer every thread sees: for
 * texts each answer copies once (into a larger answer), where that one copy out of
 * shared memory costs a few tens of nanoseconds more and a copy per thread would cost
 * memory (MCP tool results, server/mcp/tool-results.ts).
 */
export class SharedRows {
  readonly #bytes: Uint8Array;
  readonly #offsets: Int32Array;
  readonly #funds: number;

  constructor(shared: PreparedShared) {
    this.#bytes = new Uint8Array(shared.bytes);
    this.#offsets = new Int32Array(shared.offsets);
    this.#funds = shared.funds;
  }

  /** Kind `kind` of fund `i` (empty when there is none), a view onto the shared bytes. */
  row(kind: number, i: number): Uint8Array {
    const j = kind * this.#funds + i;
    return viewOf(this.#bytes, this.#offsets[j], this.#offsets[j + 1]);
  }
}

/** The most rows one answer joins: a list page (LIMIT_MAX) or a batch (BATCH_MAX_CODES). */
const MAX_JOIN_ROWS = Math.max(LIMIT_MAX, BATCH_MAX_CODES);
/** Room for what surrounds the rows: `{"data":[` and `],"next_cursor":"…"}` at most. */
const MAX_JOIN_FRAME = 1024;
const OPEN = Uint8Array.of(0x5b);
const CLOSE = Uint8Array.of(0x5d);

export class PreparedRows {
  readonly #bytes: Uint8Array;
  readonly #offsets: Int32Array;
  readonly #funds: number;
  /** Where the join area starts: just past the rows, in the same buffer. */
  readonly #joinAt: number;
  /** Each row's view once made (row()): at most one small object per row and thread. */
  readonly #views: Array<Uint8Array | null>;

  constructor(shared: PreparedShared) {
    // A thread-local copy (a few tens of MB): V8 copies out of shared memory byte by
    // byte with relaxed atomics, 3× slower per row than out of an ordinary buffer.
    // The join area lives in the same buffer so joining is copyWithin, a memmove
    // with no view made per row; it is sized for the largest answer, so a join
    // always fits.
    this.#offsets = new Int32Array(shared.offsets);
    this.#funds = shared.funds;
    let longest = 0;
    for (let j = 0; j < KINDS * this.#funds; j++)
      longest = Math.max(longest, this.#offsets[j + 1] - this.#offsets[j]);
    this.#joinAt = shared.bytes.byteLength;
    this.#bytes = new Uint8Array(this.#joinAt + MAX_JOIN_ROWS * (longest + 1) + MAX_JOIN_FRAME);
    this.#bytes.set(new Uint8Array(shared.bytes));
    this.#views = new Array<Uint8Array | null>(KINDS * this.#funds).fill(null);
  }

  /**
   * `open`, the rows of `funds[0..count)` joined by commas (empty rows skipped),
   * then `close`, built in this thread's join area: valid until the next join on
   * this thread (the response write copies it).
   */
  join(
    kind: RowKind,
    funds: ArrayLike<number>,
    count: number,
    open: Uint8Array = OPEN,
    close: Uint8Array = CLOSE,
  ): Uint8Array {
    if (count > MAX_JOIN_ROWS || open.length + close.length > MAX_JOIN_FRAME)
      throw new RangeError(`join of ${count} rows is larger than any answer`);
    const off = this.#offsets;
    const base = kind * this.#funds;
    const b = this.#bytes;
    const start = this.#joinAt;
    b.set(open, start);
    const first = start + open.length;
    let at = first;
    for (let k = 0; k < count; k++) {
      const j = base + funds[k];
      const from = off[j];
      const to = off[j + 1];
      if (to === from) continue;
      if (at > first) b[at++] = 0x2c;
      b.copyWithin(at, from, to);
      at += to - from;
    }
    b.set(close, at);
    return b.subarray(start, at + close.length);
  }

  /**
   * The serialized row; empty when there is none (a fund without calendar rows). Its
   * view is made on first use and kept: a latest-row answer allocates nothing.
   */
  row(kind: RowKind, i: number): Uint8Array {
    const j = kind * this.#funds + i;
    let v = this.#views[j];
    if (v === null) {
      v = viewOf(this.#bytes, this.#offsets[j], this.#offsets[j + 1]);
      this.#views[j] = v;
    }
    return v;
  }
}
