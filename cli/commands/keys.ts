/**
 * `fundreturns keys …`: create, list, revoke and rotate API keys in the store a running
 * server uses. Revoking and rotating are the dashboard's own key actions
 * (accounts/key-actions.ts): a rotated key's replacement keeps its label.
 *
 * A secret key is printed exactly once, by `keys create` and `keys rotate`, and is
 * never logged or stored (only its SHA-256 hash is).
 */
import { issueKey, keyState, revokeKey, rotateKey, usable } from '../../accounts/key-actions.js';
import { hashKey, KEY_PREFIX, looksLikeKey } from '../../accounts/keys.js';
import type { AccessState, Account, KeyRecord } from '../../accounts/model.js';
import { auditAdmin, cliActor } from '../../accounts/plan-requests.js';
import { accountName, findAccount } from '../shared/account-lookup.js';
import type { Command } from '../shared/command.js';
import { intOption, JSON_OUTPUT } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { printJson, printTable, shown } from '../shared/print.js';
import { STORE } from '../shared/store-flag.js';
import { type Ctx, runStoreSubcommand, type Sub, subcommandForms } from '../shared/subcommand.js';

const GRACE = intOption('grace', {
  default: 86400,
  min: 0,
  max: 366 * 86400,
  help: 'rotate: seconds the old key keeps working (0: it stops at once)',
});

const KEYS: Record<string, Sub> = {
  create: { params: ['ACCOUNT'], flags: [JSON_OUTPUT], run: keysCreate },
  list: { params: ['ACCOUNT?'], flags: [JSON_OUTPUT], run: keysList },
  revoke: { params: ['KEY_ID'], flags: [JSON_OUTPUT], run: keysRevoke },
  rotate: {
    params: ['KEY_ID'],
    flags: [GRACE, JSON_OUTPUT],
    check: (_args, flags) => GRACE.read(flags),
    run: keysRotate,
  },
};

export const keys: Command = {
  name: 'keys',
  summary: 'create, list, revoke and rotate API keys',
  forms: subcommandForms('keys', KEYS, [['create', 'list', 'revoke', 'rotate']], [STORE]),
  run: (argv, io) => runStoreSubcommand('keys', KEYS, argv, io),
};

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

export function keyView(state: AccessState, k: KeyRecord): KeyView {
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

export function keyDates(k: KeyRecord): string {
  const parts = [`created ${k.created_at}`];
  if (k.expires_at !== null) parts.push(`expires ${k.expires_at}`);
  if (k.revoked_at !== null) parts.push(`revoked ${k.revoked_at}`);
  return parts.join(', ');
}

// ---- subcommands --------------------------------------------------------

function warnShownOnce(io: CliIo): void {
  io.err(
    'fundreturns: this key is shown only once: store it now (only its SHA-256 hash is kept, it cannot be recovered)',
  );
}

async function keysCreate(ctx: Ctx): Promise<number> {
  const state = await ctx.store.read();
  const a = findAccount(state, ctx.args[0]);
  // Keys made here have no label (the dashboard's have one).
  const { record, secret } = await issueKey(ctx.store, a, '', ctx.now);
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
  const grace = GRACE.read(ctx.flags);
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
