/** How the store commands (accounts, keys, users) print: tables, JSON, timestamps and typed text. */
import { escapeControls } from '../../core/escape.js';
import type { CliIo } from './io.js';

/** Text a person typed (an email, a key label), for a table: "-" for none, and never obeyed by the terminal. */
export function shown(text: string | null): string {
  return text === null ? '-' : escapeControls(text);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

export function printTable(io: CliIo, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  io.out([line(header), ...rows.map(line)].join('\n'));
}
