import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AccessChangeError } from './changes.js';
import { auditAdmin, cliActor, decidePlanRequest, personActor, requestPlan } from './plan-requests.js';
import { account, create } from './store.contract.js';
import { FileAccessStore } from './store-file.js';

const NOW = Date.parse('2026-11-23T15:00:00.000Z');
const dirs: string[] = [];
const stores: FileAccessStore[] = [];

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function storeWith(plan: 'free' | 'pro' = 'free') {
  const dir = mkdtempSync(join(tmpdir(), 'fr-requests-'));
  dirs.push(dir);
  const s = await FileAccessStore.open(dir);
  stores.push(s);
  const a = account('acme', plan);
  await s.change(create(a));
  return { s, a, dir };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe('plan requests: one seam from asking to the plan taking effect (C28)', () => {
  it('an approved request moves the account to the plan at once and the audit log says who, what, when', async () => {
    const { s, a } = await storeWith();
    const r = await requestPlan(s, { account_id: a.id, plan: 'pro', person_id: null }, NOW);
    expect(r).toMatchObject({
      account_id: a.id,
      plan: 'pro',
      decision: null,
      created_at: '2026-11-23T15:00:00.000Z',
    });
    expect(r.id).toMatch(/^req_[0-9a-f]{12}$/);
    const actor = { id: 'cli:ops', name: 'cli:ops' };
    const d = await decidePlanRequest(s, r.id, 'approved', actor, NOW + 1000);
    expect(d.from).toBe('free');
    expect(d.account.plan).toBe('pro');
    expect(d.request).toMatchObject({
      decision: 'approved',
      decided_by: 'cli:ops',
      decided_at: '2026-11-23T15:00:01.000Z',
    });
    expect((await s.read()).accounts[0].plan).toBe('pro');
    expect(await s.readAudit(10)).toEqual([
      {
        at: '2026-11-23T15:00:01.000Z',
        actor: 'cli:ops',
        action: 'request.approve',
        target: r.id,
        detail: `account acme (${a.id}): free -> pro`,
      },
    ]);
  });

  it('a declined request leaves the plan, and a new request may follow it', async () => {
    const { s, a } = await storeWith();
    const r = await requestPlan(s, { account_id: a.id, plan: 'business', person_id: null }, NOW);
    const d = await decidePlanRequest(
      s,
      r.id,
      'declined',
      personActor({ id: 'user_000000000001', email: 'ops@example.com' }),
      NOW,
    );
    expect(d.account.plan).toBe('free');
    expect(d.request.decided_by).toBe('user_000000000001');
    expect((await s.readAudit(1))[0]).toMatchObject({
      actor: 'user_000000000001 <ops@example.com>',
      action: 'request.decline',
    });
    await requestPlan(s, { account_id: a.id, plan: 'developer', person_id: null }, NOW);
  });

  it('refuses the current plan, an unknown plan, an unknown account and a second pending request', async () => {
    const { s, a } = await storeWith('pro');
    const cases: Array<[() => Promise<unknown>, RegExp]> = [
      [() => requestPlan(s, { account_id: a.id, plan: 'pro', person_id: null }, NOW), /already on plan pro/],
      [() => requestPlan(s, { account_id: a.id, plan: 'gold', person_id: null }, NOW), /unknown plan "gold"/],
      [
        () => requestPlan(s, { account_id: 'acct_nope', plan: 'free', person_id: null }, NOW),
        /no account with id acct_nope/,
      ],
    ];
    for (const [p, message] of cases) {
      const e = await refusal(p());
      expect(e).toBeInstanceOf(AccessChangeError);
      expect((e as Error).message).toMatch(message);
    }
    await requestPlan(s, { account_id: a.id, plan: 'business', person_id: null }, NOW);
    const again = await refusal(requestPlan(s, { account_id: a.id, plan: 'free', person_id: null }, NOW));
    expect(again).toBeInstanceOf(AccessChangeError);
    expect((again as Error).message).toBe('the account already has a pending plan request');
    expect((await s.read()).requests).toHaveLength(1);
  });

  it('decides a request once: of an approval and a decline at the same moment exactly one is recorded', async () => {
    const { s, a, dir } = await storeWith();
    const other = await FileAccessStore.open(dir);
    stores.push(other);
    const r = await requestPlan(s, { account_id: a.id, plan: 'pro', person_id: null }, NOW);
    const actor = cliActor();
    const results = await Promise.allSettled([
      decidePlanRequest(s, r.id, 'approved', actor, NOW),
      decidePlanRequest(other, r.id, 'declined', actor, NOW),
    ]);
    const won = results.filter((x) => x.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const lost = results.find((x) => x.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(AccessChangeError);
    expect(String(lost.reason.message)).toMatch(/was already (approved|declined)/);
    const decided = (await s.read()).requests[0].decision;
    expect((await s.read()).accounts[0].plan).toBe(decided === 'approved' ? 'pro' : 'free');
    expect(await s.readAudit(10)).toHaveLength(1);
    await expect(decidePlanRequest(s, 'req_000000000000', 'approved', actor, NOW)).rejects.toThrow(
      /no plan request with id "req_000000000000"/,
    );
  });

  it('auditAdmin writes one entry, and the CLI actor is cli:<os user>', async () => {
    const { s } = await storeWith();
    const actor = cliActor();
    expect(actor.id).toMatch(/^cli:.+/);
    await auditAdmin(s, actor, 'person.disable', 'user_000000000001', 'a@b.c', NOW);
    expect(await s.readAudit(5)).toEqual([
      {
        at: '2026-11-23T15:00:00.000Z',
        actor: actor.name,
        action: 'person.disable',
        target: 'user_000000000001',
        detail: 'a@b.c',
      },
    ]);
  });
});
