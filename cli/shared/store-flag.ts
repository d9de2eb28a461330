import { resolve } from 'node:path';
import { DEFAULT_STORE } from '../../accounts/open-store.js';
import { flagLabel, type ParsedArgs, stringFlag, UsageError } from './args.js';
import type { Flag } from './flags.js';

/**
 * --store: a directory (the embedded store) or a redis:// or rediss:// URL. Any other
 * scheme is a mistake, not a directory named "http:": it would give this server a
 * private empty store, every key 401 and its own counts.
 */
function storeFlag(args: ParsedArgs): string {
  const store = stringFlag(args, 'store', DEFAULT_STORE);
  const label = flagLabel(args, 'store');
  if (/^rediss?:\/\//i.test(store)) {
    try {
      const url = new URL(store);
      if (url.hostname === '') throw new Error('no host');
    } catch {
      throw new UsageError(
        `${label} is not a valid Redis URL (redis://[:password@]HOST:PORT): ${JSON.stringify(store)}`,
      );
    }
    return store;
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(store)) {
    throw new UsageError(
      `${label} must be a directory or a redis:// or rediss:// URL, not ${JSON.stringify(store)}`,
    );
  }
  return resolve(store);
}

function storeOption(value: string): Flag<string> {
  return {
    name: 'store',
    kind: 'string',
    value,
    help: 'the access store (accounts, keys, counts): a directory, or a redis:// URL several servers share',
    read: (args) => storeFlag(args),
  };
}

/** `--store` as the account commands show it. */
export const STORE = storeOption(DEFAULT_STORE);
/** `--store` as serve and store show it. */
export const STORE_OR_REDIS = storeOption(`${DEFAULT_STORE} | redis://HOST:PORT`);
