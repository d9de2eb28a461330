import { describe, expect, it } from 'vitest';
import { subcommandFlags } from './accounts.js';
import { storeSubcommandFlags } from './store.js';
import { COMMANDS, commandUsage, flagSpec, usageMarkdown, usageText } from './usage.js';
import { usersSubcommandFlags } from './users.js';

describe('the usage table (cli/usage.ts), the one source of the usage text', () => {
  it('shows every flag accounts, keys, users and store accept, and only flags one of the form’s subcommands accepts', () => {
    for (const command of ['accounts', 'keys', 'users', 'store'] as const) {
      for (const form of COMMANDS.find((c) => c.command === command)?.forms ?? []) {
        const subs = (form.args ?? '').split(' | ').map((part) => part.trim().split(' ')[0]);
        const shown = new Set(form.flags.map((f) => f.name));
        const accepted = subs.map((sub) =>
          command === 'users'
            ? usersSubcommandFlags(sub)
            : command === 'store'
              ? storeSubcommandFlags(sub)
              : subcommandFlags(command, sub),
        );
        expect(accepted, `${command} ${subs}`).not.toContain(null);
        for (const flags of accepted)
          for (const name of Object.keys(flags ?? {}))
            expect(shown, `${command} ${subs}: --${name}`).toContain(name);
        for (const name of shown)
          expect(
            accepted.some((flags) => flags !== null && name in flags),
            `${command}: --${name}`,
          ).toBe(true);
      }
    }
  });

  it('gives each command’s parser the flags its usage shows, a switch as a switch', () => {
    expect(flagSpec('inspect')).toEqual({ snapshots: 'string', json: 'boolean' });
    expect(flagSpec('build')).toMatchObject({ source: 'string', daily: 'string', 'allow-shrink': 'boolean' });
    expect(() => flagSpec('nope')).toThrow(/no command nope/);
  });

  it('--help, one command’s usage and the Markdown for the guide show each form alike, however wrapped', () => {
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    const help = flat(usageText());
    const markdown = usageMarkdown();
    for (const c of COMMANDS) {
      expect(markdown).toContain(`| \`fundreturns ${c.command}\` | ${c.summary} |`);
      const own = commandUsage(c.command) ?? '';
      expect(own.startsWith(`usage: fundreturns ${c.command}`)).toBe(true);
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
        const shown = [c.command, ...(form.args ? [form.args] : []), ...flags].join(' ');
        expect(help).toContain(` ${shown}`);
        expect(flat(own)).toContain(shown);
        expect(flat(markdown)).toContain(`fundreturns ${shown}`);
      }
    }
    expect(
      usageText()
        .split('\n')
        .every((line) => line.length <= 110),
    ).toBe(true);
    expect(commandUsage('nope')).toBeNull();
  });
});
