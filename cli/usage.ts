/**
 * The command line's usage, made from the command declarations (cli/commands/):
 * `--help`, a usage error's reminder, `fundreturns help COMMAND`, the parsers' flag
 * lists (flagSpec) and docs/cli.md's generated blocks (`npm run docs:cli`).
 */

import { COMMANDS, findCommand } from './commands/index.js';
import type { FlagKind } from './shared/args.js';
import { type Command, commandFlags, type Form } from './shared/command.js';
import { type Flag, flagKinds } from './shared/flags.js';

const WIDTH = 110;

function flagText(f: Flag): string {
  if (f.text !== undefined) return f.text;
  const shown = f.value === undefined ? `--${f.name}` : `--${f.name} ${f.value}`;
  return f.required ? shown : `[${shown}]`;
}

/** One form's synopsis lines, wrapped at WIDTH with continuation lines under its first flag. */
function formLines(command: string, form: Form, indent: string): string[] {
  const head = `${indent}${command}${form.args ? ` ${form.args}` : ''}`;
  const pad = ' '.repeat(indent.length + command.length + 1);
  const lines: string[] = [];
  let line = head;
  for (const part of form.flags.map(flagText).filter((t) => t !== '')) {
    if (line.length + 1 + part.length > WIDTH && line !== head) {
      lines.push(line);
      line = `${pad}${part}`;
    } else line += ` ${part}`;
  }
  lines.push(line);
  return lines;
}

const ENV_NOTE = 'Every flag can also be set as FUNDRETURNS_<FLAG> (e.g. FUNDRETURNS_SNAPSHOTS); flags win.';

function synopsis(indent: string, prefix = ''): string[] {
  return COMMANDS.flatMap((c) => c.forms.flatMap((f) => formLines(`${prefix}${c.name}`, f, indent)));
}

/** `fundreturns --help`. */
export function usageText(): string {
  return ['usage: fundreturns <command> [flags]', '', ...synopsis('  '), '', ENV_NOTE].join('\n');
}

function usageOf(c: Command): string {
  const lines = c.forms.flatMap((f) => formLines(`fundreturns ${c.name}`, f, '       '));
  return `usage: ${lines.join('\n').slice('usage: '.length)}`;
}

/** One command's usage lines (`usage: fundreturns query …`), or null for no such command. */
export function commandUsage(command: string): string | null {
  const c = findCommand(command);
  return c === undefined ? null : usageOf(c);
}

/** How a flag is named in its help: `--name VALUE`, as the synopsis shows its value. */
function flagName(f: Flag): string {
  return f.value === undefined ? `--${f.name}` : `--${f.name} ${f.value}`;
}

function helpOf(f: Flag): string {
  return f.required ? `${f.help} (required)` : f.help;
}

/** A command's flags as its help lists them: those every form shares (--json, --store) last. */
function helpFlags(c: Command): Flag[] {
  const shared = (f: Flag) => c.forms.length > 1 && c.forms.every((form) => form.flags.includes(f));
  const flags = commandFlags(c);
  return [...flags.filter((f) => !shared(f)), ...flags.filter(shared)];
}

/** `fundreturns help COMMAND`: its usage, what it does and what each flag does. */
export function commandHelp(command: string): string | null {
  const c = findCommand(command);
  if (c === undefined) return null;
  const flags = helpFlags(c);
  const width = Math.max(...flags.map((f) => flagName(f).length));
  return [
    usageOf(c),
    '',
    `${c.summary}.`,
    '',
    ...flags.map((f) => `  ${flagName(f).padEnd(width)}  ${helpOf(f)}`),
    '',
    ENV_NOTE,
  ].join('\n');
}

/** The flags a command's parser accepts (a switch is 'boolean'), from its declaration. */
export function flagSpec(command: string): Record<string, FlagKind> {
  const c = findCommand(command);
  if (c === undefined) throw new Error(`no command ${command} in cli/commands/`);
  return flagKinds(commandFlags(c));
}

/** Text for a Markdown table cell: `|` would end it. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** docs/cli.md's usage block: what each command does, then `fundreturns --help`. */
export function usageMarkdown(): string {
  return [
    '| command | what it does |',
    '| ------- | ------------ |',
    ...COMMANDS.map((c) => `| \`fundreturns ${c.name}\` | ${cell(c.summary)} |`),
    '',
    '```',
    usageText(),
    '```',
  ].join('\n');
}

/** docs/cli.md's flag reference: each command's flags, as `fundreturns help COMMAND` gives them. */
function flagsMarkdown(): string {
  return COMMANDS.map((c) =>
    [
      `### ${c.name}`,
      '',
      '| flag | what it does |',
      '| ---- | ------------ |',
      ...helpFlags(c).map((f) => `| \`${cell(flagName(f))}\` | ${cell(helpOf(f))} |`),
    ].join('\n'),
  ).join('\n\n');
}

const BLOCKS: Record<string, () => string> = { usage: usageMarkdown, flags: flagsMarkdown };

/**
 * docs/cli.md with its generated blocks made again from the declarations. Each block
 * sits between `<!-- generated: NAME … -->` and `<!-- end generated: NAME -->`.
 */
export function withGeneratedBlocks(doc: string): string {
  let out = doc;
  for (const [name, render] of Object.entries(BLOCKS)) {
    const block = new RegExp(
      `(<!-- generated: ${name}\\b[^>]*-->\\n)[\\s\\S]*?(<!-- end generated: ${name} -->)`,
    );
    if (!block.test(out)) throw new Error(`docs/cli.md has no generated block "${name}"`);
    out = out.replace(block, (_m, open: string, close: string) => `${open}${render()}\n${close}`);
  }
  return out;
}
