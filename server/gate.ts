/**
 * The one place access control and metering plug into the request pipeline
 * (route → gate: auth then limits → validation → lookup, C23). REST and MCP both
 * pass through `Gate.admit` before anything else runs, so they share one
 * implementation and a rejected request costs nothing.
 */
import type { HeaderSource } from './http/headers.js';

export type GateDecision =
  | { readonly ok: true; readonly headers: HeaderSource | null }
  | {
      readonly ok: false;
      readonly status: string;
      /** application/problem+json body (C22). */
      readonly body: string;
      readonly headers: HeaderSource | null;
    };

export interface Gate {
  /**
   * Decide on a request from its Authorization header value and path; must not
   * throw. Synchronous on one machine; a Promise when limits live in Redis.
   */
  admit(authorization: string, path: string): GateDecision | Promise<GateDecision>;
}

const ADMITTED: GateDecision = { ok: true, headers: null };

/** Until access control is configured every request is admitted unmetered. */
export const OPEN_GATE: Gate = {
  admit: () => ADMITTED,
};
