/**
 * `fundreturns accounts …` and `fundreturns keys …` (DESIGN "Command line"): the
 * operator's side of C25/C26. Every command works against the store a running
 * server uses (`--store`); the server picks the change up within a second.
 *
 * A secret key is printed exactly once, by `keys create` and `keys rotate`, and is
 * never logged or stored (only its SHA-256 hash is).
 */

import { now } from '../core/clock.js';
import { escapeControls } from '../core/escape.js';
import { addDays, dayOf, readKeyDaily } from '../server/access/daily.js';
import {
  issueKey as issueAccountKey,
  keyState,
  revokeKey,
  rotateKey,
  usable,
} from '../server/access/key-actions.js';
import { hashKey, KEY_PREFIX, looksLikeKey, newAccountId } from '../server/access/keys.js';
import {
  type AccessChange,
  type AccessState,
  type AccessStore,
  type Account,
  accountNameProblem,
  DAILY_KEEP_DAYS,
  type KeyRecord,
  monthOf,
  newAccountProblem,
  PLAN_NAMES,
  type PlanLimits,
  type PlanName,
  type RequestDecision,
  STATUSES,
  type SubscriptionStatus,
} from '../server/access/model.js';
import { openStore } from '../server/access/open-store.js';
import { auditAdmin, cliActor, decidePlanRequest } from '../server/access/plan-requests.js';
import { loadPlans } from '../server/access/plans.js';
import {
  boolFlag,
  type FlagKind,
  flagLabel,
  HelpRequested,
  intFlag,
  parseArgs,
  stringFlag,
  UsageError,
} from './args.js';
import type { CliIo } from './io.js';
import { storeFlag } from './store-flag.js';

/** How many months before the current one `accounts usage` looks back. */
const HISTORY_MONTHS = 12;
const MAX_GRACE_SECONDS = 366 * 86400;
/** How many days, today included, `accounts usage --daily` shows by default (the dashboard's chart). */
const DAILY_DAYS = 90;

export interface Ctx {
  readonly store: AccessStore;
  readonly io: CliIo;
  readonly json: boolean;
  readonly now: number;
  readonly args: readonly string[];
  readonly flags: ReturnType<typeof parseArgs>;
  /**
   * The limits the server enforces: `--plans FILE` (as `serve --plans`), else those the
   * last server started on the store recorded, else the defaults.
   */
  readonly plans: Readonly<Record<PlanName, PlanLimits>>;
}

export interface Sub {
  /** Positional argument names; a trailing `?` marks an optional one. */
  readonly params: readonly string[];
  readonly flags: Record<string, FlagKind>;
  /** Usage checks that must fail before the store is opened. */
  readonly check?: (args: readonly string[], flags: ReturnType<typeof parseArgs>) => void;
  readonly run: (ctx: Ctx) => Promise<number>;
}

export const JSON_FLAG: Record<string, FlagKind> = { json: 'boolean' };
/** For the commands that print limits: the same file `serve --plans` reads (or FUNDRETURNS_PLANS). */
const LIMITS_FLAGS: Record<string, FlagKind> = { json: 'boolean', plans: 'string' };

const ACCOUNTS: Record<string, Sub> = {
  create: {
    params: ['NAME'],
    flags: { plan: 'string', json: 'boolean' },
    check: (args, flags) => {
      checkName(args[0]);
      planFlag(flags);
    },
    run: accountsCreate,
  },
  list: { params: [], flags: LIMITS_FLAGS, run: accountsList },
  show: { params: ['NAME'], flags: LIMITS_FLAGS, run: accountsShow },
  usage: {
    params: ['NAME'],
    flags: { ...LIMITS_FLAGS, daily: 'boolean', days: 'string' },
    check: (_args, flags) => {
      if (flags.flags.has('days') && !boolFlag(flags, 'daily'))
        throw new UsageError(`${flagLabel(flags, 'days')} goes with --daily`);
      daysFlag(flags);
    },
    run: accountsUsage,
  },
  'set-plan': {
    params: ['NAME', 'PLAN'],
    flags: JSON_FLAG,
    check: (args) => planArg(args[1]),
    run: accountsSetPlan,
  },
  'set-status': {
    params: ['NAME', 'STATUS'],
    flags: JSON_FLAG,
    check: (args) => statusArg(args[1]),
    run: accountsSetStatus,
  },
  requests: { params: [], flags: { json: 'boolean', all: 'boolean' }, run: accountsRequests },
  approve: { params: ['REQUEST_ID'], flags: JSON_FLAG, run: (ctx) => accountsDecide(ctx, 'approved') },
  decline: { params: ['REQUEST_ID'], flags: JSON_FLAG, run: (ctx) => accountsDecide(ctx, 'declined') },
};

const KEYS: Record<string, Sub> = {
  create: { params: ['ACCOUNT'], flags: JSON_FLAG, run: keysCreate },
  list: { params: ['ACCOUNT?'], flags: JSON_FLAG, run: keysList },
  revoke: { params: ['KEY_ID'], flags: JSON_FLAG, run: keysRevoke },
  rotate: {
    params: ['KEY_ID'],
    flags: { grace: 'string', json: 'boolean' },
    check: (_args, flags) => graceFlag(flags),
    run: keysRotate,
  },
};

/** The flags `fundreturns accounts|keys SUB` accepts, or null for no such subcommand (usage.test.ts). */
export function subcommandFlags(command: 'accounts' | 'keys', sub: string): Record<string, FlagKind> | null {
  const table = command === 'accounts' ? ACCOUNTS : KEYS;
  return Object.hasOwn(table, sub) ? { store: 'string', ...table[sub].flags } : null;
}

export async function run(command: 'accounts' | 'keys', argv: string[], io: CliIo): Promise<number> {
  return await runSubcommand(command, command === 'accounts' ? ACCOUNTS : KEYS, argv, io);
}

/** Parse `COMMAND SUB [args] [flags]` against `table`, open the store, run SUB, close the store. */
export async function runSubcommand(
  command: string,
  table: Record<string, Sub>,
  argv: string[],
  io: CliIo,
): Promise<number> {
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
  const flags = parseArgs(rest, { store: 'string', ...sub.flags }, io.env);
  const args = flags.positionals;
  const required = sub.params.filter((p) => !p.endsWith('?'));
  if (args.length < required.length)
    throw new UsageError(`${command} ${name}: ${required[args.length]} is required`);
  if (args.length > sub.params.length)
    throw new UsageError(
      `${command} ${name}: unexpected argument ${JSON.stringify(args[sub.params.length])}`,
    );
  sub.check?.(args, flags);
  // Read before the store is opened: a bad file fails at once, as it does for `serve`.
  const plansFile = stringFlag(flags, 'plans') ?? null;
  const given = plansFile === null ? null : loadPlans(plansFile);
  const store = await openStore(storeFlag(flags));
  try {
    // Without --plans, the limits the last server on this store enforces, else the defaults.
    const plans = given ?? ('plans' in sub.flags ? await recordedPlans(store, io) : null) ?? loadPlans(null);
    return await sub.run({ store, io, json: boolFlag(flags, 'json'), now: now(), args, flags, plans });
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

// ---- arguments ----------------------------------------------------------

function checkName(name: string): void {
  const bad = accountNameProblem(name);
  if (bad !== null) throw new UsageError(`NAME ${bad}`);
}

function planFlag(flags: ReturnType<typeof parseArgs>): PlanName {
  const plan = stringFlag(flags, 'plan');
  if (plan === undefined) throw new UsageError(`--plan is required (${PLAN_NAMES.join(', ')})`);
  if (!isPlan(plan))
    throw new UsageError(
      `${flagLabel(flags, 'plan')} must be one of ${PLAN_NAMES.join(', ')}, not ${JSON.stringify(plan)}`,
    );
  return plan;
}

function planArg(plan: string): PlanName {
  if (!isPlan(plan))
    throw new UsageError(`PLAN must be one of ${PLAN_NAMES.join(', ')}, not ${JSON.stringify(plan)}`);
  return plan;
}

function statusArg(status: string): SubscriptionStatus {
  if (!(STATUSES as readonly string[]).includes(status))
    throw new UsageError(`STATUS must be one of ${STATUSES.join(', ')}, not ${JSON.stringify(status)}`);
  return status as SubscriptionStatus;
}

function daysFlag(flags: ReturnType<typeof parseArgs>): number {
  return intFlag(flags, 'days', DAILY_DAYS, 1, DAILY_KEEP_DAYS);
}

function graceFlag(flags: ReturnType<typeof parseArgs>): number {
  return intFlag(flags, 'grace', 86400, 0, MAX_GRACE_SECONDS);
}

function isPlan(v: string): v is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(v);
}

// ---- lookups ------------------------------------------------------------

/** An account by name (or by its `acct_…` id, which scripts may hold instead). */
export function findAccount(state: AccessState, ref: string): Account {
  const a = state.accounts.find((x) => x.name === ref) ?? state.accounts.find((x) => x.id === ref);
  if (a === undefined) throw new Error(`no account named ${JSON.stringify(ref)}`);
  return a;
}

/** A key by its id, or by the secret itself (an operator holding a leaked key has no id). */
function findKey(state: AccessState, ref: string): KeyRecord {
  if (looksLikeKey(ref) || ref.startsWith(KEY_PREFIX)) {
    const hash = hashKey(ref);
    const k = state.keys.find((x) => x.hash === hash);
    // The secret is never echoed back.
    if (k === undefined) throw new Error('no key matches the key given');
    return k;
  }
  const k = state.keys.find((x) => x.id === ref);
  if (k === undefined) throw new Error(`no key with id ${JSON.stringify(ref)}`);
  return k;
}

function accountName(state: AccessState, id: string): string {
  return state.accounts.find((a) => a.id === id)?.name ?? id;
}

// ---- views (never a hash, never a key) -----------------------------------

interface KeyView {
  readonly id: string;
  readonly account: string;
  readonly prefix: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly expires_at: string | null;
  /** Only on keys that have one (made in the dashboard). */
  readonly label?: string;
}

function keyView(state: AccessState, k: KeyRecord): KeyView {
  return {
    id: k.id,
    account: accountName(state, k.account_id),
    prefix: k.prefix,
    created_at: k.created_at,
    revoked_at: k.revoked_at,
    expires_at: k.expires_at,
    ...(k.label === undefined ? {} : { label: k.label }),
  };
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

/** The email of the person who owns the account (a dashboard sign-up), or null (made with the CLI). */
export function ownerEmail(state: AccessState, accountId: string): string | null {
  return state.people.find((p) => p.account_id === accountId)?.email ?? null;
}

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

async function monthUsage(store: AccessStore, accountId: string, month: string): Promise<number> {
  return (await store.readUsage(month)).get(accountId) ?? 0;
}

function usageView(ctx: Ctx, a: Account, count: number, month: string) {
  const limit = ctx.plans[a.plan].monthly;
  return { month, count, limit, remaining: Math.max(0, limit - count) };
}

function previousMonths(now: number, n: number): string[] {
  const d = new Date(now);
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - i, 1)));
  return out;
}

// ---- accounts -----------------------------------------------------------

async function accountsCreate(ctx: Ctx): Promise<number> {
  const account: Account = {
    id: newAccountId(),
    name: ctx.args[0],
    plan: planFlag(ctx.flags),
    status: 'active',
    created_at: iso(ctx.now),
  };
  // The stores check this again when they record the change; this gives the message
  // (a name equal to another account's id, say) whichever store it is.
  const why = newAccountProblem(await ctx.store.read(), account);
  if (why !== null) throw new Error(why);
  await ctx.store.change({ op: 'account.create', account });
  if (ctx.json) printJson(ctx.io, account);
  else
    ctx.io.out(
      `created account ${account.name} (${account.id}) on plan ${account.plan}, status ${account.status}`,
    );
  return 0;
}

async function accountsList(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const rows = state.accounts.map((a) => ({
    ...a,
    owner: ownerEmail(state, a.id),
    limits: ctx.plans[a.plan],
    keys: state.keys.filter((k) => k.account_id === a.id && usable(k, ctx.now)).length,
  }));
  if (ctx.json) printJson(ctx.io, rows);
  else if (rows.length === 0)
    ctx.io.err('no accounts yet: create one with `fundreturns accounts create NAME --plan free`');
  else
    printTable(
      ctx.io,
      ['NAME', 'ID', 'OWNER', 'PLAN', 'LIMITS', 'STATUS', 'KEYS', 'CREATED'],
      rows.map((r) => [
        r.name,
        r.id,
        shown(r.owner),
        r.plan,
        limitsText(r.limits),
        r.status,
        String(r.keys),
        r.created_at,
      ]),
    );
  return 0;
}

async function accountsShow(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  const month = monthOf(ctx.now);
  const usage = usageView(ctx, a, await monthUsage(ctx.store, a.id, month), month);
  const limits = ctx.plans[a.plan];
  const keys = state.keys.filter((k) => k.account_id === a.id);
  const owner = ownerEmail(state, a.id);
  if (ctx.json) {
    printJson(ctx.io, { ...a, owner, limits, usage, keys: keys.map((k) => keyView(state, k)) });
    return 0;
  }
  ctx.io.out(
    [
      `account   ${a.name}`,
      `id        ${a.id}`,
      `owner     ${shown(owner)}`,
      `plan      ${a.plan} (${limitsText(limits)})`,
      `status    ${a.status}`,
      `created   ${a.created_at}`,
      `usage     ${usage.count} of ${usage.limit} in ${month} (${usage.remaining} left)`,
      `keys      ${keys.length === 0 ? 'none' : ''}`.trimEnd(),
      ...keys.map(
        (k) =>
          `  ${k.id}  ${k.prefix}…  ${keyState(k, ctx.now)}  ${keyDates(k)}${k.label === undefined ? '' : `  ${shown(k.label)}`}`,
      ),
    ].join('\n'),
  );
  return 0;
}

function limitsText(l: PlanLimits): string {
  return `${l.burst}/min, ${l.monthly}/month`;
}

function keyDates(k: KeyRecord): string {
  const parts = [`created ${k.created_at}`];
  if (k.expires_at !== null) parts.push(`expires ${k.expires_at}`);
  if (k.revoked_at !== null) parts.push(`revoked ${k.revoked_at}`);
  return parts.join(', ');
}

async function accountsUsage(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  if (boolFlag(ctx.flags, 'daily')) return accountsUsageDaily(ctx, state, a);
  const month = monthOf(ctx.now);
  const current = usageView(ctx, a, await monthUsage(ctx.store, a.id, month), month);
  const history: { month: string; count: number }[] = [];
  for (const m of previousMonths(ctx.now, HISTORY_MONTHS)) {
    const count = (await ctx.store.readUsage(m)).get(a.id);
    if (count !== undefined) history.push({ month: m, count });
  }
  if (ctx.json) {
    printJson(ctx.io, { account: a.name, account_id: a.id, plan: a.plan, ...current, history });
    return 0;
  }
  ctx.io.out(
    [
      `${a.name} (${a.plan}): ${current.count} of ${current.limit} requests in ${month}, ${current.remaining} left`,
      ...history.map((h) => `  ${h.month}  ${h.count}`),
    ].join('\n'),
  );
  return 0;
}

/** Requests per key per day (issue 22): admitted and refused with 429, every key the account ever had. */
async function accountsUsageDaily(ctx: Ctx, state: AccessState, a: Account): Promise<number> {
  const to = dayOf(ctx.now);
  const from = addDays(to, -(daysFlag(ctx.flags) - 1));
  const keys = state.keys.filter((k) => k.account_id === a.id);
  const rows = await readKeyDaily(
    ctx.store,
    keys.map((k) => k.id),
    from,
    to,
  );
  if (ctx.json) {
    printJson(ctx.io, rows);
    return 0;
  }
  const byId = new Map(keys.map((k) => [k.id, k]));
  ctx.io.out(`${a.name}: requests per key per day (UTC), ${from} to ${to}`);
  if (rows.length === 0) {
    ctx.io.out('  no requests');
    return 0;
  }
  printTable(
    ctx.io,
    ['DAY', 'KEY', 'LABEL', 'PREFIX', 'OK', 'REFUSED'],
    rows.map((r) => {
      const k = byId.get(r.key_id);
      // A label is its owner's text: shown, never obeyed by the terminal.
      return [
        r.day,
        r.key_id,
        escapeControls(k?.label ?? ''),
        k?.prefix ?? '',
        String(r.ok),
        String(r.refused),
      ];
    }),
  );
  return 0;
}

async function accountsSetPlan(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  const plan = planArg(ctx.args[1]);
  let after = state;
  if (a.plan !== plan)
    after = await changeAudited(
      ctx,
      { op: 'account.plan', account_id: a.id, plan },
      a.id,
      `${a.name}: ${a.plan} -> ${plan}`,
    );
  const updated = findAccount(after, a.id);
  if (ctx.json) printJson(ctx.io, updated);
  else if (a.plan === plan) ctx.io.out(`account ${a.name} is already on plan ${plan}`);
  else ctx.io.out(`account ${a.name}: plan ${a.plan} -> ${plan}`);
  return 0;
}

async function accountsSetStatus(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  const status = statusArg(ctx.args[1]);
  let after = state;
  if (a.status !== status)
    after = await changeAudited(
      ctx,
      { op: 'account.status', account_id: a.id, status },
      a.id,
      `${a.name}: ${a.status} -> ${status}`,
    );
  const updated = findAccount(after, a.id);
  if (ctx.json) printJson(ctx.io, updated);
  else if (a.status === status) ctx.io.out(`account ${a.name} already has status ${status}`);
  else ctx.io.out(`account ${a.name}: status ${a.status} -> ${status}`);
  return 0;
}

// ---- plan requests (issue 22): decided through the one seam, plan-requests.ts ----

async function accountsRequests(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const all = boolFlag(ctx.flags, 'all');
  const requests = state.requests.filter((r) => all || r.decision === null);
  const person = (id: string | null) =>
    id === null ? null : (state.people.find((p) => p.id === id)?.email ?? id);
  const rows = requests.map((r) => {
    const a = state.accounts.find((x) => x.id === r.account_id);
    return {
      ...r,
      account: a?.name ?? r.account_id,
      current_plan: a?.plan ?? null,
      asked_by: person(r.person_id),
    };
  });
  if (ctx.json) printJson(ctx.io, rows);
  else if (rows.length === 0) ctx.io.err(all ? 'no plan requests' : 'no pending plan requests');
  else
    printTable(
      ctx.io,
      ['ID', 'ACCOUNT', 'PLAN', 'REQUESTED', 'ASKED BY', 'CREATED', ...(all ? ['DECISION', 'BY', 'AT'] : [])],
      rows.map((r) => [
        r.id,
        r.account,
        r.current_plan ?? '-',
        r.plan,
        shown(r.asked_by),
        r.created_at,
        ...(all ? [r.decision ?? 'pending', shown(r.decided_by), r.decided_at ?? '-'] : []),
      ]),
    );
  return 0;
}

async function accountsDecide(ctx: Ctx, decision: RequestDecision): Promise<number> {
  const d = await decidePlanRequest(ctx.store, ctx.args[0], decision, cliActor(ctx.io.env), ctx.now);
  if (ctx.json) printJson(ctx.io, { ...d.request, account: d.account.name, plan_before: d.from });
  else if (decision === 'approved')
    ctx.io.out(
      `approved request ${d.request.id}: account ${d.account.name}: plan ${d.from} -> ${d.account.plan}`,
    );
  else
    ctx.io.out(
      `declined request ${d.request.id}: account ${d.account.name} stays on plan ${d.account.plan} (asked for ${d.request.plan})`,
    );
  return 0;
}

// ---- keys ---------------------------------------------------------------

function warnShownOnce(io: CliIo): void {
  io.err(
    'fundreturns: this key is shown only once: store it now (only its SHA-256 hash is kept, it cannot be recovered)',
  );
}

async function keysCreate(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  // Keys made here have no label (the dashboard's have one).
  const { record, secret } = await issueAccountKey(ctx.store, a, '', ctx.now);
  if (ctx.json) {
    printJson(ctx.io, { id: record.id, account: a.name, key: secret, created_at: record.created_at });
  } else {
    ctx.io.out(`created key ${record.id} for account ${a.name}: ${secret}`);
    warnShownOnce(ctx.io);
  }
  if (a.status !== 'active')
    ctx.io.err(
      `fundreturns: note: account ${a.name} has status ${a.status}; the key is refused (403) until it is active`,
    );
  return 0;
}

async function keysList(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const account = ctx.args[0] === undefined ? undefined : findAccount(state, ctx.args[0]);
  const keys = state.keys.filter((k) => account === undefined || k.account_id === account.id);
  if (ctx.json)
    printJson(
      ctx.io,
      keys.map((k) => keyView(state, k)),
    );
  else if (keys.length === 0) ctx.io.err('no keys');
  else {
    // A LABEL column only when a key has one: keys made with the CLI have none.
    const labels = keys.some((k) => k.label !== undefined);
    printTable(
      ctx.io,
      ['ID', 'ACCOUNT', 'PREFIX', ...(labels ? ['LABEL'] : []), 'STATE', 'CREATED', 'EXPIRES', 'REVOKED'],
      keys.map((k) => [
        k.id,
        accountName(state, k.account_id),
        `${k.prefix}…`,
        ...(labels ? [shown(k.label ?? null)] : []),
        keyState(k, ctx.now),
        k.created_at,
        k.expires_at ?? '-',
        k.revoked_at ?? '-',
      ]),
    );
  }
  return 0;
}

async function keysRevoke(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const k = findKey(state, ctx.args[0]);
  if (k.revoked_at !== null) throw new Error(`key ${k.id} was already revoked at ${k.revoked_at}`);
  // The dashboard's revocation, then the audit entry: never an entry for a refused change.
  await revokeKey(ctx.store, k, ctx.now);
  await auditAdmin(
    ctx.store,
    cliActor(ctx.io.env),
    'key.revoke',
    k.id,
    `account ${accountName(state, k.account_id)}`,
    ctx.now,
  );
  const after = await ctx.store.read();
  const updated = after.keys.find((x) => x.id === k.id) ?? k;
  if (ctx.json) printJson(ctx.io, keyView(after, updated));
  else ctx.io.out(`revoked key ${k.id} (${k.prefix}…) of account ${accountName(after, k.account_id)}`);
  return 0;
}

/**
 * The key a rotation issued for `old` (which has an end date), when it can be told.
 * Records do not link the two, but a rotation creates the replacement at an instant T,
 * after `old` and for the same account, and ends `old` at T + grace, a whole number of
 * seconds later; any other key of the account fitting that is a one-in-a-thousand chance,
 * and two candidates give no answer rather than a guess.
 */
function replacementOf(state: AccessState, old: KeyRecord): KeyRecord | undefined {
  if (old.expires_at === null) return undefined;
  const end = Date.parse(old.expires_at);
  const after = state.keys.slice(state.keys.indexOf(old) + 1);
  const found = after.filter((k) => {
    const t = Date.parse(k.created_at);
    return k.account_id === old.account_id && t <= end && (end - t) % 1000 === 0;
  });
  return found.length === 1 ? found[0] : undefined;
}

/** The refusal for rotating a key in its grace period: the replacement is the key to rotate. */
function alreadyRotated(state: AccessState, old: KeyRecord, account: Account, now: number): string {
  const first = replacementOf(state, old);
  const until = `${old.id} keeps working until ${old.expires_at}, or until \`fundreturns keys revoke ${old.id}\``;
  if (first === undefined) {
    return (
      `key ${old.id} was already rotated (${until}); rotate its replacement instead ` +
      `(\`fundreturns keys list ${account.name}\` shows it)`
    );
  }
  // The replacement may have been rotated in turn: the key in use is the last one.
  let current = first;
  for (let i = 0; i < state.keys.length && keyState(current, now) === 'expiring'; i++) {
    const next = replacementOf(state, current);
    if (next === undefined) break;
    current = next;
  }
  const rotated = `key ${old.id} was already rotated at ${first.created_at}`;
  if (!usable(current, now)) {
    return (
      `${rotated} and its replacement ${current.id} is ${keyState(current, now)} (${until}); ` +
      `create a new key with \`fundreturns keys create ${account.name}\``
    );
  }
  return `${rotated}; rotate its replacement ${current.id} instead (${until})`;
}

async function keysRotate(ctx: Ctx): Promise<number> {
  const grace = graceFlag(ctx.flags);
  const state = await ctx.store.read();
  const old = findKey(state, ctx.args[0]);
  const s = keyState(old, ctx.now);
  if (s === 'revoked' || s === 'expired')
    throw new Error(`key ${old.id} is ${s}: create a new key with \`fundreturns keys create ACCOUNT\``);
  const account = state.accounts.find((a) => a.id === old.account_id);
  if (account === undefined) throw new Error(`key ${old.id} belongs to no known account`);
  // Rotating it again would issue a second replacement while the first is in use.
  if (s === 'expiring') throw new Error(alreadyRotated(state, old, account, ctx.now));
  // The dashboard's rotation: the replacement keeps the old key's label.
  const { record, secret, oldEndsAt: expiresAt } = await rotateKey(ctx.store, account, old, grace, ctx.now);
  if (ctx.json) {
    printJson(ctx.io, {
      id: record.id,
      account: account.name,
      key: secret,
      created_at: record.created_at,
      replaces: old.id,
      replaced_expires_at: expiresAt,
    });
  } else {
    ctx.io.out(`created key ${record.id} for account ${account.name}: ${secret}`);
    ctx.io.out(
      grace === 0
        ? `key ${old.id} (${old.prefix}…) no longer works`
        : `key ${old.id} (${old.prefix}…) keeps working until ${expiresAt}`,
    );
    warnShownOnce(ctx.io);
  }
  return 0;
}
