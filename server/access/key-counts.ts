/**
 * Requests per key, counted on the request path for the daily chart
 * at no measurable cost: each thread has a Uint32Array over a SharedArrayBuffer, two
 * slots per key (admitted, refused with 429) at the key's slot (KeyEntry.slot), and the
 * gate adds one with a plain `++`. Only the owning thread writes its array, so no lock
 * and no Atomics; the counts are cumulative and never reset, so the main thread can
 * read them at any time (a count one request behind is taken at the next flush) and
 * turn them into deltas (KeyCountReader). A Uint32 wraps after 2^32 requests of one key
 * on one thread; deltas are taken modulo 2^32, exact while fewer than that arrive
 * between two flushes (a second apart).
 */

/** Keys one server can count; a key keeps its slot for the life of the process. */
export const DEFAULT_KEY_SLOTS = 1 << 17;

const PER_KEY = 2;
const OK = 0;
const REFUSED = 1;

/** A thread's counts, zeroed: `slots` keys, two Uint32 each (1 MiB for the default). */
export function newKeyCountBuffer(slots = DEFAULT_KEY_SLOTS): SharedArrayBuffer {
  return new SharedArrayBuffer(slots * PER_KEY * Uint32Array.BYTES_PER_ELEMENT);
}

/** The request path's side: count one decision of the key in `slot`. */
export class KeyCounts {
  readonly #counts: Uint32Array;

  constructor(buffer: SharedArrayBuffer) {
    this.#counts = new Uint32Array(buffer);
  }

  admitted(slot: number): void {
    this.#counts[slot * PER_KEY + OK]++;
  }

  refused(slot: number): void {
    this.#counts[slot * PER_KEY + REFUSED]++;
  }
}

/**
 * The main thread's side: every thread's buffer, and what was taken from each, so that
 * `take` returns only what was counted since the last take.
 */
export class KeyCountReader {
  readonly #threads: Array<{ counts: Uint32Array; taken: Uint32Array }> = [];

  constructor(readonly slots = DEFAULT_KEY_SLOTS) {}

  /** A new thread's buffer, read from now on. */
  addThread(): SharedArrayBuffer {
    const buffer = newKeyCountBuffer(this.slots);
    this.#threads.push({ counts: new Uint32Array(buffer), taken: new Uint32Array(this.slots * PER_KEY) });
    return buffer;
  }

  /**
   * Slot → [admitted, refused] counted since the last take, summed over the threads,
   * only for slots that counted something. `slotsInUse` bounds the scan (slots are
   * handed out from 0 up).
   */
  take(slotsInUse: number): Map<number, [number, number]> {
    const out = new Map<number, [number, number]>();
    const n = Math.min(slotsInUse, this.slots) * PER_KEY;
    for (const { counts, taken } of this.#threads) {
      for (let i = 0; i < n; i++) {
        const now = counts[i];
        const was = taken[i];
        if (now === was) continue;
        taken[i] = now;
        // Modulo 2^32: the counter may have wrapped since the last take.
        const delta = (now - was) >>> 0;
        const slot = i >> 1;
        let c = out.get(slot);
        if (c === undefined) {
          c = [0, 0];
          out.set(slot, c);
        }
        c[i & 1] += delta;
      }
    }
    return out;
  }
}
