/**
 * Content negotiation (RFC 9110 §12.5.1 Accept, §12.5.3 Accept-Encoding): which of
 * the server's two body formats (JSON, MessagePack) and which content coding (br,
 * gzip, none) a request gets.
 *
 * Both headers are lists of `token[;param…][;q=weight]`. Tokens and media types
 * are matched case-insensitively; a weight is a number from 0 to 1, absent means 1,
 * and 0 means "not acceptable". A weight that does not parse, or lies outside 0..1,
 * makes its element not acceptable (the server never guesses in a client's favour
 * of a format or coding it may not read). When a token is listed twice, its first
 * weight counts.
 *
 * `wantsMsgpack` runs on every request: an Accept that does not mention msgpack
 * (the usual case: none, `*\/*`, `application/json`) is answered by one regex test,
 * without allocating or parsing. `acceptsJson` runs on every MCP POST: the same
 * Accept as the last one is answered from memory (parsing it cost 4,900 instructions).
 */

export type ContentCoding = 'br' | 'gzip';

/**
 * One element of a list header: its token (lower case, parameters stripped) and
 * weight, or null for an empty element.
 */
function element(raw: string): { token: string; q: number } | null {
  const semi = raw.indexOf(';');
  const token = (semi < 0 ? raw : raw.slice(0, semi)).trim().toLowerCase();
  if (token === '') return null;
  let q = 1;
  if (semi >= 0) {
    for (const param of raw.slice(semi + 1).split(';')) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
      q = weight(param.slice(eq + 1).trim());
      break;
    }
  }
  return { token, q };
}

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** RFC 9110 `qvalue`; a malformed one is 0 (not acceptable). */
function weight(text: string): number {
  return QVALUE.test(text) ? Number(text) : 0;
}

/** The weight of each listed token (first occurrence wins). */
function weights(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const raw of header.split(',')) {
    const e = element(raw);
    if (e !== null && !out.has(e.token)) out.set(e.token, e.q);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Accept-Encoding

/**
 * The content coding for a compressible body, or null for none (identity).
 *
 * A coding's weight is its own if listed (`x-gzip` counts as `gzip`, RFC 9110
 * §8.4.1.3), else that of `*` if listed, else 0. br is chosen when its weight is
 * above 0 and at least gzip's (br compresses better, so it wins a tie); else gzip
 * when its weight is above 0; else nothing. So `gzip;q=0` and `*;q=0` and
 * `identity` give no compression, `br;q=0, gzip` gives gzip and `*` gives br.
 * Only read for bodies large enough to compress, so it may allocate.
 */
export function chooseEncoding(acceptEncoding: string): ContentCoding | null {
  if (acceptEncoding.length === 0) return null;
  const w = weights(acceptEncoding);
  const any = w.get('*') ?? 0;
  const br = w.get('br') ?? any;
  const gzip = w.get('gzip') ?? w.get('x-gzip') ?? any;
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return null;
}

// ---------------------------------------------------------------------------
// Accept

const MENTIONS_MSGPACK = /msgpack/i;

/** The last Accept that mentioned msgpack and its answer (a client sends the same one each time). */
let lastAccept = '';
let lastWants = false;

/**
 * True when the client prefers MessagePack (`application/msgpack`) to JSON.
 *
 * The rule: let m be the weight of `application/msgpack` as listed, and j that of
 * `application/json` if listed, else of `application/*` if listed, else of `*\/*`
 * if listed, else 0. MessagePack is chosen when m > 0 and m ≥ j: a client that
 * names MessagePack at least as high as JSON asks for it (JSON, everyone's default,
 * is then its fallback, as in `application/msgpack, application/json`). Everything
 * else gets JSON. Examples: `application/msgpack` → msgpack; `application/msgpack;q=0`
 * → JSON; `application/msgpack;q=0.5, application/json` → JSON;
 * `application/msgpack, application/json;q=0.9` → msgpack; `application/msgpack,
 * *\/*` → msgpack; `APPLICATION/MSGPACK` → msgpack.
 */
export function wantsMsgpack(accept: string): boolean {
  // Hot path: no Accept, or one that never names msgpack in any case.
  if (accept.length === 0 || !MENTIONS_MSGPACK.test(accept)) return false;
  if (accept === lastAccept) return lastWants;
  const wants = prefersMsgpack(accept);
  lastAccept = accept;
  lastWants = wants;
  return wants;
}

function prefersMsgpack(accept: string): boolean {
  const w = weights(accept);
  const m = w.get('application/msgpack');
  if (m === undefined || m <= 0) return false;
  const j = w.get('application/json') ?? w.get('application/*') ?? w.get('*/*') ?? 0;
  return m >= j;
}

/** The last Accept that acceptsJson read and its answer: an MCP client sends the same one on every POST. */
let lastJsonAccept = '';
let lastAcceptsJson = true;

/** True when a response in JSON is acceptable: no Accept, or JSON (or a wildcard over it) with a weight above 0. */
export function acceptsJson(accept: string): boolean {
  if (accept === lastJsonAccept) return lastAcceptsJson;
  const accepts = jsonWeight(accept) > 0;
  lastJsonAccept = accept;
  lastAcceptsJson = accepts;
  return accepts;
}

function jsonWeight(accept: string): number {
  if (accept.trim() === '') return 1;
  const w = weights(accept);
  return w.get('application/json') ?? w.get('application/*') ?? w.get('*/*') ?? 0;
}
