/**
 * The operator's side of the dashboard at the command line: `users …` and
 * `accounts requests|approve|decline`, on the embedded store and on Redis. No sign-up
 * page exists in this branch, so people are recorded through the store directly (a
 * `person.create` change, as the dashboard records one). The compiled CLI (`npm run build`).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../accounts/keys.js';
import type { AccessChange, AccessStore, KeyRecord, Person } from '../accounts/model.js';
import { cliActor, requestPlan } from '../accounts/plan-requests.js';
import { type RedisServer, startRedis } from '../accounts/redis-server.test-helper.js';
import { FileAccessStore } from '../accounts/store-file.js';
import { RedisAccessStore } from '../accounts/store-redis.js';
import { cli, cliAsync, tempDir, testNow } from './harness.js';

let dir: string;
let store: string;
/** What the CLI records as the actor: the same OS user runs it. */
const ACTOR = cliActor().name;

beforeAll(() => {
  dir = tempDir('users-cli');
  store = join(dir, 'store');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]) {
  return cli([...args, '--store', store]);
}

function ok(args: string[]): string {
  const r = run(args);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.status, args.join(' ')).toBe(0);
  return r.stdout;
}

function json<T>(args: string[]): T {
  return JSON.parse(ok([...args, '--json'])) as T;
}

let serial = 0;
function person(accountId: string, email: string): Person {
  serial++;
  return {
    id: `user_${serial.toString(16).padStart(12, '0')}`,
    email,
    account_id: accountId,
    password_hash: 'scrypt$N=16384,r=8,p=1$c2FsdA$aGFzaA',
    password_at: new Date(testNow()).toISOString(),
    role: 'user',
    status: 'active',
    verified_at: null,
    created_at: new Date(testNow()).toISOString(),
  };
}

/** Run `f` on the store as the dashboard would (its own instance), then close it. */
async function withStore<T>(f: (s: AccessStore) => Promise<T>): Promise<T> {
  const s = await FileAccessStore.open(store);
  try {
    return await f(s);
  } finally {
    await s.close();
  }
}

/** A person who signed up: an account of their own and the person, as two changes. */
async function signUp(name: string, email: string): Promise<Person> {
  const created = JSON.parse(ok(['accounts', 'create', name, '--plan', 'free', '--json'])) as { id: string };
  const p = person(created.id, email);
  await withStore((s) => s.change({ op: 'person.create', person: p }));
  return p;
}

const lastAudit = () => withStore(async (s) => (await s.readAudit(1))[0]);

describe('fundreturns users', () => {
  let ann: Person;
  beforeAll(async () => {
    ann = await signUp('ann-co', 'ann@example.com');
    ok(['accounts', 'create', 'cli-made', '--plan', 'pro']);
  });

  it('lists each person with email, id, role, status, verified and account, and never a password hash', () => {
    const text = ok(['users', 'list']);
    const [header, row] = text.trimEnd().split('\n');
    expect(header.split(/\s+/)).toEqual(['EMAIL', 'ID', 'ROLE', 'STATUS', 'VERIFIED', 'ACCOUNT', 'CREATED']);
    expect(row.split(/\s+/)).toEqual([
      'ann@example.com',
      ann.id,
      'user',
      'active',
      'no',
      'ann-co',
      ann.created_at,
    ]);
    const rows = json<Array<Record<string, unknown>>>(['users', 'list']);
    expect(rows).toEqual([
      expect.objectContaining({ id: ann.id, email: 'ann@example.com', account: 'ann-co', verified_at: null }),
    ]);
    expect(`${text}${JSON.stringify(rows)}`).not.toContain('scrypt');
  });

  it('shows one person by email in any case or by id; an unknown one is exit 1 naming it', () => {
    expect(ok(['users', 'show', ' ANN@Example.com '])).toContain(`id        ${ann.id}`);
    expect(json<{ email: string }>(['users', 'show', ann.id]).email).toBe('ann@example.com');
    expect(JSON.stringify(json(['users', 'show', ann.id]))).not.toContain('password_hash');
    const r = run(['users', 'show', 'nobody@example.com']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('fundreturns: no user with email or id "nobody@example.com"\n');
  });

  it('verify marks the email verified once, and the audit log says who, what and when', async () => {
    expect(ok(['users', 'verify', 'ann@example.com'])).toBe('user ann@example.com: email marked verified\n');
    const v = json<{ verified_at: string }>(['users', 'show', ann.id]);
    expect(Math.abs(Date.parse(v.verified_at) - testNow())).toBeLessThan(60_000);
    expect(await lastAudit()).toEqual({
      at: v.verified_at,
      actor: ACTOR,
      action: 'person.verify',
      target: ann.id,
      detail: 'ann@example.com',
    });
    expect(ok(['users', 'verify', ann.id])).toBe(
      `user ann@example.com was already verified at ${v.verified_at}\n`,
    );
  });

  it('disable and enable change the status, each written to the audit log', async () => {
    expect(ok(['users', 'disable', ann.id])).toBe('user ann@example.com: status active -> disabled\n');
    expect(json<{ status: string }>(['users', 'show', ann.id]).status).toBe('disabled');
    expect(await lastAudit()).toMatchObject({ actor: ACTOR, action: 'person.disable', target: ann.id });
    expect(ok(['users', 'disable', ann.id])).toBe('user ann@example.com is already disabled\n');
    expect(ok(['users', 'enable', ann.id])).toBe('user ann@example.com: status disabled -> active\n');
    expect(await lastAudit()).toMatchObject({ actor: ACTOR, action: 'person.enable', target: ann.id });
  });

  it('admin grants the admin role (how the first admin is made) and --revoke takes it back', async () => {
    expect(ok(['users', 'admin', 'ann@example.com'])).toBe('user ann@example.com: role user -> admin\n');
    expect(json<{ role: string }>(['users', 'show', ann.id]).role).toBe('admin');
    expect(await lastAudit()).toMatchObject({
      actor: ACTOR,
      action: 'person.admin',
      target: ann.id,
      detail: 'ann@example.com: role user -> admin',
    });
    expect(ok(['users', 'admin', ann.id])).toBe('user ann@example.com is already an admin\n');
    expect(json<{ role: string }>(['users', 'admin', ann.id, '--revoke']).role).toBe('user');
    expect(await lastAudit()).toMatchObject({ action: 'person.admin-revoke', target: ann.id });
  });

  it("accounts list and show name the owner's email, and '-' for an account made with the CLI", () => {
    const list = ok(['accounts', 'list']).trimEnd().split('\n');
    expect(list[0].split(/\s+/).slice(0, 3)).toEqual(['NAME', 'ID', 'OWNER']);
    expect(list.find((l) => l.startsWith('ann-co'))?.split(/\s+/)[2]).toBe('ann@example.com');
    expect(list.find((l) => l.startsWith('cli-made'))?.split(/\s+/)[2]).toBe('-');
    expect(ok(['accounts', 'show', 'ann-co'])).toContain('owner     ann@example.com\n');
    expect(ok(['accounts', 'show', 'cli-made'])).toContain('owner     -\n');
    const rows = json<Array<{ name: string; owner: string | null }>>(['accounts', 'list']);
    expect(rows.map((r) => [r.name, r.owner])).toEqual([
      ['ann-co', 'ann@example.com'],
      ['cli-made', null],
    ]);
  });

  it('keys list shows the label of a key made in the dashboard, and no LABEL column when no key has one', async () => {
    json(['keys', 'create', 'cli-made']);
    expect(ok(['keys', 'list', 'cli-made']).split('\n')[0]).not.toContain('LABEL');
    const accountId = json<{ id: string }>(['accounts', 'show', 'ann-co']).id;
    const g = generateKey();
    const labelled: KeyRecord = {
      id: g.id,
      account_id: accountId,
      prefix: g.prefix,
      hash: g.hash,
      created_at: new Date(testNow()).toISOString(),
      revoked_at: null,
      expires_at: null,
      label: 'laptop\u001b[2J',
    };
    await withStore((s) => s.change({ op: 'key.create', key: labelled }));
    const [header, row] = ok(['keys', 'list', 'ann-co']).split('\n');
    expect(header.split(/\s+/).slice(0, 5)).toEqual(['ID', 'ACCOUNT', 'PREFIX', 'LABEL', 'STATE']);
    // What a person typed is shown, never obeyed by the operator's terminal.
    expect(row).toContain('laptop\\x1b[2J');
    expect(row).not.toContain('\u001b');
    expect(json<Array<{ label?: string }>>(['keys', 'list', 'ann-co'])[0].label).toBe('laptop\u001b[2J');
  });

  it("shows an email with control characters escaped, so a sign-up cannot write to the operator's terminal", async () => {
    await signUp('evil-co', 'x\u001b]0;pwned\u0007@example.com');
    const text = ok(['users', 'list']);
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\u0007');
    expect(text).toContain('x\\x1b]0;pwned\\x07@example.com');
  });

  it('a usage mistake is exit 2 with the users usage', () => {
    for (const args of [['users'], ['users', 'frobnicate'], ['users', 'show'], ['users', 'list', 'extra']]) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('usage: fundreturns users');
    }
  });
});

describe('fundreturns accounts requests|approve|decline', () => {
  let bob: Person;
  beforeAll(async () => {
    bob = await signUp('bob-co', 'bob@example.com');
  });

  it('lists a pending request; approving it moves the account to the plan at once, and the audit log has who, what, when', async () => {
    const r = await withStore((s) =>
      requestPlan(s, { account_id: bob.account_id, plan: 'pro', person_id: bob.id }, testNow()),
    );
    const pending = json<Array<Record<string, unknown>>>(['accounts', 'requests']);
    expect(pending).toEqual([
      expect.objectContaining({
        id: r.id,
        account: 'bob-co',
        current_plan: 'free',
        plan: 'pro',
        asked_by: 'bob@example.com',
        decision: null,
      }),
    ]);
    const [header, row] = ok(['accounts', 'requests']).trimEnd().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['ID', 'ACCOUNT', 'PLAN', 'REQUESTED', 'ASKED BY', 'CREATED']);
    expect(row.split(/\s+/).slice(0, 5)).toEqual([r.id, 'bob-co', 'free', 'pro', 'bob@example.com']);

    expect(ok(['accounts', 'approve', r.id])).toBe(
      `approved request ${r.id}: account bob-co: plan free -> pro\n`,
    );
    expect(json<{ plan: string; limits: unknown }>(['accounts', 'show', 'bob-co'])).toMatchObject({
      plan: 'pro',
      limits: { burst: 250, monthly: 2500 },
    });
    const audit = await lastAudit();
    expect(audit).toMatchObject({
      actor: ACTOR,
      action: 'request.approve',
      target: r.id,
      detail: `account bob-co (${bob.account_id}): free -> pro`,
    });
    expect(Math.abs(Date.parse(audit.at) - testNow())).toBeLessThan(60_000);

    // Decided: gone from the pending list, shown with --all.
    const none = run(['accounts', 'requests']);
    expect([none.status, none.stdout, none.stderr]).toEqual([0, '', 'no pending plan requests\n']);
    expect(json<Array<Record<string, unknown>>>(['accounts', 'requests', '--all'])).toEqual([
      expect.objectContaining({ id: r.id, decision: 'approved', decided_by: cliActor().id }),
    ]);
  });

  it('a declined request leaves the plan as it was', async () => {
    const r = await withStore((s) =>
      requestPlan(s, { account_id: bob.account_id, plan: 'business', person_id: bob.id }, testNow()),
    );
    expect(ok(['accounts', 'decline', r.id])).toBe(
      `declined request ${r.id}: account bob-co stays on plan pro (asked for business)\n`,
    );
    expect(json<{ plan: string }>(['accounts', 'show', 'bob-co']).plan).toBe('pro');
    expect(await lastAudit()).toMatchObject({ action: 'request.decline', target: r.id });
  });

  it('deciding twice, or an unknown request, is exit 1 with a clear message', async () => {
    const [decided] = json<Array<{ id: string; decision: string }>>(['accounts', 'requests', '--all']);
    const again = run(['accounts', 'decline', decided.id]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(`^fundreturns: request ${decided.id} was already approved at \\S+ by cli:`),
    );
    const unknown = run(['accounts', 'approve', 'req_000000000000']);
    expect([unknown.status, unknown.stderr]).toEqual([
      1,
      'fundreturns: no plan request with id "req_000000000000"\n',
    ]);
    expect(run(['accounts', 'approve']).status).toBe(2);
  });

  it('accounts set-plan and set-status are audited too', async () => {
    ok(['accounts', 'set-plan', 'bob-co', 'developer']);
    expect(await lastAudit()).toMatchObject({
      actor: ACTOR,
      action: 'account.plan',
      detail: 'bob-co: pro -> developer',
    });
    ok(['accounts', 'set-status', 'bob-co', 'past_due']);
    expect(await lastAudit()).toMatchObject({
      action: 'account.status',
      detail: 'bob-co: active -> past_due',
    });
  });
});

describe('plan requests on Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('a request recorded by one process is listed and approved by the CLI, and every instance sees the new plan and the audit entry', async () => {
    const s = new RedisAccessStore(redis.url);
    await s.connect();
    try {
      const created = await cliAsync([
        'accounts',
        'create',
        'red-co',
        '--plan',
        'free',
        '--json',
        '--store',
        redis.url,
      ]);
      expect(created.status).toBe(0);
      const accountId = (JSON.parse(created.stdout) as { id: string }).id;
      const p = person(accountId, 'red@example.com');
      await s.change({ op: 'person.create', person: p } satisfies AccessChange);
      const r = await requestPlan(s, { account_id: accountId, plan: 'business', person_id: p.id }, testNow());
      const listed = await cliAsync(['accounts', 'requests', '--json', '--store', redis.url]);
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({ id: r.id, asked_by: 'red@example.com' }),
      ]);
      const approved = await cliAsync(['accounts', 'approve', r.id, '--store', redis.url]);
      expect([approved.status, approved.stderr]).toEqual([0, '']);
      const shown = await cliAsync(['accounts', 'show', 'red-co', '--json', '--store', redis.url]);
      expect(JSON.parse(shown.stdout)).toMatchObject({ plan: 'business', owner: 'red@example.com' });
      expect((await s.read()).accounts[0].plan).toBe('business');
      expect(await s.readAudit(5)).toEqual([
        expect.objectContaining({ actor: ACTOR, action: 'request.approve', target: r.id }),
      ]);
      const users = await cliAsync(['users', 'admin', 'red@example.com', '--store', redis.url]);
      expect(users.stdout).toBe('user red@example.com: role user -> admin\n');
      expect((await s.read()).people[0].role).toBe('admin');
    } finally {
      await s.close();
    }
  });
});
