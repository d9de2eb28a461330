/**
 * What one worker thread serves from: a snapshot's columns (views onto the shared
 * buffers), its lookups, pre-serialized rows and search index. Built off the
 * request path; handlers read the current one once per request, so a request runs
 * wholly on the snapshot it started on even while a swap happens.
 */

import { MonthlyReturns, RateTable, RISK_COLUMN_NAMES, RISK_SLOTS, RISK_WINDOWS } from '../../core/risk.js';
import { benchmarkJson } from '../../core/risk-row.js';
import { SnapshotLookup } from '../../core/snapshot/lookup.js';
import type { Manifest } from '../../core/snapshot/manifest.js';
import { attachSnapshot } from '../../core/snapshot/reader.js';
import { TRAILING_KEYS } from '../../core/types.js';
import { type HeaderBlock, headerBlock } from '../http/headers.js';
import { type RiskColumns, ScreenColumns } from '../screen/columns.js';
import { FigureRowWriter } from '../screen/rows.js';
import { PreparedRows, type PreparedShared, SharedRows } from './prepared.js';
import { FundSearch } from './search.js';

/** What the main thread sends a worker for each snapshot it has verified. */
export interface SnapshotMessage {
  type: 'snapshot';
  id: string;
  dir: string;
  manifest: Manifest;
  buffers: Record<string, SharedArrayBuffer>;
  prepared: PreparedShared;
  /** MCP tools/call results of the latest rows (server/mcp/tool-results.ts). */
  toolResults: PreparedShared;
  loadedAt: string;
}

export class ServingSnapshot {
  readonly lookup: SnapshotLookup;
  readonly rows: PreparedRows;
  /** MCP tools/call results of the latest rows, read in shared memory (server/mcp/tool-results.ts). */
  readonly toolResults: SharedRows;
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
  /** Reused by risk rows on this thread. */
  readonly riskScratch = new Float64Array(RISK_WINDOWS.length * RISK_SLOTS);
  /** The risk-free rate by month (C41), from the snapshot's rates. */
  readonly rates: RateTable;
  /**
   * Every fund's latest risk figures by screening name `<figure>_<window>`
   * (`volatility_3y`, `max_drawdown_5y`, `sharpe_1y`, …; RISK_COLUMN_NAMES): views onto
   * the snapshot's columns, aligned with the fund index, unrounded (percents as
   * percents, ratios as ratios), NaN = null. Beta and correlation are not among them:
   * they depend on the benchmark a request names.
   */
  readonly riskColumns: ReadonlyMap<string, Float64Array>;
  /** `serve --benchmark`'s fund index, or -1 (none set, or not in this snapshot). */
  readonly defaultBenchmark: number;
  /** Benchmarks' monthly returns, computed on first use (C45). */
  readonly #benchmarks = new Map<number, { returns: MonthlyReturns; json: Uint8Array }>();
  /** Batch de-duplication marks per fund (C16), compared with a per-request stamp. */
  readonly marks: Int32Array;
  #stamp = 0;

  /**
   * The screen's columns and their sorted orders (C50), built with the snapshot, off
   * the request path: about 4 ms a column at 32,000 funds.
   */
  #screenColumns: ScreenColumns;
  #figureRowWriter: FigureRowWriter | null = null;

  get screen(): ScreenColumns {
    return this.#screenColumns;
  }

  /**
   * Adds the snapshot's risk figures by screen name (`volatility_3y`, aligned with
   * the fund index, NaN for null) to the screen's columns.
   */
  useRiskColumns(risk: RiskColumns): void {
    this.#screenColumns = new ScreenColumns(this.lookup, risk).prepareAll();
  }

  /** Figure rows of screens and comparisons (C51). */
  get figureRows(): FigureRowWriter {
    if (this.#figureRowWriter === null) this.#figureRowWriter = new FigureRowWriter(this.lookup);
    return this.#figureRowWriter;
  }

  nextStamp(): number {
    if (this.#stamp === 0x7fffffff) {
      this.marks.fill(0);
      this.#stamp = 0;
    }
    return ++this.#stamp;
  }

  /** Fund `i` as a benchmark: its monthly returns and its code as JSON, kept for the snapshot's life. */
  benchmark(i: number): { returns: MonthlyReturns; json: Uint8Array } {
    let b = this.#benchmarks.get(i);
    if (b === undefined) {
      // A client naming a new benchmark per request would otherwise grow this without bound.
      if (this.#benchmarks.size >= 256) this.#benchmarks.clear();
      b = {
        returns: MonthlyReturns.of(this.lookup.series(i)),
        json: benchmarkJson(this.lookup.cols.funds.code[i]),
      };
      this.#benchmarks.set(i, b);
    }
    return b;
  }

  constructor(msg: SnapshotMessage, defaultBenchmark: string | null = null) {
    const cols = attachSnapshot({ manifest: msg.manifest, buffers: msg.buffers });
    this.lookup = new SnapshotLookup(cols);
    this.rows = new PreparedRows(msg.prepared);
    this.toolResults = new SharedRows(msg.toolResults);
    this.search = new FundSearch(cols.funds);
    this.id = msg.id;
    this.asOf = msg.manifest.as_of;
    this.loadedAt = new Date(msg.loadedAt);
    this.funds = cols.funds.length;
    this.marks = new Int32Array(this.funds);
    this.dataHeaders = headerBlock([['X-Data-As-Of', this.asOf]]);
    this.rates = RateTable.of(cols.rates.date, cols.rates.yield);
    this.riskColumns = new Map(RISK_COLUMN_NAMES.map((name, k) => [name, cols.risk.figures[k]]));
    this.defaultBenchmark = defaultBenchmark === null ? -1 : this.lookup.find(defaultBenchmark);
    this.#screenColumns = new ScreenColumns(this.lookup, this.riskColumns).prepareAll();
  }
}
