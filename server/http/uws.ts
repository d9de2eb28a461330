/**
 * The uWebSockets.js binding, refused when it is not the native one: the package
 * silently falls back to a slow pure-JS server when its binary does not load for
 * this Node ABI or glibc, and a fund-returns server on that fallback would meet
 * none of its targets while appearing to work.
 */
import { createRequire } from 'node:module';
import type * as Uws from '@trufflesuite/uws-js-unofficial';

export type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
} from '@trufflesuite/uws-js-unofficial';

class NativeUwsMissing extends Error {
  readonly code = 'UWS_NOT_NATIVE';
}

let loaded: typeof Uws | null = null;

export function loadUws(): typeof Uws {
  if (loaded) return loaded;
  if (/^(true|1)$/i.test(process.env.UWS_USE_FALLBACK ?? '')) {
    throw new NativeUwsMissing(
      'UWS_USE_FALLBACK is set: refusing to serve on the slow JavaScript fallback of uWebSockets.js',
    );
  }
  const require = createRequire(import.meta.url);
  const uws = require('@trufflesuite/uws-js-unofficial') as typeof Uws;
  if (!isNative(uws)) {
    throw new NativeUwsMissing(
      `the uWebSockets.js native binary did not load for Node ${process.version} (ABI ${process.versions.modules}, ` +
        `${process.platform}-${process.arch}); refusing to start on its JavaScript fallback`,
    );
  }
  // Every response would carry `uWebSockets: 20`, naming the server and its version to
  // whoever asks. The build's one switch for it is this undocumented config: the binding's
  // uWS_cfg (src/addon.cpp) calls Loop::setSilent(true) for a key whose character codes
  // sum to 655, "silent", and HttpResponse::writeMark then leaves the header out. It
  // marks this thread's loop only, so every thread that loads the binding says it.
  uws._cfg('silent');
  loaded = uws;
  return uws;
}

/** The native binding's functions are C++; the fallback's are JavaScript. */
function isNative(uws: { App: unknown }): boolean {
  return typeof uws.App === 'function' && Function.prototype.toString.call(uws.App).includes('[native code]');
}
