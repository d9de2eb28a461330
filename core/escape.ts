/**
 * Text from input (source files, CURRENT, request data, file names) quoted in a
 * report, log line or error message is shown, never obeyed: a byte like ESC in a
 * price row would otherwise clear the operator's screen or retitle the terminal when
 * the build report is printed. Control characters (C0, DEL, C1), bidirectional
 * overrides and isolates (which reorder what is shown around them) and the Unicode
 * line separators become visible escapes: `\x1b`, `\u202e`.
 */

/** Every character escaped here; \n and \t are in it and left alone by escapeForTerminal only. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's purpose.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_LINES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this module's purpose.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeOne(c: string): string {
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

/** `s` on one line with every control and bidi character escaped: for quoting input. */
export function escapeControls(s: string): string {
  return s.replace(UNSAFE, escapeOne);
}

/** The same, but keeping newlines and tabs: for a whole message already laid out in lines. */
export function escapeForTerminal(s: string): string {
  return s.replace(UNSAFE_BUT_LINES, escapeOne);
}
