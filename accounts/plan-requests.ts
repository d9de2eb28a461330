/**
 * The one seam for plan changes asked for by people (SPEC 5): a person asks
 * (requestPlan), someone decides (decidePlanRequest). Today that someone is an
 * operator, in the admin view or with `fundreturns accounts approve|decline`; a
 * payment provider's webhook would call decidePlanRequest in the operator's place
 * (actor `provider:<name>`), and nothing else would change: the decision, the plan
 * taking effect at once (C28) and the audit entry all happen here.
 *
 * Also the audit helper every admin action goes through (CLI and admin pages alike).
 */
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { AccessChangeError } from './changes.js';
import {
  type AccessState,
  type AccessStore,
  type Account,
  type Person,
  PLAN_NAMES,
  type PlanName,
  type PlanRequest,
  type RequestDecision,
} from './model.js';

/** Who did an admin action: `id` is what records keep (decided_by), `name` what the audit log shows. */
export interface Actor {
  /** A person id (`user_…`) or `cli:<os user>`: at most 100 characters (model.ts isId). */
  readonly id: string;
  /** `user_… <email>` or `cli:<os user>`. */
  readonly name: string;
}

/** An operator at the command line, named by the operating system's user. */
export function cliActor(env: NodeJS.ProcessEnv = process.env): Actor {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container running as an arbitrary uid): the shell's word for it.
    user = env.USER ?? env.LOGNAME ?? `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  const id = `cli:${user}`.slice(0, 100);
  return { id, name: id };
}

/** A person acting in the admin view. */
/** A person in the dashboard; `from`, the client address their request came from (behind a trusted proxy, the one it forwards). */
export function personActor(p: Pick<Person, 'id' | 'email'>, from?: string): Actor {
  return {
    id: p.id,
    name: `${p.id} <${p.email}>${from === undefined || from === '' ? '' : ` from ${from}`}`,
  };
}

/** Write one admin action to the store's audit log (who, what, when). */
export async function auditAdmin(
  store: AccessStore,
  actor: Actor,
  action: string,
  target: string,
  detail: string,
  now: number,
): Promise<void> {
  await store.audit({ at: new Date(now).toISOString(), actor: actor.name, action, target, detail });
}

function newRequestId(): string {
  return `req_${randomBytes(6).toString('hex')}`;
}

function accountOf(state: AccessState, id: string): Account {
  const a = state.accounts.find((x) => x.id === id);
  if (a === undefined) throw new AccessChangeError(`no account with id ${id}`);
  return a;
}

/**
 * Record a request to move `account_id` to `plan`. Refused (AccessChangeError) for an
 * unknown plan, the plan the account is on, or a second pending request (changes.ts).
 */
export async function requestPlan(
  store: AccessStore,
  ask: { readonly account_id: string; readonly plan: string; readonly person_id: string | null },
  now: number,
): Promise<PlanRequest> {
  if (!(PLAN_NAMES as readonly string[]).includes(ask.plan))
    throw new AccessChangeError(`unknown plan ${JSON.stringify(ask.plan)} (plans: ${PLAN_NAMES.join(', ')})`);
  const account = accountOf(await store.read(), ask.account_id);
  if (account.plan === ask.plan) throw new AccessChangeError(`the account is already on plan ${ask.plan}`);
  const request: PlanRequest = {
    id: newRequestId(),
    account_id: account.id,
    plan: ask.plan as PlanName,
    person_id: ask.person_id,
    created_at: new Date(now).toISOString(),
    decision: null,
    decided_by: null,
    decided_at: null,
  };
  await store.change({ op: 'request.create', request });
  return request;
}

export interface Decided {
  readonly request: PlanRequest;
  /** The account after the decision (its new plan when approved). */
  readonly account: Account;
  /** The plan it was on before. */
  readonly from: PlanName;
}

/**
 * Approve or decline a pending request. The decision is recorded first: of two
 * deciders only one gets it recorded (changes.ts refuses a second), and only then does
 * the plan change, at once (C28). A crash between the two leaves an approved request on
 * the old plan, which `accounts requests --all` shows beside the account's plan;
 * `accounts set-plan` finishes it.
 */
export async function decidePlanRequest(
  store: AccessStore,
  requestId: string,
  decision: RequestDecision,
  actor: Actor,
  now: number,
): Promise<Decided> {
  const state = await store.read();
  const r = state.requests.find((x) => x.id === requestId);
  if (r === undefined) throw new AccessChangeError(`no plan request with id ${JSON.stringify(requestId)}`);
  if (r.decision !== null)
    throw new AccessChangeError(
      `request ${r.id} was already ${r.decision} at ${r.decided_at} by ${r.decided_by}`,
    );
  const before = accountOf(state, r.account_id);
  const at = new Date(now).toISOString();
  let after = await store.change({ op: 'request.decide', request_id: r.id, decision, by: actor.id, at });
  if (decision === 'approved' && accountOf(after, r.account_id).plan !== r.plan)
    after = await store.change({ op: 'account.plan', account_id: r.account_id, plan: r.plan });
  const account = accountOf(after, r.account_id);
  await auditAdmin(
    store,
    actor,
    decision === 'approved' ? 'request.approve' : 'request.decline',
    r.id,
    `account ${account.name} (${account.id}): ${before.plan} -> ${r.plan}${decision === 'approved' ? '' : ' declined'}`,
    now,
  );
  const request = after.requests.find((x) => x.id === r.id) ?? r;
  return { request, account, from: before.plan };
}
