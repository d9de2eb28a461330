/**
 * People: who signs in to the dashboard. Signing up makes two records, the
 * account the API meters (C25–C30, on the Free plan, C26) and the person who owns it,
 * so the CLI and the dashboard show one account whichever made it. Used by the
 * dashboard's sign-up and by `users create`.
 */
import { randomBytes } from 'node:crypto';
import { unsafeCharacter } from '../core/escape.js';
import { AccessChangeError } from './changes.js';
import { newAccountId } from './keys.js';
import {
  type AccessState,
  type AccessStore,
  type Account,
  accountNameProblem,
  type Person,
  type Role,
} from './model.js';

/**
 * A person's email as it is stored and compared: in Unicode's compatibility form
 * (NFKC: a full-width `ａ` is `a`, a composed accent one code point), trimmed,
 * lower-cased.
 */
export function emailKey(email: string): string {
  return email.normalize('NFKC').trim().toLowerCase();
}

/**
 * Why `email` is not an address we can write to, or null. Deliberately loose (one
 * `@`, a dot in the domain, no spaces, RFC 5321's 254 characters): the verification
 * mail is the real check. After normalization it may hold no character that shows as
 * nothing or reorders what is around it (core/escape.ts, the rule every listing
 * escapes them by): `admin\u200b@example.com` would read as someone else's address.
 */
export function emailProblem(email: string): string | null {
  const e = emailKey(email);
  if (e.length === 0) return 'Enter your email address.';
  if (e.length > 254) return 'An email address has at most 254 characters.';
  const hidden = unsafeCharacter(e);
  if (hidden !== null)
    return `The address holds an invisible or control character, ${hidden}: type it again without it.`;
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/u.test(e)) return 'Enter an email address like name@example.com.';
  return null;
}

function newPersonId(): string {
  return `user_${randomBytes(6).toString('hex')}`;
}

export function findPerson(state: AccessState, emailOrId: string): Person | undefined {
  const e = emailKey(emailOrId);
  return state.people.find((p) => p.id === emailOrId || p.email === e);
}

export function personOfAccount(state: AccessState, accountId: string): Person | undefined {
  return state.people.find((p) => p.account_id === accountId);
}

/**
 * A free account name for `email`: its local part reduced to the name rule
 * (model.ts ACCOUNT_NAME_RULE) and a random suffix, so no one can learn from a
 * refused name that an address has signed up.
 */
function accountNameFor(email: string): string {
  const local = email
    .split('@')[0]
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  const base = (local === '' ? 'user' : local).slice(0, 40);
  const name = `${base}-${randomBytes(3).toString('hex')}`;
  return accountNameProblem(name) === null ? name : `user-${randomBytes(4).toString('hex')}`;
}

export interface NewPerson {
  readonly email: string;
  readonly passwordHash: string;
  readonly role?: Role;
  /** When the address is known good already (an operator's `users create`). */
  readonly verified?: boolean;
  /** An existing account without an owner to give the person (`users create --account`); else a new Free one. */
  readonly account?: Account;
}

/**
 * Record an account on the Free plan, active (C26), and its person. Throws
 * AccessChangeError (an address already signed up) before anything is written.
 */
export async function createPerson(
  store: AccessStore,
  p: NewPerson,
  nowMs: number,
): Promise<{ person: Person; account: Account }> {
  const email = emailKey(p.email);
  const state = await store.read();
  if (state.people.some((x) => x.email === email))
    throw new AccessChangeError(`a person with email ${email} already exists`);
  const at = new Date(nowMs).toISOString();
  const account: Account = p.account ?? {
    id: newAccountId(),
    name: accountNameFor(email),
    plan: 'free',
    status: 'active',
    created_at: at,
  };
  if (p.account !== undefined && personOfAccount(state, p.account.id) !== undefined)
    throw new AccessChangeError(`account ${p.account.name} already belongs to a person`);
  const person: Person = {
    id: newPersonId(),
    email,
    account_id: account.id,
    password_hash: p.passwordHash,
    password_at: at,
    role: p.role ?? 'user',
    status: 'active',
    verified_at: p.verified ? at : null,
    created_at: at,
  };
  if (p.account === undefined) await store.change({ op: 'account.create', account });
  // Two sign-ups of one address racing: the second's account stays, ownerless and keyless.
  await store.change({ op: 'person.create', person });
  return { person, account };
}
