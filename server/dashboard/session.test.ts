import { describe, expect, it } from 'vitest';
import type { AccessState, Person } from '../../accounts/model.js';
import { FileAccessStore } from '../../accounts/store-file.js';
import { scratch } from '../../builder/build.test-helper.js';
import { ABSOLUTE_MS, IDLE_MS, Sessions, secretId, sessionCookieName } from './session.js';

const dir = scratch('fr-session-');
let made = 0;
const T0 = Date.UTC(2026, 10, 23, 15);

function person(over: Partial<Person> = {}): Person {
  return {
    id: 'user_000000000001',
    email: 'a@example.test',
    account_id: 'acct_000000000001',
    password_hash: 'scrypt$x',
    password_at: new Date(T0 - 1000).toISOString(),
    role: 'user',
    status: 'active',
    verified_at: null,
    created_at: new Date(T0 - 1000).toISOString(),
    ...over,
  };
}

const stateWith = (p: Person): AccessState => ({
  version: 1,
  accounts: [],
  keys: [],
  people: [p],
  requests: [],
});

async function setup() {
  const store = await FileAccessStore.open(dir(String(made++)));
  let t = T0;
  const sessions = new Sessions(store, { secure: false }, () => t);
  return { store, sessions, advance: (ms: number) => (t += ms) };
}

function cookieOf(setCookie: string): Map<string, string> {
  const [pair] = setCookie.split(';');
  const eq = pair.indexOf('=');
  return new Map([[pair.slice(0, eq), pair.slice(eq + 1)]]);
}

describe('dashboard sessions', () => {
  it('the store holds only the SHA-256 of the cookie, never the id itself', async () => {
    const { store, sessions } = await setup();
    const p = person();
    const begun = await sessions.begin(p, undefined);
    const id = cookieOf(begun.setCookie).get(sessionCookieName({ secure: false })) as string;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await store.getSecret('session', id)).toBeNull();
    expect(await store.getSecret('session', secretId(id))).not.toBeNull();
    await store.close();
  });

  it(`ends after ${IDLE_MS / 3_600_000} h unused, but not while used, and after ${ABSOLUTE_MS / 3_600_000} h however used`, async () => {
    const { store, sessions, advance } = await setup();
    const p = person();
    const s = stateWith(p);
    const c = cookieOf((await sessions.begin(p, undefined)).setCookie);
    // Used every hour: alive until the absolute limit.
    for (let h = 1; h < ABSOLUTE_MS / 3_600_000; h++) {
      advance(3_600_000);
      expect(await sessions.current(c, s), `hour ${h}`).not.toBeNull();
    }
    advance(3_600_000);
    expect(await sessions.current(c, s)).toBeNull();

    const idle = cookieOf((await sessions.begin(p, undefined)).setCookie);
    advance(IDLE_MS - 1000);
    expect(await sessions.current(idle, s)).not.toBeNull();
    advance(IDLE_MS);
    expect(await sessions.current(idle, s)).toBeNull();
    await store.close();
  });

  it('a session begun before the password was set, or of a disabled person, is ended', async () => {
    const { store, sessions, advance } = await setup();
    const p = person();
    const c = cookieOf((await sessions.begin(p, undefined)).setCookie);
    advance(1000);
    expect(await sessions.current(c, stateWith(p))).not.toBeNull();
    const changed = { ...p, password_at: new Date(T0 + 500).toISOString() };
    expect(await sessions.current(c, stateWith(changed))).toBeNull();
    const d = cookieOf((await sessions.begin(p, undefined)).setCookie);
    expect(await sessions.current(d, stateWith({ ...p, status: 'disabled' }))).toBeNull();
    await store.close();
  });

  it('a role change issues a new id and ends the old one', async () => {
    const { store, sessions } = await setup();
    const p = person();
    const c = cookieOf((await sessions.begin(p, undefined)).setCookie);
    const renewed = await sessions.current(c, stateWith({ ...p, role: 'admin' }));
    expect(renewed?.setCookie).toBeTruthy();
    expect(await sessions.current(c, stateWith({ ...p, role: 'admin' }))).toBeNull();
    const next = cookieOf(renewed?.setCookie as string);
    expect(await sessions.current(next, stateWith({ ...p, role: 'admin' }))).not.toBeNull();
    await store.close();
  });
});
