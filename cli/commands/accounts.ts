/**
 * `fundreturns accounts …` (DESIGN "Command line"): the operator's side of C25/C26.
 * Every subcommand works against the store a running server uses (`--store`); the
 * server picks the change up within a second.
 */

import { addDays, dayOf, readKeyDaily } from '../../accounts/daily-usage.js';
import { keyState, usable } from '../../accounts/key-actions.js';
import { newAccountId } from '../../accounts/keys.js';
import {
  type AccessChange,
  type AccessState,
  type AccessStore,
  type Account,
  accountNameProblem,
  DAILY_KEEP_DAYS,
  monthOf,
  newAccountProblem,
  PLAN_NAMES,
  type PlanLimits,
  type PlanName,
  type RequestDecision,
  STATUSES,
  type SubscriptionStatus,
} from '../../accounts/model.js';
import { cliActor, decidePlanRequest } from '../../accounts/plan-requests.js';
import { escapeControls } from '../../core/escape.js';
import { findAccount, ownerEmail } from '../shared/account-lookup.js';
import { flagLabel, type ParsedArgs, UsageError } from '../shared/args.js';
import type { Command } from '../shared/command.js';
import { intOption, JSON_OUTPUT, stringOption, switchOption } from '../shared/flags.js';
import { iso, printJson, printTable, shown } from '../shared/print.js';
import { STORE } from '../shared/store-flag.js';
import {
  type Ctx,
  changeAudited,
  runStoreSubcommand,
  type Sub,
  subcommandForms,
} from '../shared/subcommand.js';
import { keyDates, keyView } from './keys.js';

/** How many months before the current one `accounts usage` looks back. */
const HISTORY_MONTHS = 12;
/** How many days, today included, `accounts usage --daily` shows by default (the dashboard's chart). */
const DAILY_DAYS = 90;

const PLAN = stringOption('plan', {
  value: PLAN_NAMES.join('|'),
  required: true,
  help: "the new account's plan",
});
/** For the commands that print limits: the same file `serve --plans` reads (or FUNDRETURNS_PLANS). */
const PLANS = stringOption('plans', {
  value: 'FILE',
  help: "the plans' limits file the server enforces, as serve --plans (default: those the last server recorded)",
});
const DAILY = switchOption('daily', {
  text: `[--daily [--days ${DAILY_DAYS}]]`,
  help: 'requests per key per day (UTC), admitted and refused, instead of per month',
});
const DAYS = intOption('days', {
  default: DAILY_DAYS,
  min: 1,
  max: DAILY_KEEP_DAYS,
  text: '',
  help: 'with --daily: how many days, today included',
});
const ALL = switchOption('all', { help: 'requests: decided ones too, not only those pending' });

const ACCOUNTS: Record<string, Sub> = {
  create: {
    params: ['NAME'],
    flags: [PLAN, JSON_OUTPUT],
    check: (args, flags) => {
      checkName(args[0]);
      planFlag(flags);
    },
    run: accountsCreate,
  },
  list: { params: [], flags: [PLANS, JSON_OUTPUT], run: accountsList },
  show: { params: ['NAME'], flags: [PLANS, JSON_OUTPUT], run: accountsShow },
  usage: {
    params: ['NAME'],
    flags: [DAILY, DAYS, PLANS, JSON_OUTPUT],
    check: (_args, flags) => {
      if (flags.flags.has('days') && !DAILY.read(flags))
        throw new UsageError(`${flagLabel(flags, 'days')} goes with --daily`);
      DAYS.read(flags);
    },
    run: accountsUsage,
  },
  'set-plan': {
    params: ['NAME', 'PLAN'],
    flags: [JSON_OUTPUT],
    check: (args) => planArg(args[1]),
    run: accountsSetPlan,
  },
  'set-status': {
    params: ['NAME', 'STATUS'],
    shown: `NAME ${STATUSES.join('|')}`,
    flags: [JSON_OUTPUT],
    check: (args) => statusArg(args[1]),
    run: accountsSetStatus,
  },
  requests: { params: [], flags: [ALL, JSON_OUTPUT], run: accountsRequests },
  approve: { params: ['REQUEST_ID'], flags: [JSON_OUTPUT], run: (ctx) => accountsDecide(ctx, 'approved') },
  decline: { params: ['REQUEST_ID'], flags: [JSON_OUTPUT], run: (ctx) => accountsDecide(ctx, 'declined') },
};

export const accounts: Command = {
  name: 'accounts',
  summary: 'create, list and change accounts, show their usage, decide plan requests',
  forms: subcommandForms(
    'accounts',
    ACCOUNTS,
    [['create'], ['list', 'show'], ['usage'], ['set-plan', 'set-status'], ['requests', 'approve', 'decline']],
    [STORE],
  ),
  run: (argv, io) => runStoreSubcommand('accounts', ACCOUNTS, argv, io),
};

// ---- arguments ----------------------------------------------------------

function checkName(name: string): void {
  const bad = accountNameProblem(name);
  if (bad !== null) throw new UsageError(`NAME ${bad}`);
}

function planFlag(flags: ParsedArgs): PlanName {
  const plan = PLAN.read(flags);
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

function isPlan(v: string): v is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(v);
}

// ---- usage -------------------------------------------------------------

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

async function accountsUsage(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  if (DAILY.read(ctx.flags)) return accountsUsageDaily(ctx, state, a);
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

/** Requests per key per day: admitted and refused with 429, every key the account ever had. */
async function accountsUsageDaily(ctx: Ctx, state: AccessState, a: Account): Promise<number> {
  const to = dayOf(ctx.now);
  const from = addDays(to, -(DAYS.read(ctx.flags) - 1));
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
  const plan = planArg(ctx.args[1]);
  return await setAccount(
    ctx,
    'plan',
    plan,
    (a) => `account ${a.name} is already on plan ${plan}`,
    (id) => ({ op: 'account.plan', account_id: id, plan }),
  );
}

async function accountsSetStatus(ctx: Ctx): Promise<number> {
  const status = statusArg(ctx.args[1]);
  return await setAccount(
    ctx,
    'status',
    status,
    (a) => `account ${a.name} already has status ${status}`,
    (id) => ({ op: 'account.status', account_id: id, status }),
  );
}

/** Give account NAME a new plan or status: recorded and audited only when it changes, said either way. */
async function setAccount(
  ctx: Ctx,
  field: 'plan' | 'status',
  value: string,
  unchanged: (a: Account) => string,
  change: (accountId: string) => AccessChange,
): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  const before = a[field];
  const after =
    before === value
      ? state
      : await changeAudited(ctx, change(a.id), a.id, `${a.name}: ${before} -> ${value}`);
  if (ctx.json) printJson(ctx.io, findAccount(after, a.id));
  else ctx.io.out(before === value ? unchanged(a) : `account ${a.name}: ${field} ${before} -> ${value}`);
  return 0;
}

// ---- plan requests: decided through the one seam, plan-requests.ts ----

async function accountsRequests(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const all = ALL.read(ctx.flags);
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
