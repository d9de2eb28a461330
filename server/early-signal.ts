/**
 * SIGTERM and SIGINT held from the first instant of `fundreturns serve` (bin/ installs
 * this before anything else loads) until the serve command takes them over: a signal
 * in the ~150 ms of module loading would otherwise kill the process with 143 instead
 * of the clean stop and exit 0 README promises at any time from the start.
 */
const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
let seen: NodeJS.Signals | null = null;
const hold = (signal: NodeJS.Signals) => {
  seen ??= signal;
};

export function holdSignals(): void {
  for (const s of SIGNALS) process.on(s, hold);
}

/** Stop holding; the signal that arrived meanwhile, if any, for the caller to act on. */
export function releaseSignals(): NodeJS.Signals | null {
  for (const s of SIGNALS) process.off(s, hold);
  return seen;
}
