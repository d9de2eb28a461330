/**
 * Byte copies and views of Uint8Arrays on the hot path, through constant
 * references to TypedArray#set and #subarray.
 *
 * Why: in the running server (not in a benchmark loop) TurboFan compiled
 * `b.set(src, at)` and `b.subarray(...)` as generic property loads, a call to
 * V8's LoadIC builtin before every copy (`--print-opt-code`: `LoadIC` with
 * `set_string` in HeaderWriter.bytes and in writeTrailingRow). Called through a
 * constant, the builtin is called directly. Used where that was measured to help
 * (the header bytes, the on-demand rows); the batch join keeps its direct calls,
 * which were not generic there and were faster than these.
 *
 * Likewise a Uint8Array's `byteLength`: V8 11.3 (Node 20) compiles that getter as a
 * LoadIC call wherever it is read (a plain loop over views shows it), while
 * `length`, the same number for bytes, is an inline field load. Hot paths read
 * `length`.
 */
const set = Uint8Array.prototype.set;
const subarray = Uint8Array.prototype.subarray;

/** `src` copied into `dst` at `at`; returns the end. */
export function copyInto(dst: Uint8Array, src: Uint8Array, at: number): number {
  set.call(dst, src, at);
  return at + src.length;
}

/** A view of `b[from..to)` (no copy). */
export function viewOf(b: Uint8Array, from: number, to: number): Uint8Array {
  return subarray.call(b, from, to);
}
