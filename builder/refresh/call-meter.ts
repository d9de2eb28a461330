/**
 * What a provider's requests may spend: a pace in requests per minute (the provider's
 * minute limit, kept under rather than discovered through 429s) and a budget of API
 * calls for the run (`--max-calls`, counted as the provider counts them: a bulk request
 * is 100 calls). Every request goes through `acquire` before it is sent.
 */
import { ProviderError } from './provider.js';

/** EODHD answers over 1,000 requests a minute with 429; the default stays a fifth under it. */
export const DEFAULT_MAX_RATE = 800;

/** The run's call budget is spent: a clean stop, to be resumed after the provider's daily reset. */
export class CallBudgetReached extends ProviderError {
  constructor(
    readonly budget: number,
    readonly spent: number,
  ) {
    super(
      `stopped at the --max-calls budget: ${spent} of ${budget} API calls spent, the next request would pass it`,
      true,
    );
    this.name = 'CallBudgetReached';
  }
}

export interface CallMeterOptions {
  /** Requests per minute; Infinity sends them as fast as they come. */
  maxRate: number;
  /** API calls this run may spend; undefined: no budget. */
  maxCalls?: number;
  /** A monotonic clock in ms (tests pass their own). */
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export class CallMeter {
  /** API calls spent (reserved) by this run. */
  spent = 0;
  /** Requests sent by this run. */
  requests = 0;
  #nextSlot = Number.NEGATIVE_INFINITY;
  readonly #interval: number;
  readonly #clock: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(readonly opts: CallMeterOptions) {
    if (!(opts.maxRate > 0)) throw new Error(`maxRate must be positive: ${opts.maxRate}`);
    this.#interval = 60_000 / opts.maxRate;
    this.#clock = opts.clock ?? (() => performance.now());
    this.#sleep = opts.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  }

  /**
   * Reserve `cost` calls and wait for this request's turn: request starts are spaced
   * evenly, 60 s ÷ maxRate apart, so no minute ever holds more than maxRate of them
   * (plus the one at its edge). Throws CallBudgetReached, spending nothing, when the
   * request would pass the budget.
   */
  async acquire(cost: number): Promise<void> {
    const budget = this.opts.maxCalls;
    if (budget !== undefined && this.spent + cost > budget) throw new CallBudgetReached(budget, this.spent);
    this.spent += cost;
    this.requests++;
    const now = this.#clock();
    const slot = Math.max(now, this.#nextSlot + this.#interval);
    this.#nextSlot = slot;
    if (slot > now) await this.#sleep(slot - now);
  }

  /** Whether a request of `cost` calls still fits the budget. */
  fits(cost: number): boolean {
    return this.opts.maxCalls === undefined || this.spent + cost <= this.opts.maxCalls;
  }
}
