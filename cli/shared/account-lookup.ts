/** Accounts named on the command line: by name, or by the `acct_…` id scripts may hold instead. */
import type { AccessState, Account } from '../../accounts/model.js';

/** An account by name (or by its `acct_…` id, which scripts may hold instead). */
export function findAccount(state: AccessState, ref: string): Account {
  const a = state.accounts.find((x) => x.name === ref) ?? state.accounts.find((x) => x.id === ref);
  if (a === undefined) throw new Error(`no account named ${JSON.stringify(ref)}`);
  return a;
}

export function accountName(state: AccessState, id: string): string {
  return state.accounts.find((a) => a.id === id)?.name ?? id;
}

/** The email of the person who owns the account (a dashboard sign-up), or null (made with the CLI). */
export function ownerEmail(state: AccessState, accountId: string): string | null {
  return state.people.find((p) => p.account_id === accountId)?.email ?? null;
}
