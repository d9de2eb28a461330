/**
 * A first load's progress as people read it: on a terminal a bar (cli-progress) with
 * funds done of all, the pace, the API calls spent and the time left; elsewhere (a
 * log, a systemd journal) one JSON line every 5 % and at the end of each phase.
 */
import cliProgress from 'cli-progress';
import type { LoadProgress } from '../../builder/refresh/first-load.js';
import type { CliIo } from '../shared/io.js';

export function loadProgress(
  io: CliIo,
  clock: () => number = () => performance.now(),
): { update: (p: LoadProgress) => void; stop: () => void } {
  const started = clock();
  let phase: LoadProgress['phase'] | null = null;
  let first = 0;
  let lastStep = -1;
  let bar: cliProgress.SingleBar | null = null;
  const pace = (p: LoadProgress) => {
    const minutes = (clock() - started) / 60_000;
    const rate = minutes > 0 ? (p.done - first) / minutes : 0;
    const eta = rate > 0 ? Math.round(((p.total - p.done) / rate) * 60) : null;
    return { rate: Math.round(rate), eta };
  };
  const stop = () => {
    bar?.stop();
    bar = null;
  };
  const update = (p: LoadProgress): void => {
    if (p.phase !== phase) {
      stop();
      phase = p.phase;
      first = p.done;
      lastStep = -1;
      if (io.isTty && p.phase === 'histories') {
        bar = new cliProgress.SingleBar(
          {
            format:
              'histories [{bar}] {value}/{total} funds | {rate}/min | {calls} API calls | {failed} left out | ETA {eta_formatted}',
            stream: process.stderr,
            etaBuffer: 200,
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(p.total, p.done, { rate: 0, calls: p.calls, failed: p.failed });
      }
    }
    if (bar !== null) {
      bar.update(p.done, { rate: pace(p).rate, calls: p.calls, failed: p.failed });
      if (p.done >= p.total) stop();
      return;
    }
    if (io.isTty) return;
    const step = p.total === 0 ? 20 : Math.floor((p.done / p.total) * 20);
    if (step === lastStep) return;
    lastStep = step;
    const { rate, eta } = pace(p);
    io.err(
      JSON.stringify({
        event: 'first_load_progress',
        phase: p.phase,
        done: p.done,
        total: p.total,
        percent: p.total === 0 ? 100 : Math.floor((p.done / p.total) * 100),
        loaded: p.loaded,
        left_out: p.failed,
        api_calls: p.calls,
        per_minute: rate,
        eta_seconds: eta,
      }),
    );
  };
  return { update, stop };
}
