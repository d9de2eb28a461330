/**
 * Noticing that another process changed the access log: a file-system watcher for
 * speed, and a poll in case an event is missed (inotify limits, odd file systems).
 * The log's identity, size and times form its signature; a change of signature is a
 * change of the log, announced at most once per `minNotifyMs`.
 */
import { type FSWatcher, statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface WatchOptions {
  readonly pollMs: number;
  readonly minNotifyMs: number;
}

function signature(logPath: string): string {
  try {
    const s = statSync(logPath, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return 'none';
  }
}

/** Call `onChange` when the log at `logPath` changes; returns the unsubscribe. */
export function watchLog(logPath: string, opts: WatchOptions, onChange: () => void): () => void {
  let last = signature(logPath);
  let lastNotify = 0;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const check = () => {
    if (closed) return;
    const sig = signature(logPath);
    if (sig === last) return;
    const wait = lastNotify + opts.minNotifyMs - Date.now();
    if (wait > 0) {
      schedule(wait);
      return;
    }
    last = sig;
    lastNotify = Date.now();
    onChange();
  };
  const schedule = (ms: number) => {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      timer = null;
      check();
    }, ms);
    timer.unref();
  };
  const poll = setInterval(check, opts.pollMs);
  poll.unref();
  const watcher = watchDir(logPath, () => schedule(20));
  return () => {
    if (closed) return;
    closed = true;
    clearInterval(poll);
    if (timer !== null) clearTimeout(timer);
    watcher.close();
  };
}

/** Watch the log's directory for events on the log (and its temp files); a watcher that fails just stops. */
function watchDir(logPath: string, onEvent: () => void): { close(): void } {
  const name = basename(logPath);
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dirname(logPath), { persistent: false }, (_event, file) => {
      if (file !== null && !String(file).startsWith(name)) return;
      // Coalesce the burst of events one append or rename produces.
      onEvent();
    });
    watcher.on('error', () => {
      watcher?.close();
      watcher = null;
    });
  } catch {
    // No watcher: the poll alone still notices within pollMs.
  }
  return { close: () => watcher?.close() };
}
