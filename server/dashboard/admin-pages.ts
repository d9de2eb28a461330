/**
 * The operators' view (people with the admin role; the first is made with `users
 * admin`): accounts and people with search, plan and status changes, plan requests,
 * usage per account, disabling a person, and the audit log every action here writes.
 */

import { AccessChangeError } from '../../accounts/changes.js';
import {
  type Account,
  monthOf,
  PERSON_STATUSES,
  type PersonStatus,
  PLAN_NAMES,
  type PlanName,
  type RequestDecision,
  STATUSES,
  type SubscriptionStatus,
} from '../../accounts/model.js';
import { personOfAccount } from '../../accounts/people.js';
import { type Actor, auditAdmin, decidePlanRequest, personActor } from '../../accounts/plan-requests.js';
import { lastDays } from './account-pages.js';
import { dailyTable } from './chart.js';
import { type Html, html } from './html.js';
import type { PageRoute, PersonContext } from './page-context.js';
import { redirect } from './page-context.js';
import type { PageResponse } from './page-http.js';
import { page } from './page-layout.js';

const DONE: Record<string, string> = {
  plan: 'The plan is changed; its limits apply at once.',
  status: 'The subscription status is changed.',
  person: 'The person is changed.',
  approved: 'The request is approved: the plan is changed.',
  declined: 'The request is declined.',
};

function view(
  c: PersonContext,
  title: string,
  content: Html,
  problem: string | null = null,
  status = 200,
): PageResponse {
  const done = DONE[c.req.query.get('done') ?? ''];
  return {
    status,
    body: page(
      {
        title,
        person: c.person,
        csrf: c.csrf,
        current: '/admin',
        notice:
          problem !== null ? { kind: 'error', text: problem } : done ? { kind: 'ok', text: done } : null,
      },
      html`<p><a href="/admin">Accounts</a> · <a href="/admin/requests">Plan requests</a> · <a href="/admin/audit">Audit log</a></p>
${content}`,
    ),
  };
}

const csrfField = (c: PersonContext) => html`<input type="hidden" name="csrf" value="${c.csrf}">`;

/** The actor an audit entry and a decided request name. */
const actorOf = (c: PersonContext): Actor => personActor(c.person, c.req.ip);

const MAX_ROWS = 200;

async function accounts(c: PersonContext): Promise<PageResponse> {
  const q = (c.req.query.get('q') ?? '').trim().toLowerCase();
  const list = c.state.accounts.filter((a) => {
    if (q === '') return true;
    const owner = personOfAccount(c.state, a.id);
    return a.name.toLowerCase().includes(q) || a.id.includes(q) || (owner?.email.includes(q) ?? false);
  });
  const pending = c.state.requests.filter((r) => r.decision === null).length;
  const usage = await c.deps.store.readUsage(monthOf(c.deps.now()));
  const rows = list.slice(0, MAX_ROWS).map((a) => {
    const owner = personOfAccount(c.state, a.id);
    return html`<tr><td><a href="/admin/accounts/${a.id}">${a.name}</a></td><td>${owner?.email ?? html`<span class="muted">none (CLI)</span>`}${
      owner?.status === 'disabled' ? ' (disabled)' : ''
    }${owner?.role === 'admin' ? ' (admin)' : ''}</td><td>${a.plan}</td><td>${a.status}</td><td>${usage.get(a.id) ?? 0}</td><td>${a.created_at.slice(0, 10)}</td></tr>`;
  });
  return view(
    c,
    'Admin: accounts',
    html`<p>${pending === 0 ? 'No plan requests waiting.' : html`<a href="/admin/requests"><strong>${pending} plan request${pending === 1 ? '' : 's'} waiting</strong></a>.`}</p>
<form method="get" action="/admin" role="search"><label for="q">Search accounts by name, id or owner's email</label>
<input type="search" id="q" name="q" value="${q}"> <button type="submit" class="secondary">Search</button></form>
<table><caption class="muted">${list.length} account${list.length === 1 ? '' : 's'}${list.length > MAX_ROWS ? `, first ${MAX_ROWS} shown` : ''}</caption>
<thead><tr><th scope="col">Account</th><th scope="col">Owner</th><th scope="col">Plan</th><th scope="col">Status</th><th scope="col">Requests this month</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

function accountById(c: PersonContext): Account | undefined {
  return c.state.accounts.find((a) => a.id === c.req.params.id);
}

async function accountPage(
  c: PersonContext,
  problem: string | null = null,
  status = 200,
): Promise<PageResponse> {
  const a = accountById(c);
  if (a === undefined)
    return view(c, 'Admin: no such account', html`<p>No account with that id.</p>`, null, 404);
  const owner = personOfAccount(c.state, a.id);
  const t = c.deps.now();
  const days = lastDays(t, 30);
  const daily = await c.deps.store.readDaily(days[0], days[days.length - 1]);
  const keys = c.state.keys.filter((k) => k.account_id === a.id);
  const usage = (await c.deps.store.readUsage(monthOf(t))).get(a.id) ?? 0;
  const limits = c.deps.plans[a.plan];
  const personBlock =
    owner === undefined
      ? html`<p>No person owns this account (made with the command line).</p>`
      : html`<p>${owner.email} · ${owner.role} · ${owner.status} · ${owner.verified_at === null ? 'email not verified' : 'email verified'} · since ${owner.created_at.slice(0, 10)}</p>
${
  owner.id === c.person.id
    ? html`<p class="muted">This is you: another operator can disable you.</p>`
    : html`<form method="post" action="/admin/people/${owner.id}/status">${csrfField(c)}
<input type="hidden" name="status" value="${owner.status === 'active' ? 'disabled' : 'active'}">
<button type="submit" class="${owner.status === 'active' ? 'danger' : 'secondary'}">${owner.status === 'active' ? 'Disable this person (signs them out, blocks sign-in)' : 'Enable this person'}</button></form>`
}`;
  return view(
    c,
    `Admin: ${a.name}`,
    html`<table>
<tr><th scope="row">Id</th><td><code>${a.id}</code></td></tr>
<tr><th scope="row">Plan</th><td>${a.plan} (${limits.monthly} a month, ${limits.burst} a minute)</td></tr>
<tr><th scope="row">Subscription</th><td>${a.status}</td></tr>
<tr><th scope="row">This month</th><td>${usage} of ${limits.monthly} requests (as last saved)</td></tr>
<tr><th scope="row">Keys</th><td>${keys.filter((k) => k.revoked_at === null).length} not revoked, ${keys.length} in all</td></tr>
</table>
<h2>Owner</h2>
${personBlock}
<h2>Change the plan</h2>
<form method="post" action="/admin/accounts/${a.id}/plan">${csrfField(c)}
<label for="plan">Plan</label><select id="plan" name="plan">${PLAN_NAMES.map(
      (p) => html`<option value="${p}"${p === a.plan ? html` selected` : ''}>${p}</option>`,
    )}</select> <button type="submit">Set plan</button></form>
<h2>Change the subscription status</h2>
<form method="post" action="/admin/accounts/${a.id}/status">${csrfField(c)}
<label for="status">Status</label><select id="status" name="status">${STATUSES.map(
      (s) => html`<option value="${s}"${s === a.status ? html` selected` : ''}>${s}</option>`,
    )}</select> <button type="submit">Set status</button>
<p class="muted">Any status but active refuses the account's requests with 403 (C25).</p></form>
<h2>Requests per day, last 30 days</h2>
${dailyTable(
  days,
  daily,
  keys.map((k) => k.id),
)}`,
    problem,
    status,
  );
}

async function setPlan(c: PersonContext): Promise<PageResponse> {
  const a = accountById(c);
  const plan = c.req.form.get('plan') ?? '';
  if (a === undefined) return accountPage(c);
  if (!(PLAN_NAMES as readonly string[]).includes(plan))
    return accountPage(c, 'Choose a plan from the list.', 422);
  if (plan !== a.plan) {
    await c.deps.store.change({ op: 'account.plan', account_id: a.id, plan: plan as PlanName });
    await auditAdmin(c.deps.store, actorOf(c), 'account.plan', a.id, `${a.plan} -> ${plan}`, c.deps.now());
  }
  return redirect(`/admin/accounts/${a.id}?done=plan`);
}

async function setStatus(c: PersonContext): Promise<PageResponse> {
  const a = accountById(c);
  const status = c.req.form.get('status') ?? '';
  if (a === undefined) return accountPage(c);
  if (!(STATUSES as readonly string[]).includes(status))
    return accountPage(c, 'Choose a status from the list.', 422);
  if (status !== a.status) {
    await c.deps.store.change({
      op: 'account.status',
      account_id: a.id,
      status: status as SubscriptionStatus,
    });
    await auditAdmin(
      c.deps.store,
      actorOf(c),
      'account.status',
      a.id,
      `${a.status} -> ${status}`,
      c.deps.now(),
    );
  }
  return redirect(`/admin/accounts/${a.id}?done=status`);
}

async function setPersonStatus(c: PersonContext): Promise<PageResponse> {
  const p = c.state.people.find((x) => x.id === c.req.params.id);
  const status = c.req.form.get('status') ?? '';
  if (p === undefined)
    return view(c, 'Admin: no such person', html`<p>No person with that id.</p>`, null, 404);
  if (!(PERSON_STATUSES as readonly string[]).includes(status))
    return view(c, 'Admin', html``, 'Choose active or disabled.', 422);
  if (p.id === c.person.id) return view(c, 'Admin', html``, 'You cannot disable yourself.', 409);
  if (status !== p.status) {
    await c.deps.store.change({ op: 'person.status', person_id: p.id, status: status as PersonStatus });
    await auditAdmin(
      c.deps.store,
      actorOf(c),
      `person.${status === 'active' ? 'enable' : 'disable'}`,
      p.id,
      p.email,
      c.deps.now(),
    );
  }
  return redirect(`/admin/accounts/${p.account_id}?done=person`);
}

async function requests(
  c: PersonContext,
  problem: string | null = null,
  status = 200,
): Promise<PageResponse> {
  const name = (id: string) => c.state.accounts.find((a) => a.id === id)?.name ?? id;
  const pending = c.state.requests.filter((r) => r.decision === null);
  const decided = c.state.requests
    .filter((r) => r.decision !== null)
    .slice(-50)
    .reverse();
  return view(
    c,
    'Admin: plan requests',
    html`<h2>Waiting</h2>
${
  pending.length === 0
    ? html`<p>None.</p>`
    : html`<table><thead><tr><th scope="col">Account</th><th scope="col">Asked by</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Asked</th><th scope="col">Decide</th></tr></thead><tbody>${pending.map(
        (r) => {
          const a = c.state.accounts.find((x) => x.id === r.account_id);
          const who = c.state.people.find((p) => p.id === r.person_id);
          return html`<tr><td><a href="/admin/accounts/${r.account_id}">${name(r.account_id)}</a></td><td>${who?.email ?? '-'}</td><td>${a?.plan ?? '?'}</td><td><strong>${r.plan}</strong></td><td>${r.created_at.slice(0, 16).replace('T', ' ')}</td>
<td><form method="post" action="/admin/requests/${r.id}/approve" class="inline">${csrfField(c)}<button type="submit" aria-label="Approve ${r.plan} for ${name(r.account_id)}">Approve</button></form>
<form method="post" action="/admin/requests/${r.id}/decline" class="inline">${csrfField(c)}<button type="submit" class="secondary" aria-label="Decline ${r.plan} for ${name(r.account_id)}">Decline</button></form></td></tr>`;
        },
      )}</tbody></table>`
}
<h2>Decided (last 50)</h2>
${
  decided.length === 0
    ? html`<p>None.</p>`
    : html`<table><thead><tr><th scope="col">Account</th><th scope="col">Plan</th><th scope="col">Decision</th><th scope="col">By</th><th scope="col">When</th></tr></thead><tbody>${decided.map(
        (r) =>
          html`<tr><td>${name(r.account_id)}</td><td>${r.plan}</td><td>${r.decision}</td><td>${r.decided_by}</td><td>${r.decided_at}</td></tr>`,
      )}</tbody></table>`
}`,
    problem,
    status,
  );
}

function decide(decision: RequestDecision) {
  return async (c: PersonContext): Promise<PageResponse> => {
    try {
      await decidePlanRequest(c.deps.store, c.req.params.id, decision, actorOf(c), c.deps.now());
    } catch (e) {
      if (e instanceof AccessChangeError) return requests(c, e.message, 409);
      throw e;
    }
    return redirect(`/admin/requests?done=${decision}`);
  };
}

async function auditPage(c: PersonContext): Promise<PageResponse> {
  const entries = await c.deps.store.readAudit(MAX_ROWS);
  return view(
    c,
    'Admin: audit log',
    entries.length === 0
      ? html`<p>No admin actions yet.</p>`
      : html`<table><caption class="muted">Newest first, at most ${MAX_ROWS}</caption><thead><tr><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">To</th><th scope="col">Detail</th></tr></thead><tbody>${entries.map(
          (e) =>
            html`<tr><td>${e.at}</td><td>${e.actor}</td><td>${e.action}</td><td>${e.target}</td><td>${e.detail}</td></tr>`,
        )}</tbody></table>`,
  );
}

export const adminRoutes: readonly PageRoute[] = [
  { method: 'GET', path: '/admin', who: 'admin', handle: accounts },
  { method: 'GET', path: '/admin/accounts/:id', who: 'admin', handle: (c) => accountPage(c) },
  { method: 'POST', path: '/admin/accounts/:id/plan', who: 'admin', handle: setPlan },
  { method: 'POST', path: '/admin/accounts/:id/status', who: 'admin', handle: setStatus },
  { method: 'POST', path: '/admin/people/:id/status', who: 'admin', handle: setPersonStatus },
  { method: 'GET', path: '/admin/requests', who: 'admin', handle: (c) => requests(c) },
  { method: 'POST', path: '/admin/requests/:id/approve', who: 'admin', handle: decide('approved') },
  { method: 'POST', path: '/admin/requests/:id/decline', who: 'admin', handle: decide('declined') },
  { method: 'GET', path: '/admin/audit', who: 'admin', handle: auditPage },
];
