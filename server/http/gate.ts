/**
 * The one place access control and metering plug into the request pipeline
 * (route → gate: auth then limits → validation → lookup, C23). REST and MCP both
 * pass through `Gate.admit` before anything else runs, so they share one
 * implementation and a rejected request costs nothing.
 */
import type { HeaderSource } from './headers.js';

export type GateDecision =
  | { readonly ok: true; readonly headers: HeaderSource | null }
  | {
      readonly ok: false;
      readonly status: string;
      /**
       * The application/problem+json body (C22) for the request path as its
       * `instance`: rendered only for a refusal, so admitting needs no path.
       */
      body(instance: string): string;
      readonly headers: HeaderSource | null;
    };

export interface Gate {
  /**
   * Decide on a request from its Authorization header value; must not throw.
   * Synchronous on one machine; a Promise when limits live in Redis.
   */
  admit(authorization: string): GateDecision | Promise<GateDecision>;
}

const ADMITTED: GateDecision = { ok: true, headers: null };

/** Until access control is configured every request is admitted unmetered. */
export const OPEN_GATE: Gate = {
  admit: () => ADMITTED,
};
