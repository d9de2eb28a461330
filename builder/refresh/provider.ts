/**
 * What a refresh asks of a data provider. Everything comes back in the
 * formats the builder already reads, so the bytes can be checked by the same readers
 * and kept in the source directory as the record: a day as a C37 daily file, the fund
 * list as a funds.csv (C35), a new fund's history as a price file (EODHD dialect).
 */
import type { Day } from '../../core/dates.js';

export interface Provider {
  /** For logs and the manifest: `inbox`, `eodhd`, `synthetic`. */
  readonly name: string;
  /** Called once before any other call, with the trading days the refresh will ask for. */
  prepare?(days: readonly Day[]): Promise<void>;
  /** Trading day `day`'s rows as a daily file, or null when the provider has nothing for it (yet). */
  day(day: Day): Promise<Uint8Array | null>;
  /** The fund list as it stands on `day`, or null when this provider keeps no list. */
  fundList(day: Day): Promise<Uint8Array | null>;
  /** A fund's history up to `day` as a price file, or null when the provider has none. */
  history(code: string, day: Day): Promise<Uint8Array | null>;
  /**
   * The 3-month US Treasury bill yield up to `day` as a price file whose adjusted
   * close is the yield in percent (C41), or null when the provider has none. Fetched
   * whole once per refresh and first load (a few hundred KB at most).
   */
  rates?(day: Day): Promise<Uint8Array | null>;
  /** The refresh published `days`: the provider may let go of what it delivered (the inbox moves its files). */
  committed?(days: readonly Day[], source: string): void;
  /**
   * For a first load: every fund the provider lists, current and delisted, as a
   * funds.csv (C35) whose IsInactive marks the delisted ones. A provider without it
   * cannot start from nothing.
   */
  universe?(): Promise<Uint8Array>;
  /** For a first load: a fund's history exactly as answered (empty, HTML, anything), or null when unknown to the provider. */
  rawHistory?(code: string): Promise<Uint8Array | null>;
  /** What each kind of request costs on the provider's own count of API calls, for the cost printed before a load. */
  readonly callCosts?: CallCosts;
}

export interface CallCosts {
  /** The current fund list (a daily refresh asks for it once). */
  list: number;
  /** The current and the delisted lists (a first load). */
  universe: number;
  /** One fund's history. */
  history: number;
  /** One trading day (`day()`). */
  day: number;
}

/** A provider failure the operator must hear about in one sentence (never carrying a secret). */
export class ProviderError extends Error {
  constructor(
    message: string,
    /** Whether trying again later can help (a limit, a maintenance window, a 5xx). */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
