/**
 * Read-your-writes for new keys, bounded: a key the server does not
 * know may have been created a moment ago (`keys create` returned before the server
 * heard of it), so it looks at the store again before refusing. A look is one read of
 * the store's new changes, and a flood of made-up keys must not become a flood of reads:
 * every caller that asks before a look starts waits for that same look, and looks start
 * at most once per `intervalMs`. A look always starts after the request that asked for
 * it, so it sees every change that was durable when the request arrived.
 */
/** Least time between two looks of one thread, and of one process at the store. */
export const LOOK_INTERVAL_MS = 50;
/** Longest a request waits for a look before its key is refused as unknown. */
export const LOOK_DEADLINE_MS = 2000;

export class Lookout {
  /** The look that will start next, shared by everyone who asks until it starts. */
  #next: Promise<void> | null = null;
  #lastStart = Number.NEGATIVE_INFINITY;
  #looks = 0;

  readonly #look: () => Promise<unknown>;
  readonly #intervalMs: number;
  readonly #clock: () => number;
  constructor(
    look: () => Promise<unknown>,
    intervalMs: number,
    clock: () => number = () => performance.now(),
  ) {
    this.#look = look;
    this.#intervalMs = intervalMs;
    this.#clock = clock;
  }

  /** Looks started so far. */
  get looks(): number {
    return this.#looks;
  }

  /** Resolves once a look that started after this call has ended (well or not). */
  request(): Promise<void> {
    if (this.#next !== null) return this.#next;
    const wait = Math.max(0, this.#lastStart + this.#intervalMs - this.#clock());
    const next = new Promise<void>((resolve) => {
      const start = () => {
        // From here on a caller needs a later look: this one may miss what it waits for.
        this.#next = null;
        this.#lastStart = this.#clock();
        this.#looks++;
        let p: Promise<unknown>;
        try {
          p = this.#look();
        } catch {
          p = Promise.resolve();
        }
        p.then(
          () => resolve(),
          () => resolve(),
        );
      };
      if (wait === 0) queueMicrotask(start);
      else setTimeout(start, wait);
    });
    this.#next = next;
    return next;
  }
}
