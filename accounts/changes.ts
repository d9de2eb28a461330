/**
 * The change rule of accounts, keys, people and plan requests: how a change applies to
 * a state, and whether it may. Both stores (embedded file, Redis) check every change
 * here before they record it and replay it from here, so neither can drift.
 */
import {
  type AccessChange,
  type AccessState,
  isChange,
  isObject,
  isPlan,
  isStatus,
  newAccountProblem,
  type Person,
} from './model.js';

/** Apply a change to a state (pure): the one definition both stores replay. */
export function applyChange(state: AccessState, c: AccessChange): AccessState {
  const next = { ...state, version: state.version + 1 };
  const person = (id: string, f: (p: Person) => Person) => state.people.map((p) => (p.id === id ? f(p) : p));
  switch (c.op) {
    case 'account.create':
      return { ...next, accounts: [...state.accounts, c.account] };
    case 'account.plan':
      return {
        ...next,
        accounts: state.accounts.map((a) => (a.id === c.account_id ? { ...a, plan: c.plan } : a)),
      };
    case 'account.status':
      return {
        ...next,
        accounts: state.accounts.map((a) => (a.id === c.account_id ? { ...a, status: c.status } : a)),
      };
    case 'key.create':
      return { ...next, keys: [...state.keys, c.key] };
    case 'key.revoke':
      return {
        ...next,
        keys: state.keys.map((k) =>
          k.id === c.key_id && k.revoked_at === null ? { ...k, revoked_at: c.at } : k,
        ),
      };
    case 'key.expire':
      return { ...next, keys: state.keys.map((k) => (k.id === c.key_id ? { ...k, expires_at: c.at } : k)) };
    case 'person.create':
      return { ...next, people: [...state.people, c.person] };
    case 'person.verify':
      return { ...next, people: person(c.person_id, (p) => ({ ...p, verified_at: p.verified_at ?? c.at })) };
    case 'person.password':
      return {
        ...next,
        people: person(c.person_id, (p) => ({ ...p, password_hash: c.password_hash, password_at: c.at })),
      };
    case 'person.status':
      return { ...next, people: person(c.person_id, (p) => ({ ...p, status: c.status })) };
    case 'person.role':
      return { ...next, people: person(c.person_id, (p) => ({ ...p, role: c.role })) };
    case 'request.create':
      return { ...next, requests: [...state.requests, c.request] };
    case 'request.decide':
      return {
        ...next,
        requests: state.requests.map((r) =>
          r.id === c.request_id && r.decision === null
            ? { ...r, decision: c.decision, decided_by: c.by, decided_at: c.at }
            : r,
        ),
      };
  }
}

/** A change refused against the current state (the command line prints its message). */
export class AccessChangeError extends Error {
  override readonly name = 'AccessChangeError';
}

/**
 * Why change `c` cannot be applied to state `s`, or null when it can: the one rule
 * both stores check before they record a change, so neither can hold a duplicate
 * name, a dangling reference, an unknown plan or status, or a key revived after
 * revocation. `c` is checked whole, since a change may come from an edited file.
 */
export function changeProblem(s: AccessState, c: AccessChange): string | null {
  const shape = changeShapeProblem(c);
  if (shape !== null) return shape;
  const noAccount = (id: string) => (s.accounts.some((a) => a.id === id) ? null : `no account with id ${id}`);
  switch (c.op) {
    case 'account.create':
      return newAccountProblem(s, c.account);
    case 'account.plan':
    case 'account.status':
      return noAccount(c.account_id);
    case 'key.create':
      if (noAccount(c.key.account_id) !== null) return noAccount(c.key.account_id);
      if (s.keys.some((k) => k.id === c.key.id)) return `key id ${c.key.id} already exists`;
      if (s.keys.some((k) => k.hash === c.key.hash)) return 'a key with the same hash already exists';
      return null;
    case 'key.revoke':
    case 'key.expire': {
      // A revoked key stays revoked, and gets no end date either.
      const k = s.keys.find((x) => x.id === c.key_id);
      if (k === undefined) return `no key with id ${c.key_id}`;
      if (k.revoked_at === null) return null;
      return c.op === 'key.revoke'
        ? `key ${k.id} was already revoked at ${k.revoked_at}`
        : `key ${k.id} was revoked at ${k.revoked_at}`;
    }
    case 'person.create': {
      const p = c.person;
      if (noAccount(p.account_id) !== null) return noAccount(p.account_id);
      if (s.people.some((x) => x.id === p.id)) return `person id ${p.id} already exists`;
      if (s.people.some((x) => x.email === p.email)) return `a person with email ${p.email} already exists`;
      if (s.people.some((x) => x.account_id === p.account_id))
        return `account ${p.account_id} already belongs to a person`;
      return null;
    }
    case 'person.verify':
    case 'person.password':
    case 'person.status':
    case 'person.role':
      return s.people.some((p) => p.id === c.person_id) ? null : `no person with id ${c.person_id}`;
    case 'request.create': {
      const r = c.request;
      if (noAccount(r.account_id) !== null) return noAccount(r.account_id);
      if (s.requests.some((x) => x.id === r.id)) return `request id ${r.id} already exists`;
      if (r.decision !== null) return 'a new request must be pending';
      if (s.requests.some((x) => x.account_id === r.account_id && x.decision === null))
        return 'the account already has a pending plan request';
      return null;
    }
    case 'request.decide': {
      const r = s.requests.find((x) => x.id === c.request_id);
      if (r === undefined) return `no plan request with id ${c.request_id}`;
      if (r.decision !== null) return `request ${r.id} was already ${r.decision} at ${r.decided_at}`;
      return null;
    }
  }
}

/** Throw AccessChangeError when `c` cannot be applied to `s` (changeProblem). */
export function assertChange(s: AccessState, c: AccessChange): void {
  const why = changeProblem(s, c);
  if (why !== null) throw new AccessChangeError(why);
}

/** Why `c` is not a well-formed change; a plan or status name it does not know is named as such. */
function changeShapeProblem(c: unknown): string | null {
  if (isChange(c)) return null;
  if (isObject(c)) {
    const fields = c.op === 'account.create' && isObject(c.account) ? c.account : c;
    if ('plan' in fields && !isPlan(fields.plan)) return `unknown plan ${JSON.stringify(fields.plan)}`;
    if ('status' in fields && !isStatus(fields.status))
      return `unknown status ${JSON.stringify(fields.status)}`;
  }
  const text = JSON.stringify(c) ?? String(c);
  return `not a valid access change: ${text.length > 120 ? `${text.slice(0, 120)}…` : text}`;
}
