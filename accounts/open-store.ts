/**
 * `--store` (env FUNDRETURNS_STORE): a directory for the embedded file store, or a
 * `redis://` URL for the store several servers share.
 */
import { resolve } from 'node:path';
import type { AccessStore } from './model.js';
import { redactUrl } from './redact-url.js';
import type { LogFn } from './redis-client.js';
import { FileAccessStore } from './store-file.js';

export const DEFAULT_STORE = './var/store';

export function isRedisSpec(spec: string): boolean {
  return /^rediss?:\/\//i.test(spec);
}

/** Open the store a `--store` value names (the directory is created if missing); `log` hears a Redis store's warnings. */
export async function openStore(
  spec: string = process.env.FUNDRETURNS_STORE || DEFAULT_STORE,
  log?: LogFn,
): Promise<AccessStore> {
  if (isRedisSpec(spec)) {
    let mod: typeof import('./store-redis.js');
    try {
      // Loaded only for a Redis store, so the embedded store never needs the client library.
      mod = await import('./store-redis.js');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
        throw new Error(`the Redis store is not available in this build (${(e as Error).message})`);
      throw e;
    }
    const store = new mod.RedisAccessStore(spec, { log });
    try {
      await store.connect();
    } catch (e) {
      await store.close().catch(() => {});
      throw new Error(`cannot connect to the store at ${redactUrl(spec)}: ${(e as Error).message}`);
    }
    return store;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec))
    throw new Error(`--store must be a directory or a redis:// URL, not ${JSON.stringify(redactUrl(spec))}`);
  return await FileAccessStore.open(resolve(spec));
}
