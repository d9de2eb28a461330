/**
 * What one worker thread serves from: a snapshot's columns (views onto the shared
 * buffers), its lookups, pre-serialized rows and search index. Built off the
 * request path; handlers read the current one once per request, so a request runs
 * wholly on the snapshot it started on even while a swap happens.
 */
import { SnapshotLookup } from '../../core/lookup.js';
import type { Manifest } from '../../core/snapshot/manifest.js';
import { attachSnapshot } from '../../core/snapshot/reader.js';
import { TRAILING_KEYS } from '../../core/types.js';
import { type HeaderBlock, headerBlock } from '../http/headers.js';
import { type RiskColumns, ScreenColumns } from '../screen/columns.js';
import { FigureRowWriter } from '../screen/rows.js';
import { FundSearch } from '../search.js';
import { PreparedRows, type PreparedShared } from './prepared.js';

/** What the main thread sends a worker for each snapshot it has verified. */
export interface SnapshotMessage {
  type: 'snapshot';
  id: string;
  dir: string;
  manifest: Manifest;
  buffers: Record<string, SharedArrayBuffer>;
  prepared: PreparedShared;
  loadedAt: string;
}

export class ServingSnapshot {
  readonly lookup: SnapshotLookup;
  readonly rows: PreparedRows;
  readonly search: FundSearch;
  readonly id: string;
  /** YYYY-MM-DD of the newest observation: the X-Data-As-Of header (C24). */
  readonly asOf: string;
  readonly loadedAt: Date;
  readonly funds: number;
  /** Headers of every data response (C24), serialized once per snapshot. */
  readonly dataHeaders: HeaderBlock;
  /** Reused by on-demand trailing rows on this thread (one request at a time per thread). */
  readonly scratch = new Float64Array(TRAILING_KEYS.length);
  /** Batch de-duplication marks per fund (C16), compared with a per-request stamp. */
  readonly marks: Int32Array;
  private stamp = 0;
  /**
   * The screen's columns and their sorted orders (C50), built with the snapshot, off
   * the request path: about 4 ms a column at 32,000 funds.
   */
  private screenColumns: ScreenColumns;
  private figureRowWriter: FigureRowWriter | null = null;

  get screen(): ScreenColumns {
    return this.screenColumns;
  }

  /**
   * Adds the snapshot's risk figures by screen name (`volatility_3y`, aligned with
   * the fund index, NaN for null) to the screen's columns.
   */
  useRiskColumns(risk: RiskColumns): void {
    this.screenColumns = new ScreenColumns(this.lookup, risk).prepareAll();
  }

  /** Figure rows of screens and comparisons (C51). */
  get figureRows(): FigureRowWriter {
    if (this.figureRowWriter === null) this.figureRowWriter = new FigureRowWriter(this.lookup);
    return this.figureRowWriter;
  }

  nextStamp(): number {
    if (this.stamp === 0x7fffffff) {
      this.marks.fill(0);
      this.stamp = 0;
    }
    return ++this.stamp;
  }

  constructor(msg: SnapshotMessage) {
    const cols = attachSnapshot({ manifest: msg.manifest, buffers: msg.buffers });
    this.lookup = new SnapshotLookup(cols);
    this.rows = new PreparedRows(msg.prepared);
    this.search = new FundSearch(cols.funds);
    this.id = msg.id;
    this.asOf = msg.manifest.as_of;
    this.loadedAt = new Date(msg.loadedAt);
    this.funds = cols.funds.length;
    this.marks = new Int32Array(this.funds);
    this.dataHeaders = headerBlock([['X-Data-As-Of', this.asOf]]);
    this.screenColumns = new ScreenColumns(this.lookup, null).prepareAll();
  }
}
