/**
 * Work a page starts that its answer must not wait for: the emails of sign-up and
 * reset, and making a new account. What an answer waits for is what its time tells
 * an onlooker, so work that differs by whether an address has an account runs here,
 * after the answer is written, and every branch answers after the same work.
 */
export type AfterLog = (what: string, e: unknown) => void;

/** Tasks started but not finished, at most; past it a task is dropped (and said). */
const MAX_AFTER_ANSWER = 1000;

export class AfterAnswer {
  #running = new Set<Promise<void>>();

  readonly #onError: AfterLog;
  readonly #max: number;
  constructor(onError: AfterLog, max: number = MAX_AFTER_ANSWER) {
    this.#onError = onError;
    this.#max = max;
  }

  /** Start `task` once the current answer is written (a later turn of the event loop). */
  run(what: string, task: () => Promise<void>): void {
    if (this.#running.size >= this.#max) {
      this.#onError(
        what,
        new Error(`${this.#max} tasks already wait after their answers: this one is dropped`),
      );
      return;
    }
    const p: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(task)
      .catch((e: unknown) => this.#onError(what, e))
      .finally(() => this.#running.delete(p));
    this.#running.add(p);
  }

  /** Resolves once every task started so far has ended (stopping; tests). */
  async settle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }
}
