/**
 * JSON numbers as Python holds them, for echoing a body's values in a 422 (C20).
 * `JSON.parse` forgets what Python's `json.loads` keeps: whether a number was written
 * as an integer or a float (`1899.0` stays a float and is echoed `1899.0`, `-0.0`
 * stays `-0.0`), and every digit of a big integer. FastAPI echoes Python's values, so
 * on the error path the body is read again here, its numbers kept as PyNumber, and
 * written back with Python's `repr`.
 */

/** A JSON number as Python read it: an exact int, or a float. */
export class PyNumber {
  constructor(
    /** Python's `repr` of the value: what FastAPI's JSON answer shows. */
    readonly repr: string,
    readonly isInt: boolean,
    /** The nearest double (JavaScript's reading). */
    readonly value: number,
  ) {}
}

/** Python's `repr(float)`: the shortest round-trip digits, fixed from 1e-4 to 1e16, else `1e+16`. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    if (exp >= digits.length - 1) return `${sign}${digits}${'0'.repeat(exp - digits.length + 1)}.0`;
    return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp);
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
}

/**
 * Read `text`, which JSON.parse has already accepted, as Python's `json.loads` would:
 * numbers as PyNumber, objects without a prototype (a key `__proto__` stays a key).
 * Values nested deeper than `maxDepth` become `clipped` (the echo clips there anyway),
 * read over without recursion.
 */
export function parsePythonJson(text: string, maxDepth: number, clipped: unknown): unknown {
  return new PythonJsonReader(text, maxDepth, clipped).value(0);
}

/** One pass over a text JSON.parse accepted, so no step checks what is well-formed. */
class PythonJsonReader {
  readonly #text: string;
  readonly #maxDepth: number;
  readonly #clipped: unknown;
  #i = 0;

  constructor(text: string, maxDepth: number, clipped: unknown) {
    this.#text = text;
    this.#maxDepth = maxDepth;
    this.#clipped = clipped;
  }

  /** The value at the cursor, `depth` levels down; arrays and objects recurse here. */
  value(depth: number): unknown {
    const text = this.#text;
    this.#ws();
    const c = text.charCodeAt(this.#i);
    if (c === 34) return this.#str();
    if (c !== 123 && c !== 91) return this.#scalar();
    if (depth >= this.#maxDepth) {
      this.#skip();
      return this.#clipped;
    }
    this.#i++;
    if (c === 91) {
      const out: unknown[] = [];
      this.#ws();
      if (text.charCodeAt(this.#i) === 93) {
        this.#i++;
        return out;
      }
      for (;;) {
        out.push(this.value(depth + 1));
        this.#ws();
        if (text.charCodeAt(this.#i++) === 93) return out;
      }
    }
    const out: Record<string, unknown> = Object.create(null);
    this.#ws();
    if (text.charCodeAt(this.#i) === 125) {
      this.#i++;
      return out;
    }
    for (;;) {
      this.#ws();
      const k = this.#str();
      this.#ws();
      this.#i++; // ':'
      out[k] = this.value(depth + 1);
      this.#ws();
      if (text.charCodeAt(this.#i++) === 125) return out;
    }
  }

  #ws(): void {
    const text = this.#text;
    let i = this.#i;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      i++;
    }
    this.#i = i;
  }

  #str(): string {
    const text = this.#text;
    const start = this.#i;
    let i = start + 1;
    while (text.charCodeAt(i) !== 34) i += text.charCodeAt(i) === 92 ? 2 : 1;
    this.#i = i + 1;
    return JSON.parse(text.slice(start, i + 1)) as string;
  }

  /** A value nested too deep: bracket counting, strings jumped over. */
  #skip(): void {
    const text = this.#text;
    let depth = 0;
    do {
      const c = text.charCodeAt(this.#i);
      if (c === 34) {
        this.#str();
        continue;
      }
      if (c === 91 || c === 123) depth++;
      else if (c === 93 || c === 125) depth--;
      this.#i++;
    } while (depth > 0);
  }

  /** true, false, null or a number. */
  #scalar(): unknown {
    const text = this.#text;
    const start = this.#i;
    if (text.startsWith('true', start)) {
      this.#i += 4;
      return true;
    }
    if (text.startsWith('false', start)) {
      this.#i += 5;
      return false;
    }
    if (text.startsWith('null', start)) {
      this.#i += 4;
      return null;
    }
    let i = start;
    while (i < text.length && /[-+.0-9eE]/.test(text[i])) i++;
    this.#i = i;
    return pyNumber(text.slice(start, i));
  }
}

/** A number's literal as Python reads it. */
function pyNumber(literal: string): PyNumber | string {
  const n = Number(literal);
  if (/[.eE]/.test(literal)) {
    // A float past the double range (1e400) has no JSON form: echoed as the string
    // "Infinity", as the rest of the echo does (FastAPI itself fails with a 500).
    return Number.isFinite(n) ? new PyNumber(pyFloatRepr(n), false, n) : String(n);
  }
  // An int: its exact digits ("-0" is 0).
  return new PyNumber(literal === '-0' ? '0' : literal, true, n + 0);
}

/** A token no client can send, so a PyNumber's place in JSON.stringify's output is unmistakable. */
const MARK = `\u0000py${Math.random().toString(36).slice(2)}:`;
const MARK_RE = new RegExp(`"\\\\u0000${MARK.slice(1)}([^"\\\\]*)\\\\u0000"`, 'g');

/** JSON.stringify, with every PyNumber written as Python writes it. */
export function stringifyWithPyNumbers(v: unknown): string {
  const json = JSON.stringify(v, (_k, x) => (x instanceof PyNumber ? `${MARK}${x.repr}\u0000` : x));
  return json.includes(MARK.slice(1)) ? json.replace(MARK_RE, '$1') : json;
}
