import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_KEYS } from '../accounts/key-actions.js';
import { formatDay } from '../core/dates.js';
import { COMMANDS } from './commands/index.js';
import { main } from './main.js';
import { commandFlags } from './shared/command.js';
import { JSON_OUTPUT, stringOption, switchOption } from './shared/flags.js';
import type { CliIo } from './shared/io.js';
import { subcommandForms } from './shared/subcommand.js';
import { commandHelp, commandUsage, flagSpec, usageMarkdown, usageText } from './usage.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (s) => out.push(s), err: (s) => err.push(s), env: {}, isTty: false };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const NOTHING = { positionals: [], flags: new Map<string, string | true>(), fromEnv: new Set<string>() };

describe('the command declarations (cli/commands/), the one source of the usage, the parsers and docs/cli.md', () => {
  it('show as a flag’s value the default its parser uses, or a placeholder, or its choices default first', () => {
    let compared = 0;
    for (const c of COMMANDS)
      for (const f of commandFlags(c)) {
        const read = f.read(NOTHING);
        const what = `${c.name} --${f.name} ${f.value}`;
        if (f.value === undefined) expect(read, what).toBe(false);
        // DIR, N, YYYY-MM-DD, URL, ORIGIN,... | *, <cores>, last-close: a value to give, or one the machine or the day decides.
        else if (/^([A-Z]|<cores>$|last-close$|smtp:)/.test(f.value)) continue;
        else if (f.required) expect(read, what).toBeUndefined();
        else {
          // Choices (`inbox|eodhd|synthetic`, `./var/store | redis://HOST:PORT`): the first is the default.
          const first = f.value
            .split('|')[0]
            .trim()
            .replace(/^'(.*)'$/, '$1');
          const shown = typeof read === 'number' && f.name === 'from' ? formatDay(read) : String(read);
          expect(f.name === 'store' ? resolve(first) : first, what).toBe(shown);
          compared++;
        }
      }
    expect(compared).toBeGreaterThan(50);
    const serve = COMMANDS.find((c) => c.name === 'serve');
    const maxKeys = serve === undefined ? undefined : commandFlags(serve).find((f) => f.name === 'max-keys');
    expect(maxKeys?.value).toBe(String(DEFAULT_MAX_KEYS));
    expect(maxKeys?.read(NOTHING)).toBe(DEFAULT_MAX_KEYS);
  });

  it('give every flag one line of help', () => {
    for (const c of COMMANDS)
      for (const f of commandFlags(c)) {
        expect(f.help.length, `${c.name} --${f.name}`).toBeGreaterThan(5);
        expect(f.help, `${c.name} --${f.name}`).not.toMatch(/\n/);
      }
  });

  it('gives each command’s parser the flags its usage shows, a switch as a switch', () => {
    expect(flagSpec('inspect')).toEqual({ snapshots: 'string', json: 'boolean' });
    expect(flagSpec('build')).toMatchObject({ source: 'string', daily: 'string', 'allow-shrink': 'boolean' });
    expect(() => flagSpec('nope')).toThrow(/no command nope/);
  });

  it('a subcommand’s parser takes its own flags and the common ones, not another subcommand’s', async () => {
    const other = await run(['keys', 'list', '--grace', '5']);
    expect(other.code).toBe(2);
    expect(other.err.split('\n')[0]).toBe('fundreturns: unknown flag --grace');
    const users = await run(['users', 'list', '--revoke']);
    expect(users.err.split('\n')[0]).toBe('fundreturns: unknown flag --revoke');
    // Usage checks run before the store is opened: no store is needed to see them.
    const bad = await run(['keys', 'rotate', 'key_1', '--grace', '-1', '--store', '/nonexistent/store']);
    expect(bad.err.split('\n')[0]).toBe('fundreturns: --grace must be a whole number, not "-1"');
  });

  it('forms a subcommand table’s synopsis from its subcommands, and refuses one a form leaves out', () => {
    const table = {
      make: { params: ['NAME'], flags: [stringOption('size', { value: 'N', help: 'how big' }), JSON_OUTPUT] },
      list: { params: ['OWNER?'], flags: [JSON_OUTPUT] },
      drop: { params: ['NAME'], shown: 'NAME|ID', flags: [switchOption('force', { help: 'even so' })] },
    };
    const store = stringOption('store', { value: 'DIR', help: 'where' });
    const forms = subcommandForms('things', table, [['make', 'list'], ['drop']], [store]);
    expect(forms.map((f) => [f.args, f.flags.map((x) => x.name)])).toEqual([
      ['make NAME | list [OWNER]', ['size', 'json', 'store']],
      ['drop NAME|ID', ['force', 'store']],
    ]);
    expect(() => subcommandForms('things', table, [['make', 'list']], [store])).toThrow(/drop/);
  });

  it('--help, one command’s usage and the Markdown for the guide show each form alike, however wrapped', () => {
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    const help = flat(usageText());
    const markdown = usageMarkdown();
    expect(markdown).toContain(`\`\`\`\n${usageText()}\n\`\`\``);
    for (const c of COMMANDS) {
      expect(markdown).toContain(`| \`fundreturns ${c.name}\` | ${c.summary} |`);
      const own = commandUsage(c.name) ?? '';
      expect(own.startsWith(`usage: fundreturns ${c.name}`)).toBe(true);
      for (const form of c.forms) {
        const flags = form.flags
          .map(
            (f) =>
              f.text ??
              (f.required ? '' : '[') +
                `--${f.name}${f.value ? ` ${f.value}` : ''}` +
                (f.required ? '' : ']'),
          )
          .filter((t) => t !== '');
        const shown = [c.name, ...(form.args ? [form.args] : []), ...flags].join(' ');
        expect(help).toContain(` ${shown}`);
        expect(flat(own)).toContain(shown);
      }
    }
    expect(
      usageText()
        .split('\n')
        .every((line) => line.length <= 110),
    ).toBe(true);
    expect(commandUsage('nope')).toBeNull();
  });

  it('`fundreturns help COMMAND` prints its usage, what it does and each flag’s help (exit 0)', async () => {
    const r = await run(['help', 'query']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(commandHelp('query'));
    expect(r.out).toMatch(/^usage: fundreturns query fund\|trailing\|calendar CODE/);
    for (const f of commandFlags(COMMANDS.find((c) => c.name === 'query') ?? COMMANDS[0]))
      expect(r.out).toContain(f.help);
    const nope = await run(['help', 'nope']);
    expect(nope.code).toBe(2);
    expect(nope.err.split('\n')[0]).toBe('fundreturns: help: unknown command "nope"');
    expect((await run(['help'])).out).toBe(usageText());
  });
});
