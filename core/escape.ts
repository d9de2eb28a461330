/**
 * Text from input (source files, CURRENT, request data, file names, what a person
 * typed: an email, a key label) quoted in a report, log line, CLI listing, error
 * message or dashboard page is shown, never obeyed, and never hides anything: a byte
 * like ESC in a price row would otherwise clear the operator's screen or retitle the
 * terminal, a right-to-left override would reorder what is shown around it, and a
 * zero-width space would make `admin\u200b@example.com` read as `admin@example.com`.
 *
 * One set of characters, one way of showing them, for the terminal and the pages
 * alike: control characters (C0, DEL, C1), format characters (bidirectional marks,
 * overrides and isolates, zero-width spaces and joiners, the BOM, tags), the Unicode
 * line separators, and the characters drawn as nothing (fillers, variation
 * selectors, the combining grapheme joiner) become visible escapes: `\x1b`, `\u202e`,
 * `\u{e0041}`. Sign-up refuses an address holding any of them (unsafeCharacter).
 */

// Cc: controls; Cf: format (bidi, zero-width, BOM, tags); Zl/Zp: line and paragraph
// separators; then the invisible ones of other categories: the combining grapheme
// joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors and
// vowel separator, the variation selectors and their supplement.
const UNSAFE_CLASS =
  '\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u3164\\ufe00-\\ufe0f\\uffa0\\u{e0100}-\\u{e01ef}';
const UNSAFE = new RegExp(`[${UNSAFE_CLASS}]`, 'gu');
/** The same without \n and \t, which a message laid out in lines keeps. */
const UNSAFE_BUT_LINES = new RegExp(`(?![\\n\\t])[${UNSAFE_CLASS}]`, 'gu');
const FIRST_UNSAFE = new RegExp(`[${UNSAFE_CLASS}]`, 'u');

function escapeOne(c: string): string {
  const n = c.codePointAt(0) as number;
  if (n < 0x100) return `\\x${n.toString(16).padStart(2, '0')}`;
  if (n < 0x10000) return `\\u${n.toString(16).padStart(4, '0')}`;
  return `\\u{${n.toString(16)}}`;
}

/** `s` on one line with every unsafe character escaped: for quoting input. */
export function escapeControls(s: string): string {
  return s.replace(UNSAFE, escapeOne);
}

/** The same, but keeping newlines and tabs: for a whole message already laid out in lines. */
export function escapeForTerminal(s: string): string {
  return s.replace(UNSAFE_BUT_LINES, escapeOne);
}

/** A name for the characters people meet most, so a refusal can say which one it was. */
const NAMES: ReadonlyMap<number, string> = new Map([
  [0x00ad, 'SOFT HYPHEN'],
  [0x034f, 'COMBINING GRAPHEME JOINER'],
  [0x061c, 'ARABIC LETTER MARK'],
  [0x180e, 'MONGOLIAN VOWEL SEPARATOR'],
  [0x200b, 'ZERO WIDTH SPACE'],
  [0x200c, 'ZERO WIDTH NON-JOINER'],
  [0x200d, 'ZERO WIDTH JOINER'],
  [0x200e, 'LEFT-TO-RIGHT MARK'],
  [0x200f, 'RIGHT-TO-LEFT MARK'],
  [0x2028, 'LINE SEPARATOR'],
  [0x2029, 'PARAGRAPH SEPARATOR'],
  [0x202a, 'LEFT-TO-RIGHT EMBEDDING'],
  [0x202b, 'RIGHT-TO-LEFT EMBEDDING'],
  [0x202c, 'POP DIRECTIONAL FORMATTING'],
  [0x202d, 'LEFT-TO-RIGHT OVERRIDE'],
  [0x202e, 'RIGHT-TO-LEFT OVERRIDE'],
  [0x2060, 'WORD JOINER'],
  [0x2066, 'LEFT-TO-RIGHT ISOLATE'],
  [0x2067, 'RIGHT-TO-LEFT ISOLATE'],
  [0x2068, 'FIRST STRONG ISOLATE'],
  [0x2069, 'POP DIRECTIONAL ISOLATE'],
  [0x3164, 'HANGUL FILLER'],
  [0xfeff, 'ZERO WIDTH NO-BREAK SPACE'],
]);

/**
 * The first character of `s` that escapeControls would escape, said for a person
 * (`U+200B ZERO WIDTH SPACE`, `U+0007 (a control character)`), or null when there is none.
 */
export function unsafeCharacter(s: string): string | null {
  const m = FIRST_UNSAFE.exec(s);
  if (m === null) return null;
  const n = m[0].codePointAt(0) as number;
  const code = `U+${n.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES.get(n);
  if (name !== undefined) return `${code} ${name}`;
  if (/\p{Cc}/u.test(m[0])) return `${code} (a control character)`;
  if (/\p{Cf}/u.test(m[0])) return `${code} (an invisible formatting character)`;
  return `${code} (an invisible character)`;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML text or attribute value: the five characters that could end either, escaped. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
