/**
 * Commands made of subcommands (`accounts create NAME`, `keys rotate KEY_ID`, `users
 * verify EMAIL`, `store backup DIR`): each subcommand declares its arguments, flags and
 * handler once; from the table come the parser, the usage errors and the synopsis forms.
 * The store commands run with the access store open (runStoreSubcommand).
 */

import type { AccessChange, AccessState, AccessStore, PlanLimits, PlanName } from '../../accounts/model.js';
import { openStore } from '../../accounts/open-store.js';
import { auditAdmin, cliActor } from '../../accounts/plan-requests.js';
import { loadPlans } from '../../accounts/plans.js';
import { now } from '../../core/clock.js';
import { boolFlag, HelpRequested, type ParsedArgs, parseArgs, stringFlag, UsageError } from './args.js';
import type { Form } from './command.js';
import { type Flag, flagKinds, JSON_OUTPUT } from './flags.js';
import type { CliIo } from './io.js';
import { STORE } from './store-flag.js';

export interface SubShape {
  /** Positional argument names; a trailing `?` marks an optional one. */
  readonly params: readonly string[];
  /** How the synopsis shows the arguments, when not the params. */
  readonly shown?: string;
  readonly flags: readonly Flag[];
  /** Usage checks that must fail before the store is opened. */
  readonly check?: (args: readonly string[], flags: ParsedArgs) => void;
}

export interface Ctx {
  readonly store: AccessStore;
  readonly io: CliIo;
  readonly json: boolean;
  readonly now: number;
  readonly args: readonly string[];
  readonly flags: ParsedArgs;
  /**
   * The limits the server enforces: `--plans FILE` (as `serve --plans`), else those the
   * last server started on the store recorded, else the defaults.
   */
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
}

export interface Sub extends SubShape {
  readonly run: (ctx: Ctx) => Promise<number>;
}

/**
 * The synopsis of a subcommand table: one form per group of subcommands, showing the
 * flags of each subcommand in the group, then --json, then the command's `common` flags.
 */
export function subcommandForms(
  command: string,
  table: Record<string, SubShape>,
  groups: readonly (readonly string[])[],
  common: readonly Flag[],
): Form[] {
  const grouped = groups.flat();
  const missing = Object.keys(table).filter((name) => !grouped.includes(name));
  if (missing.length > 0 || grouped.some((name) => !Object.hasOwn(table, name)))
    throw new Error(
      `${command}: the usage groups ${grouped} do not list the subcommands ${Object.keys(table)}`,
    );
  return groups.map((names) => {
    const subs = names.map((name) => table[name]);
    const own = new Map<string, Flag>();
    for (const f of subs.flatMap((s) => s.flags))
      if (f !== JSON_OUTPUT && !own.has(f.name)) own.set(f.name, f);
    const json = subs.some((s) => s.flags.includes(JSON_OUTPUT));
    return {
      args: names.map((name) => argsShown(name, table[name])).join(' | '),
      flags: [...own.values(), ...(json ? [JSON_OUTPUT] : []), ...common],
    };
  });
}

function argsShown(name: string, sub: SubShape): string {
  const params = sub.shown ?? sub.params.map((p) => (p.endsWith('?') ? `[${p.slice(0, -1)}]` : p)).join(' ');
  return params === '' ? name : `${name} ${params}`;
}

/** Parse `COMMAND SUB [args] [flags]` against `table` (and the `common` flags every SUB takes). */
export function parseSubcommand<S extends SubShape>(
  command: string,
  table: Record<string, S>,
  common: readonly Flag[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { sub: S; flags: ParsedArgs } {
  const [name, ...rest] = argv;
  // `accounts --help` as `accounts create --help`: the usage, exit 0.
  if (name === '--help' || name === '-h') throw new HelpRequested();
  const sub = name === undefined ? undefined : Object.hasOwn(table, name) ? table[name] : undefined;
  if (sub === undefined) {
    const names = Object.keys(table).join(', ');
    throw new UsageError(
      name === undefined
        ? `${command}: a subcommand is required (${names})`
        : `${command}: unknown subcommand ${JSON.stringify(name)} (expected ${names})`,
    );
  }
  const flags = parseArgs(rest, flagKinds([...common, ...sub.flags]), env);
  const args = flags.positionals;
  const required = sub.params.filter((p) => !p.endsWith('?'));
  if (args.length < required.length)
    throw new UsageError(`${command} ${name}: ${required[args.length]} is required`);
  if (args.length > sub.params.length)
    throw new UsageError(
      `${command} ${name}: unexpected argument ${JSON.stringify(args[sub.params.length])}`,
    );
  sub.check?.(args, flags);
  return { sub, flags };
}

/** Parse `COMMAND SUB …` against `table`, open the store, run SUB, close the store. */
export async function runStoreSubcommand(
  command: string,
  table: Record<string, Sub>,
  argv: string[],
  io: CliIo,
): Promise<number> {
  const { sub, flags } = parseSubcommand(command, table, [STORE], argv, io.env);
  // Read before the store is opened: a bad file fails at once, as it does for `serve`.
  const plansFile = stringFlag(flags, 'plans') ?? null;
  const given = plansFile === null ? null : loadPlans(plansFile);
  const store = await openStore(STORE.read(flags));
  try {
    // Without --plans, the limits the last server on this store enforces, else the defaults.
    const wantsPlans = sub.flags.some((f) => f.name === 'plans');
    const plans = given ?? (wantsPlans ? await recordedPlans(store, io) : null) ?? loadPlans(null);
    const json = boolFlag(flags, 'json');
    return await sub.run({ store, io, json, now: now(), args: flags.positionals, flags, plans });
  } finally {
    await store.close();
  }
}

/** The plans a server recorded in the store; on a bad record, a warning and the defaults. */
async function recordedPlans(store: AccessStore, io: CliIo): Promise<Record<PlanName, PlanLimits> | null> {
  try {
    return await store.readPlans();
  } catch (e) {
    io.err(
      `warning: the limits recorded in the store are unreadable (${(e as Error).message}); ` +
        'showing the default limits: pass --plans FILE for the ones the server enforces',
    );
    return null;
  }
}

/**
 * Record an admin change and its audit entry (who: `cli:<os user>`; what: `action`,
 * by default the change's op). The change is durable first: an entry is never written
 * for a change that was refused.
 */
export async function changeAudited(
  ctx: Ctx,
  change: AccessChange,
  target: string,
  detail: string,
  action: string = change.op,
): Promise<AccessState> {
  const after = await ctx.store.change(change);
  await auditAdmin(ctx.store, cliActor(ctx.io.env), action, target, detail, ctx.now);
  return after;
}
