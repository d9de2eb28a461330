/**
 * The inbox provider: files an upstream job drops into a directory, in the formats the
 * builder reads: `<YYYY-MM-DD>.csv` daily files (C37), optionally `funds.csv` (the fund
 * list, C35) and `prices/<Code>.csv` for new funds' histories. Each file is checked by
 * the refresh like any provider's data; once the refresh has published, the files it
 * used move into the source directory under `received/inbox/`, so the inbox holds only
 * what is still to come and nothing is applied twice.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type Day, formatDay } from '../../core/dates.js';
import type { Provider } from './provider.js';

function readIfThere(path: string): Uint8Array | null {
  try {
    return readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Rename, or copy then remove when the inbox is on another file system (EXDEV). */
function moveFile(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    copyFileSync(from, to);
    unlinkSync(from);
  }
}

export function inboxProvider(inbox: string): Provider {
  if (!existsSync(inbox)) throw new Error(`--inbox ${inbox} does not exist`);
  const used: string[] = [];
  const take = (name: string): Uint8Array | null => {
    const bytes = readIfThere(join(inbox, name));
    if (bytes !== null) used.push(name);
    return bytes;
  };
  return {
    name: 'inbox',
    async day(day: Day) {
      return take(`${formatDay(day)}.csv`);
    },
    async fundList() {
      return take('funds.csv');
    },
    async history(code: string) {
      return take(join('prices', `${code}.csv`));
    },
    committed(days, source) {
      const stamp = formatDay(days[days.length - 1]);
      const to = join(source, 'received', 'inbox');
      mkdirSync(join(to, 'prices'), { recursive: true });
      for (const name of used) {
        // A fund list is dated by the last day it was used with, so every one is kept.
        const target = name === 'funds.csv' ? `funds-${stamp}.csv` : name;
        moveFile(join(inbox, name), join(to, target));
      }
      used.length = 0;
    },
  };
}
