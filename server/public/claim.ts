/**
 * Directory claim file (C32): an MCP directory proves we own the server by fetching
 * `/.well-known/<name>.json`. Glama, the default, expects
 *
 *   {"$schema":"https://glama.ai/mcp/schemas/connector.json","claim":"<token from Glama>"}
 *
 * Other directories use other names and shapes, so only "a JSON object" is checked;
 * the file's own text is served unchanged, because some verifiers compare it with
 * what they handed out.
 *
 * Everything here runs at startup and throws: a configured claim that cannot be
 * served should stop the server, not surface weeks later as a failed listing.
 */
import { readFileSync } from 'node:fs';

const DEFAULT_CLAIM_NAME = 'glama';

// A claim is a few hundred bytes; a larger file is almost certainly the wrong path.
const MAX_CLAIM_BYTES = 64 * 1024;
// Lower-case because the path is matched byte for byte; a leading letter or digit
// keeps `.`/`..` and dot-files out of /.well-known.
const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
// fatal: a Latin-1 file would otherwise be served with U+FFFD where its bytes were.
const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface ClaimOptions {
  /** File name under /.well-known without `.json`; default `glama`. */
  name?: string;
  /** Path to the claim JSON; unset or empty: no claim route (404). */
  file?: string;
}

export interface ClaimRoute {
  path: string;
  body: string;
}

export function loadClaim(opts: ClaimOptions): ClaimRoute | null {
  const file = opts.file;
  if (file === undefined || file === '') return null;
  const name = opts.name === undefined || opts.name === '' ? DEFAULT_CLAIM_NAME : opts.name;
  if (!NAME_RE.test(name)) {
    throw new Error(
      `claim name ${JSON.stringify(name)} is not a safe path segment: use 1-64 characters from a-z 0-9 . _ -, ` +
        'starting with a letter or digit',
    );
  }

  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : String(err);
    throw new Error(`claim file ${file} cannot be read: ${why}`);
  }
  if (raw.length > MAX_CLAIM_BYTES) {
    throw new Error(`claim file ${file} is ${raw.length} bytes; a claim is a small JSON object (max 64 KiB)`);
  }

  // The decoder also drops a leading BOM (some Windows editors add one), which JSON.parse would reject.
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new Error(`claim file ${file} is not UTF-8 text`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`claim file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const found = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
    throw new Error(`claim file ${file} must hold a JSON object, found ${found}`);
  }
  return { path: `/.well-known/${name}.json`, body: text };
}
