/**
 * HTML for the dashboard's pages: a tagged template that escapes every interpolated
 * value unless it is already HTML made here, so a person's text (an email, a key
 * label, `<script>`) can only ever appear as text; and text that would hide or
 * reorder characters (a zero-width space, a right-to-left override) shows them as the
 * CLI does, by core/escape.ts's one rule: `admin\u200b@example.com`.
 */
import { escapeForTerminal, escapeHtml } from '../../core/escape.js';

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Part[]).map(render).join('');
  return escapeHtml(escapeForTerminal(String(v)));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}
