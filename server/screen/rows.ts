/**
 * Figure rows (C51): `{"code":…,"name":…,"type":…` then each figure asked for, in
 * order, written as bytes. The identity part of a fund is encoded once per thread
 * and kept; figures are written as C1 strings straight from the columns.
 */
import { PERCENT_JSON_MAX, writePercentJson } from '../../core/format.js';
import type { ByteSink } from '../../core/rows.js';
import type { SnapshotLookup } from '../../core/snapshot/lookup.js';

const utf8 = new TextEncoder();

/** The figures of a row: each name's `,"name":` bytes and its values per fund. */
export interface RowFigures {
  readonly keys: readonly Uint8Array[];
  readonly values: readonly ArrayLike<number>[];
}

export function rowFigures(
  names: readonly string[],
  valuesOf: (name: string) => ArrayLike<number>,
): RowFigures {
  return { keys: names.map((n) => utf8.encode(`,"${n}":`)), values: names.map(valuesOf) };
}

export class FigureRowWriter {
  readonly #heads: Array<Uint8Array | null>;
  readonly #lookup: SnapshotLookup;

  constructor(lookup: SnapshotLookup) {
    this.#lookup = lookup;
    this.#heads = new Array<Uint8Array | null>(lookup.fundCount).fill(null);
  }

  #head(i: number): Uint8Array {
    let h = this.#heads[i];
    if (h === null) {
      const f = this.#lookup.cols.funds;
      h = utf8.encode(
        `{"code":${JSON.stringify(f.code[i])},"name":${JSON.stringify(f.name[i])},"type":${JSON.stringify(f.type[i])}`,
      );
      this.#heads[i] = h;
    }
    return h;
  }

  /** Fund i's row appended to `sink`. */
  write(sink: ByteSink, i: number, figures: RowFigures): void {
    const head = this.#head(i);
    let room = head.length + 1;
    for (const k of figures.keys) room += k.length + PERCENT_JSON_MAX;
    const b = sink.room(room);
    b.set(head, sink.at);
    let at = sink.at + head.length;
    for (let j = 0; j < figures.keys.length; j++) {
      const k = figures.keys[j];
      b.set(k, at);
      at = writePercentJson(b, at + k.length, figures.values[j][i]);
    }
    b[at++] = 0x7d;
    sink.at = at;
  }
}
