/**
 * `fundreturns users …`: the operator's view of the people who sign in to the
 * dashboard. List and show them, mark an email verified, disable or enable a person,
 * and grant or revoke the admin role: the way the first admin is made. Every change
 * is recorded in the store's audit log as `cli:<os user>`; a running server sees it
 * within a second, as it sees `accounts` and `keys` changes.
 *
 * A password hash is never shown, in text or JSON.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AccessState, Person, Role } from '../../accounts/model.js';
import { createPerson, emailProblem, findPerson as personBy } from '../../accounts/people.js';
import { auditAdmin, cliActor } from '../../accounts/plan-requests.js';
import { hashPassword, passwordProblem, threadPoolHasher } from '../../server/dashboard/password.js';
import { findAccount } from '../shared/account-lookup.js';
import type { Command } from '../shared/command.js';
import { JSON_OUTPUT, stringOption, switchOption } from '../shared/flags.js';
import { iso, printJson, printTable, shown } from '../shared/print.js';
import { STORE } from '../shared/store-flag.js';
import {
  type Ctx,
  changeAudited,
  runStoreSubcommand,
  type Sub,
  subcommandForms,
} from '../shared/subcommand.js';

const ACCOUNT = stringOption('account', {
  value: 'NAME',
  help: 'create: give the user this existing account no one owns (default: a new one on the Free plan)',
});
const ADMIN = switchOption('admin', { help: 'create: with the admin role' });
const PASSWORD_FILE = stringOption('password-file', {
  value: 'FILE|-',
  help: 'create: the password is the first line of FILE (- reads stdin); default: one made and printed once',
});
const REVOKE = switchOption('revoke', { help: 'admin: take the admin role away instead' });

const USERS: Record<string, Sub> = {
  list: { params: [], flags: [JSON_OUTPUT], run: usersList },
  show: { params: ['EMAIL|ID'], flags: [JSON_OUTPUT], run: usersShow },
  verify: { params: ['EMAIL|ID'], flags: [JSON_OUTPUT], run: usersVerify },
  disable: { params: ['EMAIL|ID'], flags: [JSON_OUTPUT], run: (ctx) => usersStatus(ctx, 'disabled') },
  enable: { params: ['EMAIL|ID'], flags: [JSON_OUTPUT], run: (ctx) => usersStatus(ctx, 'active') },
  admin: { params: ['EMAIL|ID'], flags: [REVOKE, JSON_OUTPUT], run: usersAdmin },
  create: { params: ['EMAIL'], flags: [ACCOUNT, ADMIN, PASSWORD_FILE, JSON_OUTPUT], run: usersCreate },
};

export const users: Command = {
  name: 'users',
  summary:
    'list and show dashboard users; verify, disable or enable one; grant or revoke the admin role; create one',
  forms: subcommandForms(
    'users',
    USERS,
    [['list', 'show'], ['create'], ['verify', 'disable', 'enable', 'admin']],
    [STORE],
  ),
  run: (argv, io) => runStoreSubcommand('users', USERS, argv, io),
};

/** A person by id (`user_…`) or email (compared as stored: trimmed, lower case). */
function findPerson(state: AccessState, ref: string): Person {
  const p = personBy(state, ref);
  if (p === undefined) throw new Error(`no user with email or id ${JSON.stringify(ref)}`);
  return p;
}

/** A person as shown: never the password hash. */
function personView(state: AccessState, p: Person) {
  const a = state.accounts.find((x) => x.id === p.account_id);
  return {
    id: p.id,
    email: p.email,
    role: p.role,
    status: p.status,
    verified_at: p.verified_at,
    account: a?.name ?? null,
    account_id: p.account_id,
    plan: a?.plan ?? null,
    created_at: p.created_at,
    password_at: p.password_at,
  };
}

async function usersList(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const rows = state.people.map((p) => personView(state, p));
  if (ctx.json) printJson(ctx.io, rows);
  else if (rows.length === 0) ctx.io.err('no users yet: people sign up in the dashboard (/account)');
  else
    printTable(
      ctx.io,
      ['EMAIL', 'ID', 'ROLE', 'STATUS', 'VERIFIED', 'ACCOUNT', 'CREATED'],
      rows.map((r) => [
        shown(r.email),
        r.id,
        r.role,
        r.status,
        r.verified_at === null ? 'no' : 'yes',
        r.account ?? r.account_id,
        r.created_at,
      ]),
    );
  return 0;
}

async function usersShow(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const v = personView(state, findPerson(state, ctx.args[0]));
  if (ctx.json) {
    printJson(ctx.io, v);
    return 0;
  }
  const pending = state.requests.find((r) => r.account_id === v.account_id && r.decision === null);
  ctx.io.out(
    [
      `user      ${shown(v.email)}`,
      `id        ${v.id}`,
      `role      ${v.role}`,
      `status    ${v.status}`,
      `verified  ${v.verified_at ?? 'no'}`,
      `account   ${v.account ?? '-'} (${v.account_id})${v.plan === null ? '' : `, plan ${v.plan}`}`,
      `created   ${v.created_at}`,
      `password  set ${v.password_at}`,
      ...(pending === undefined
        ? []
        : [`requests  ${pending.id}: plan ${pending.plan}, pending since ${pending.created_at}`]),
    ].join('\n'),
  );
  return 0;
}

/** Print the person after a change (or that nothing needed changing). */
function report(ctx: Ctx, state: AccessState, p: Person, message: string): number {
  if (ctx.json) printJson(ctx.io, personView(state, state.people.find((x) => x.id === p.id) ?? p));
  else ctx.io.out(message);
  return 0;
}

async function usersVerify(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const p = findPerson(state, ctx.args[0]);
  const who = shown(p.email);
  if (p.verified_at !== null)
    return report(ctx, state, p, `user ${who} was already verified at ${p.verified_at}`);
  const after = await changeAudited(
    ctx,
    { op: 'person.verify', person_id: p.id, at: iso(ctx.now) },
    p.id,
    p.email,
  );
  return report(ctx, after, p, `user ${who}: email marked verified`);
}

async function usersStatus(ctx: Ctx, status: Person['status']): Promise<number> {
  const state = await ctx.store.read();
  const p = findPerson(state, ctx.args[0]);
  const who = shown(p.email);
  if (p.status === status) return report(ctx, state, p, `user ${who} is already ${status}`);
  const after = await changeAudited(
    ctx,
    { op: 'person.status', person_id: p.id, status },
    p.id,
    p.email,
    status === 'disabled' ? 'person.disable' : 'person.enable',
  );
  return report(ctx, after, p, `user ${who}: status ${p.status} -> ${status}`);
}

async function usersAdmin(ctx: Ctx): Promise<number> {
  const role: Role = REVOKE.read(ctx.flags) ? 'user' : 'admin';
  const state = await ctx.store.read();
  const p = findPerson(state, ctx.args[0]);
  const who = shown(p.email);
  if (p.role === role)
    return report(
      ctx,
      state,
      p,
      role === 'admin' ? `user ${who} is already an admin` : `user ${who} is not an admin`,
    );
  const after = await changeAudited(
    ctx,
    { op: 'person.role', person_id: p.id, role },
    p.id,
    `${p.email}: role ${p.role} -> ${role}`,
    role === 'admin' ? 'person.admin' : 'person.admin-revoke',
  );
  const note =
    p.status === 'disabled' ? ' (the user is disabled: `fundreturns users enable` to let them sign in)' : '';
  return report(ctx, after, p, `user ${who}: role ${p.role} -> ${role}${note}`);
}

/**
 * Make a person an operator vouches for (verified at once): the demo person of `make
 * run`, or the first admin before anyone signed up. Their password comes from
 * `--password-file` (its first line; `-` reads standard input), or is made here and
 * printed once. `--account` gives them an existing account no one owns (else a new
 * one on the Free plan).
 */
async function usersCreate(ctx: Ctx): Promise<number> {
  const email = ctx.args[0];
  const bad = emailProblem(email);
  if (bad !== null) throw new Error(`${JSON.stringify(email)} is not an email address: ${bad}`);
  const file = PASSWORD_FILE.read(ctx.flags);
  const made = file === undefined;
  const password = made
    ? randomBytes(15).toString('base64url')
    : (readFileSync(file === '-' ? 0 : file, 'utf8').split(/\r?\n/)[0] ?? '');
  const weak = passwordProblem(password, email);
  if (weak !== null) throw new Error(`the password in ${file}: ${weak}`);
  const state = await ctx.store.read();
  const accountName = ACCOUNT.read(ctx.flags);
  const account = accountName === undefined ? undefined : findAccount(state, accountName);
  const { person } = await createPerson(
    ctx.store,
    {
      email,
      passwordHash: await hashPassword(password, threadPoolHasher),
      verified: true,
      role: ADMIN.read(ctx.flags) ? 'admin' : 'user',
      account,
    },
    ctx.now,
  );
  const after = await ctx.store.read();
  await auditCreated(ctx, person);
  if (ctx.json) printJson(ctx.io, { ...personView(after, person), ...(made ? { password } : {}) });
  else {
    ctx.io.out(
      `created user ${shown(person.email)} (${person.id}), role ${person.role}, account ${personView(after, person).account}`,
    );
    if (made) ctx.io.out(`password: ${password}`);
  }
  if (made) ctx.io.err('fundreturns: this password is shown only once: store it now (only its hash is kept)');
  return 0;
}

/** The audit entry of a person made at the command line (the change itself is createPerson's). */
async function auditCreated(ctx: Ctx, p: Person): Promise<void> {
  await auditAdmin(ctx.store, cliActor(ctx.io.env), 'person.create', p.id, `${p.email} (${p.role})`, ctx.now);
}
