/**
 * A signed-in person's pages: the overview, keys, plans and usage of their account,
 * the very account the API meters (C25–C30). A key's secret is shown once, on the
 * answer to the form that made it, and never again.
 */

import { AccessChangeError } from '../../accounts/changes.js';
import { addDays, dayOf, daysBetween, lastUsedDays } from '../../accounts/daily-usage.js';
import {
  issueKeyWithin,
  keyState,
  ROTATE_GRACES,
  revokeKey,
  rotateKey,
  usable,
} from '../../accounts/key-actions.js';
import {
  type Account,
  type KeyRecord,
  type LimitDecision,
  monthOf,
  PLAN_NAMES,
  type PlanName,
} from '../../accounts/model.js';
import { requestPlan } from '../../accounts/plan-requests.js';
import { dailyTable, usageChart } from './chart.js';
import { type Html, html } from './html.js';
import type { PageRoute, PersonContext } from './page-context.js';
import { redirect } from './page-context.js';
import type { PageResponse } from './page-http.js';
import { page } from './page-layout.js';

/** Days the usage chart shows. */
const CHART_DAYS = 90;

const DONE: Record<string, string> = {
  verified: 'Your email address is verified: you can create API keys.',
  'verification-sent': 'We sent you a new verification link.',
  revoked: 'The key is revoked: requests with it are refused from now on.',
  requested:
    'Your request is sent. An operator will approve it soon; the new limits apply at once when they do.',
};

function notice(c: PersonContext, problem: string | null = null) {
  if (problem !== null) return { kind: 'error' as const, text: problem };
  const done = DONE[c.req.query.get('done') ?? ''];
  return done === undefined ? null : { kind: 'ok' as const, text: done };
}

function accountOf(c: PersonContext): Account {
  const a = c.state.accounts.find((x) => x.id === c.person.account_id);
  if (a === undefined) throw new Error(`person ${c.person.id} has no account ${c.person.account_id}`);
  return a;
}

function view(
  c: PersonContext,
  title: string,
  current: string,
  content: Html,
  problem: string | null = null,
  status = 200,
): PageResponse {
  return {
    status,
    body: page({ title, person: c.person, csrf: c.csrf, current, notice: notice(c, problem) }, content),
  };
}

const csrfField = (c: PersonContext) => html`<input type="hidden" name="csrf" value="${c.csrf}">`;

/** Where the account stands now: the limiter's own figures, counting nothing. */
async function standing(c: PersonContext, a: Account): Promise<{ used: number; d: LimitDecision | null }> {
  const limits = c.deps.plans[a.plan];
  const slot = c.deps.slotOf(a.id);
  const t = c.deps.now();
  if (slot !== undefined) {
    const d = await c.deps.limiter.peek({ id: a.id, slot }, limits, t);
    return { used: limits.monthly - d.quotaRemaining, d };
  }
  const usage = await c.deps.store.readUsage(monthOf(t));
  return { used: usage.get(a.id) ?? 0, d: null };
}

function standingBlock(c: PersonContext, a: Account, s: { used: number; d: LimitDecision | null }): Html {
  const limits = c.deps.plans[a.plan];
  const month = monthOf(c.deps.now());
  return html`<h2>This month (${month}, UTC)</h2>
<p><label for="quota">${s.used} of ${limits.monthly} requests used</label>
<meter id="quota" class="meter" min="0" max="${limits.monthly}" value="${s.used}" high="${Math.floor(limits.monthly * 0.9)}">${s.used} of ${limits.monthly}</meter></p>
<h2>This minute</h2>
<p>${
    s.d === null
      ? html`${limits.burst} requests per 60 seconds.`
      : html`${s.d.burstRemaining} of ${limits.burst} requests left in the burst window${
          s.d.burstRemaining < limits.burst ? html`; full again in ${s.d.burstReset} s` : ''
        }.`
  }</p>`;
}

// ---- overview ----------------------------------------------------------------

async function overview(c: PersonContext): Promise<PageResponse> {
  const a = accountOf(c);
  const t = c.deps.now();
  const keys = c.state.keys.filter((k) => k.account_id === a.id && usable(k, t));
  const pending = c.state.requests.find((r) => r.account_id === a.id && r.decision === null);
  const verify =
    c.person.verified_at === null
      ? html`<div class="notice error" role="alert"><p>Verify your email address before creating API keys: follow the link we sent to ${c.person.email}.</p>
<form method="post" action="/account/verify/resend">${csrfField(c)}<button type="submit" class="secondary">Send the link again</button></form></div>`
      : '';
  return view(
    c,
    'Your account',
    '/account',
    html`${verify}
<table>
<tr><th scope="row">Account</th><td><code>${a.name}</code></td></tr>
<tr><th scope="row">Plan</th><td>${a.plan}${pending ? html` (you asked for ${pending.plan})` : ''} · <a href="/account/plans">Plans</a></td></tr>
<tr><th scope="row">Subscription</th><td>${a.status}</td></tr>
<tr><th scope="row">API keys</th><td>${keys.length} in use · <a href="/account/keys">Keys</a></td></tr>
</table>
${standingBlock(c, a, await standing(c, a))}
<p><a href="/account/usage">Requests per day</a> · <a href="/docs">API reference</a></p>`,
  );
}

// ---- keys --------------------------------------------------------------------

function keysOf(c: PersonContext, a: Account): KeyRecord[] {
  return c.state.keys.filter(
    (k) => k.account_id === a.id && k.revoked_at === null && keyState(k, c.deps.now()) !== 'expired',
  );
}

function graceLabel(s: number): string {
  if (s === 0) return 'stops at once';
  if (s < 86_400) return `works ${s / 3600} more hour${s === 3600 ? '' : 's'}`;
  return `works ${s / 86_400} more day${s === 86_400 ? '' : 's'}`;
}

async function keysPage(
  c: PersonContext,
  problem: string | null = null,
  status = 200,
): Promise<PageResponse> {
  const a = accountOf(c);
  const keys = keysOf(c, a);
  // No key had a request before the oldest was made: the look back stops there.
  const since = keys.reduce<string | undefined>((d, k) => {
    const made = k.created_at.slice(0, 10);
    return d === undefined || made < d ? made : d;
  }, undefined);
  const used = await lastUsedDays(
    c.deps.store,
    keys.map((k) => k.id),
    dayOf(c.deps.now()),
    since,
  );
  const t = c.deps.now();
  const inUse = keys.filter((k) => usable(k, t)).length;
  const rows = keys.map(
    (k) => html`<tr>
<td>${k.label ?? html`<span class="muted">(no label)</span>`}</td>
<td><code>${k.prefix}…</code></td>
<td>${k.created_at.slice(0, 10)}</td>
<td>${used.get(k.id) ?? html`<span class="muted">not yet</span>`}</td>
<td>${keyState(k, t) === 'expiring' ? html`ends ${k.expires_at}` : 'active'}</td>
<td>${
      keyState(k, t) === 'active'
        ? html`<form method="post" action="/account/keys/${k.id}/rotate">${csrfField(c)}
<label for="grace-${k.id}">Old key</label>
<select id="grace-${k.id}" name="grace">${ROTATE_GRACES.map(
            (g) => html`<option value="${g}"${g === 86_400 ? html` selected` : ''}>${graceLabel(g)}</option>`,
          )}</select>
<button type="submit" class="secondary">Rotate</button></form>`
        : ''
    }
<form method="post" action="/account/keys/${k.id}/revoke">${csrfField(c)}<button type="submit" class="danger" aria-label="Revoke key ${k.label ?? k.prefix}">Revoke</button></form></td>
</tr>`,
  );
  const create =
    c.person.verified_at === null
      ? html`<p>Verify your email address first (see <a href="/account">your account</a>).</p>`
      : inUse >= c.deps.maxKeys
        ? html`<p>You hold ${inUse} keys, the most an account may hold (${c.deps.maxKeys}). Revoke one to create another.</p>`
        : html`<form method="post" action="/account/keys">${csrfField(c)}
<label for="label">Label</label>
<input type="text" id="label" name="label" maxlength="64" placeholder="e.g. production server" aria-describedby="label-help">
<p id="label-help" class="muted">A name for you to tell keys apart. The key itself is shown once, on the next page.</p>
<button type="submit">Create key</button></form>`;
  return view(
    c,
    'API keys',
    '/account/keys',
    html`<p>Send a key as <code>Authorization: Bearer &lt;key&gt;</code>. Rotating gives a new key and lets the old one work for the time you choose; revoking stops a key at once.</p>
${
  keys.length === 0
    ? html`<p>No keys yet.</p>`
    : html`<table><caption class="muted">${inUse} of at most ${c.deps.maxKeys} keys in use</caption>
<thead><tr><th scope="col">Label</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used (UTC day)</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody></table>`
}
<h2>Create a key</h2>
${create}`,
    problem,
    status,
  );
}

function secretPage(
  c: PersonContext,
  title: string,
  label: string | undefined,
  secret: string,
  extra: Html | string,
): PageResponse {
  return view(
    c,
    title,
    '/account/keys',
    html`<p class="notice error" role="alert"><strong>Copy this key now.</strong> It is shown only this once: we keep only a hash of it and cannot show it again.</p>
<p>${label ? html`Key <strong>${label}</strong>:` : 'Your new key:'}</p>
<code class="secret" id="new-key">${secret}</code>
<button type="button" class="secondary" data-copy="new-key" hidden>Copy to clipboard</button>
${extra}
<p><a href="/account/keys">Back to your keys</a></p>`,
  );
}

async function createKey(c: PersonContext): Promise<PageResponse> {
  if (c.person.verified_at === null)
    return keysPage(c, 'Verify your email address before creating keys.', 403);
  const a = accountOf(c);
  try {
    const { record, secret } = await issueKeyWithin(
      c.deps.store,
      c.state,
      a,
      c.req.form.get('label') ?? '',
      c.deps.maxKeys,
      c.deps.now(),
    );
    return secretPage(c, 'Your new API key', record.label, secret, '');
  } catch (e) {
    if (e instanceof AccessChangeError) return keysPage(c, e.message, 409);
    throw e;
  }
}

function ownKey(c: PersonContext): KeyRecord | undefined {
  const a = accountOf(c);
  return c.state.keys.find((k) => k.id === c.req.params.id && k.account_id === a.id);
}

async function rotate(c: PersonContext): Promise<PageResponse> {
  const k = ownKey(c);
  if (k === undefined) return keysPage(c, 'No such key in your account.', 404);
  const grace = Number(c.req.form.get('grace'));
  if (!(ROTATE_GRACES as readonly number[]).includes(grace))
    return keysPage(c, 'Choose how long the old key keeps working.', 422);
  try {
    const r = await rotateKey(c.deps.store, accountOf(c), k, grace, c.deps.now());
    return secretPage(
      c,
      'Your rotated API key',
      r.record.label,
      r.secret,
      html`<p>The old key (<code>${k.prefix}…</code>) ${grace === 0 ? 'no longer works.' : html`keeps working until ${r.oldEndsAt}.`}</p>`,
    );
  } catch (e) {
    if (e instanceof AccessChangeError) return keysPage(c, e.message, 409);
    throw e;
  }
}

async function revoke(c: PersonContext): Promise<PageResponse> {
  const k = ownKey(c);
  if (k === undefined) return keysPage(c, 'No such key in your account.', 404);
  await revokeKey(c.deps.store, k, c.deps.now());
  return redirect('/account/keys?done=revoked');
}

// ---- plans -------------------------------------------------------------------

async function plans(c: PersonContext, problem: string | null = null, status = 200): Promise<PageResponse> {
  const a = accountOf(c);
  const pending = c.state.requests.find((r) => r.account_id === a.id && r.decision === null);
  const cards = PLAN_NAMES.map((name) => {
    const l = c.deps.plans[name];
    const current = name === a.plan;
    return html`<section class="plan${current ? ' current' : ''}" aria-labelledby="plan-${name}">
<h2 id="plan-${name}">${name[0].toUpperCase()}${name.slice(1)}${current ? ' (yours)' : ''}</h2>
<p>${l.monthly.toLocaleString('en-US')} requests a month</p>
<p>${l.burst.toLocaleString('en-US')} requests a minute</p>
${
  current
    ? ''
    : pending?.plan === name
      ? html`<p><strong>Requested</strong> on ${pending.created_at.slice(0, 10)}</p>`
      : pending
        ? ''
        : html`<form method="post" action="/account/plans">${csrfField(c)}<input type="hidden" name="plan" value="${name}"><button type="submit" class="secondary">Ask for ${name}</button></form>`
}
</section>`;
  });
  return view(
    c,
    'Plans',
    '/account/plans',
    html`<p>Limits count every request to <code>/v1</code> and <code>/mcp</code> of every key of your account. A change of plan is approved by an operator and applies at once.</p>
<div class="plans">${cards}</div>`,
    problem,
    status,
  );
}

async function askPlan(c: PersonContext): Promise<PageResponse> {
  const plan = c.req.form.get('plan') ?? '';
  if (!(PLAN_NAMES as readonly string[]).includes(plan))
    return plans(c, 'Choose one of the plans below.', 422);
  try {
    await requestPlan(
      c.deps.store,
      { account_id: c.person.account_id, plan: plan as PlanName, person_id: c.person.id },
      c.deps.now(),
    );
  } catch (e) {
    if (e instanceof AccessChangeError) return plans(c, e.message, 409);
    throw e;
  }
  return redirect('/account/plans?done=requested');
}

// ---- usage -------------------------------------------------------------------

/** The last `n` UTC days up to the one of `t`, oldest first. */
export function lastDays(t: number, n: number): string[] {
  const today = dayOf(t);
  return daysBetween(addDays(today, -(n - 1)), today);
}

async function usage(c: PersonContext): Promise<PageResponse> {
  const a = accountOf(c);
  const t = c.deps.now();
  const days = lastDays(t, CHART_DAYS);
  const counts = await c.deps.store.readDaily(days[0], days[days.length - 1]);
  const keys = c.state.keys.filter((k) => k.account_id === a.id);
  const series = keys
    .map((k) => ({
      label: k.label ? `${k.label} (${k.prefix}…)` : `${k.prefix}…`,
      ok: days.map((d) => counts.get(d)?.get(k.id)?.[0] ?? 0),
    }))
    .filter((s) => s.ok.some((n) => n > 0));
  const refused = days.map((d) => keys.reduce((s, k) => s + (counts.get(d)?.get(k.id)?.[1] ?? 0), 0));
  return view(
    c,
    'Usage',
    '/account/usage',
    html`${standingBlock(c, a, await standing(c, a))}
<h2>Requests per day, last ${CHART_DAYS} days (UTC)</h2>
${usageChart({ days, series, refused })}
<details><summary>The same as a table</summary>
${dailyTable(
  days,
  counts,
  keys.map((k) => k.id),
)}
</details>
<p class="muted">Counts reach this page within a few seconds.</p>`,
  );
}

export const accountRoutes: readonly PageRoute[] = [
  { method: 'GET', path: '/account', who: 'person', handle: overview },
  { method: 'GET', path: '/account/keys', who: 'person', handle: (c) => keysPage(c) },
  { method: 'POST', path: '/account/keys', who: 'person', handle: createKey },
  { method: 'POST', path: '/account/keys/:id/rotate', who: 'person', handle: rotate },
  { method: 'POST', path: '/account/keys/:id/revoke', who: 'person', handle: revoke },
  { method: 'GET', path: '/account/plans', who: 'person', handle: (c) => plans(c) },
  { method: 'POST', path: '/account/plans', who: 'person', handle: askPlan },
  { method: 'GET', path: '/account/usage', who: 'person', handle: usage },
];
