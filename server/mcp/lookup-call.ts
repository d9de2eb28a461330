/**
 * The commonest POST /mcp body read straight from its bytes: one tools/call of a tool
 * with a prepared result (tool-results.ts) whose only argument is a code,
 *
 *   {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getFund","arguments":{"code":"VTI"}}}
 *
 * with its members in any order and JSON whitespace between tokens. Its strings are
 * printable ASCII without escapes, its id such a string or a whole number of at most 15
 * digits. Anything else (another method, one member more or less, a duplicate, an
 * escape, a batch) is not read here and goes through JSON.parse and the checks
 * (rpc.ts). What this reads, JSON.parse reads the same and the checks pass
 * (messages.ts, tool-arguments.ts): the request parse was a seventh of a tools/call's
 * instructions (bench/reports/instructions.md).
 *
 * The two member orders the SDKs write (Python's `jsonrpc, id, method, params`, the
 * TypeScript one's `method, params, jsonrpc, id`) without whitespace are matched by one
 * regular expression each, whose compiled code reads a byte in a few instructions; a
 * JavaScript byte loop takes 20 to 30 (V8 reloads the length and checks bounds and
 * overflow on each), so the loop reads only the other orders and spacings.
 */

/** Where a lookup call's parts are in its body; one per thread, valid until the next read. */
export interface LookupCall {
  /** The id as JSON text, `[idStart, idEnd)`: the digits, or the string with its quotes. */
  idStart: number;
  idEnd: number;
  /** Index of the tool in the names readLookupCall was given. */
  tool: number;
  /** The code's characters, without quotes. */
  codeStart: number;
  codeEnd: number;
}

const call: LookupCall = { idStart: 0, idEnd: 0, tool: -1, codeStart: 0, codeEnd: 0 };

const bytes = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const JSONRPC = bytes('jsonrpc');
const ID = bytes('id');
const METHOD = bytes('method');
const PARAMS = bytes('params');
const NAME = bytes('name');
const ARGUMENTS = bytes('arguments');
const CODE = bytes('code');
const VERSION = bytes('2.0');
const TOOLS_CALL = bytes('tools/call');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MAX_ID_DIGITS = 15;

/** Failure of any step: positions are never negative. */
const NO = -1;

/** Past JSON whitespace from `p`. */
function ws(b: Uint8Array, p: number, n: number): number {
  while (p < n) {
    const c = b[p];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    p++;
  }
  return p;
}

/** The end (past the closing quote) of a string starting at `p`, or NO if it is not a plain one. */
function plainString(b: Uint8Array, p: number, n: number): number {
  if (p >= n || b[p] !== QUOTE) return NO;
  for (let q = p + 1; q < n; q++) {
    const c = b[q];
    if (c === QUOTE) return q + 1;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return NO;
  }
  return NO;
}

/** Whether `b[from..to)` is `word`. */
function is(b: Uint8Array, from: number, to: number, word: Uint8Array): boolean {
  if (to - from !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (b[from + k] !== word[k]) return false;
  return true;
}

/** The end of a whole number of at most MAX_ID_DIGITS digits without a leading zero at `p`, or NO. */
function wholeNumber(b: Uint8Array, p: number, n: number): number {
  let q = p;
  while (q < n && b[q] >= 0x30 && b[q] <= 0x39) q++;
  const digits = q - p;
  if (digits === 0 || digits > MAX_ID_DIGITS || (digits > 1 && b[p] === 0x30)) return NO;
  return q;
}

/** The value's position after the key at `p` and its colon, or NO. */
function afterColon(b: Uint8Array, keyEnd: number, n: number): number {
  const p = ws(b, keyEnd, n);
  return p < n && b[p] === COLON ? ws(b, p + 1, n) : NO;
}

/** Past a comma (another member follows: its key's position) or the closing brace (-2 - its end), or NO. */
function nextMember(b: Uint8Array, valueEnd: number, n: number): number {
  if (valueEnd === NO) return NO;
  const p = ws(b, valueEnd, n);
  if (p >= n) return NO;
  if (b[p] === COMMA) return ws(b, p + 1, n);
  return b[p] === CLOSE ? -2 - (p + 1) : NO;
}

/** Past `{` and whitespace at `p`, or NO. */
function opened(b: Uint8Array, p: number, n: number): number {
  return p < n && b[p] === OPEN ? ws(b, p + 1, n) : NO;
}

/** The characters of a JSON string the reader takes: printable ASCII but `"` and `\`. */
const CHARS = '[ !#-\\[\\]-~]';
const ID_TEXT = `[1-9][0-9]{0,${MAX_ID_DIGITS - 1}}|0|"${CHARS}*"`;
const PY_HEAD = '{"jsonrpc":"2.0","id":';
const PY_METHOD = ',"method":"tools/call","params":{"name":"';
const TS_HEAD = '{"method":"tools/call","params":{"name":"';
const ARGUMENTS_CODE = '","arguments":{"code":"';
const PY_TAIL = '"}}}';
const TS_ID = '"}},"jsonrpc":"2.0","id":';
/** `s` matched as it is. */
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Reads lookup calls of the tools `names` (ASCII): `read(body)` gives the call or null. */
export function lookupReader(names: readonly string[]): (b: Buffer) => LookupCall | null {
  const tools = names.map((t) => bytes(t));
  const tool = `(${names.map(literal).join('|')})`;
  const code = `(${CHARS}*)`;
  const python = new RegExp(
    `^${literal(PY_HEAD)}(${ID_TEXT})${literal(PY_METHOD)}${tool}${literal(ARGUMENTS_CODE)}${code}${literal(PY_TAIL)}$`,
  );
  const typescript = new RegExp(
    `^${literal(TS_HEAD)}${tool}${literal(ARGUMENTS_CODE)}${code}${literal(TS_ID)}(${ID_TEXT})\\}$`,
  );
  return (b) => {
    const n = b.length;
    // Latin-1: one character per byte, so a character's index is its byte's.
    const text = b.toString('latin1', 0, n);
    let m = python.exec(text);
    if (m !== null) {
      call.idStart = PY_HEAD.length;
      call.idEnd = PY_HEAD.length + m[1].length;
      call.tool = names.indexOf(m[2]);
      call.codeEnd = n - PY_TAIL.length;
      call.codeStart = call.codeEnd - m[3].length;
      return call;
    }
    m = typescript.exec(text);
    if (m !== null) {
      call.tool = names.indexOf(m[1]);
      call.codeStart = TS_HEAD.length + m[1].length + ARGUMENTS_CODE.length;
      call.codeEnd = call.codeStart + m[2].length;
      call.idEnd = n - 1;
      call.idStart = call.idEnd - m[3].length;
      return call;
    }
    return readLookupCall(b, tools);
  };
}

/**
 * The lookup call in `b`, or null when it is anything else. `tools`: the names of the
 * tools to recognise, as ASCII bytes; `call.tool` is the index of the one called.
 * Straight loops, no callbacks.
 */
function readLookupCall(b: Uint8Array, tools: readonly Uint8Array[]): LookupCall | null {
  const n = b.length;
  let seen = 0;
  call.tool = -1;
  let p = opened(b, ws(b, 0, n), n);
  while (p >= 0) {
    const keyEnd = plainString(b, p, n);
    if (keyEnd === NO) return null;
    const at = afterColon(b, keyEnd, n);
    if (at === NO) return null;
    let end = NO;
    if (is(b, p + 1, keyEnd - 1, JSONRPC) && (seen & 1) === 0) {
      seen |= 1;
      end = plainString(b, at, n);
      if (end !== NO && !is(b, at + 1, end - 1, VERSION)) end = NO;
    } else if (is(b, p + 1, keyEnd - 1, ID) && (seen & 2) === 0) {
      seen |= 2;
      end = at < n && b[at] === QUOTE ? plainString(b, at, n) : wholeNumber(b, at, n);
      call.idStart = at;
      call.idEnd = end;
    } else if (is(b, p + 1, keyEnd - 1, METHOD) && (seen & 4) === 0) {
      seen |= 4;
      end = plainString(b, at, n);
      if (end !== NO && !is(b, at + 1, end - 1, TOOLS_CALL)) end = NO;
    } else if (is(b, p + 1, keyEnd - 1, PARAMS) && (seen & 8) === 0) {
      seen |= 8;
      end = params(b, at, n, tools);
    }
    p = nextMember(b, end, n);
  }
  if (p === NO || seen !== 15) return null;
  return ws(b, -2 - p, n) === n ? call : null;
}

/** `{"name": …, "arguments": {"code": …}}` in either order at `p`: its end, or NO. */
function params(b: Uint8Array, from: number, n: number, tools: readonly Uint8Array[]): number {
  let seen = 0;
  let p = opened(b, from, n);
  while (p >= 0) {
    const keyEnd = plainString(b, p, n);
    if (keyEnd === NO) return NO;
    const at = afterColon(b, keyEnd, n);
    if (at === NO) return NO;
    let end = NO;
    if (is(b, p + 1, keyEnd - 1, NAME) && (seen & 1) === 0) {
      seen |= 1;
      end = plainString(b, at, n);
      if (end !== NO) {
        for (let t = 0; t < tools.length; t++) if (is(b, at + 1, end - 1, tools[t])) call.tool = t;
        if (call.tool < 0) end = NO;
      }
    } else if (is(b, p + 1, keyEnd - 1, ARGUMENTS) && (seen & 2) === 0) {
      seen |= 2;
      end = codeOnly(b, at, n);
    }
    p = nextMember(b, end, n);
  }
  return p === NO || seen !== 3 ? NO : -2 - p;
}

/** `{"code": "…"}` at `p`: its end, or NO. */
function codeOnly(b: Uint8Array, from: number, n: number): number {
  const p = opened(b, from, n);
  if (p === NO) return NO;
  const keyEnd = plainString(b, p, n);
  if (keyEnd === NO || !is(b, p + 1, keyEnd - 1, CODE)) return NO;
  const at = afterColon(b, keyEnd, n);
  if (at === NO) return NO;
  const end = plainString(b, at, n);
  if (end === NO) return NO;
  call.codeStart = at + 1;
  call.codeEnd = end - 1;
  const close = ws(b, end, n);
  return close < n && b[close] === CLOSE ? close + 1 : NO;
}
