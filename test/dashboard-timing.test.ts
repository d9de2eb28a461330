/**
 * Sign-up, sign-in and reset take as long for an address with an account as for one
 * without (docs/dashboard.md, "No enumeration"): for each form, 50 registered and 50
 * unknown addresses in a shuffled order on one running server, each answer timed on
 * the client, and the two sets of times compared by rank (Mann–Whitney U). Not a timed
 * test: no duration is asserted, only that the two populations of one run cannot be
 * told apart (p ≥ 0.001; a real difference, like a hash skipped for one of them,
 * gives p below 1e-10). Each request comes from another loopback address
 * (127.0.0.10…), as an attacker spreading over addresses would, so no per-client
 * throttle interferes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailedLinks, PageClient } from './dashboard-client.js';
import {
  generateAndBuild,
  type ServerProcess,
  setupAccess,
  startServe,
  tempDir,
  waitFor,
} from './harness.js';
import { mannWhitneyU, median } from './rank-test.js';
import { seededRandom } from './seeded-random.js';

const PASSWORD = 'correct horse battery';
const N = 50;
let server: ServerProcess;
let address = 0;
/** A new client address for each request: 127.0.0.10 to 127.0.0.249, round and round. */
const client = () => new PageClient(server.url, `127.0.0.${10 + (address++ % 240)}`);
const known = Array.from({ length: N }, (_, i) => `known${i}.${process.pid}@example.test`);
let unknownN = 0;
const unknown = () => `unknown${unknownN++}.${process.pid}@example.test`;

beforeAll(async () => {
  const dir = tempDir('fr-dashboard-timing-');
  const { snapshots } = generateAndBuild(dir, 20);
  const access = setupAccess(dir);
  server = await startServe([...access.flags, '--snapshots', snapshots, '--threads', '2']);
  for (const email of known) {
    const c = client();
    await c.get('/account/signup');
    expect((await c.post('/account/signup', { email, password: PASSWORD })).status).toBe(200);
  }
  // Registered once the verification link is out (its account is made with it).
  await waitFor(
    () => known.every((e) => mailedLinks(server.logs(), e).length > 0),
    60_000,
    'every registered address mailed',
    server.logs,
  );
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

interface Form {
  readonly path: string;
  readonly fields: (email: string) => Record<string, string>;
  readonly status: number;
}

/** The answer times (ms) of `form` for the registered and the unknown addresses, in one shuffled run. */
async function timeForm(form: Form, seed: number): Promise<{ known: number[]; unknown: number[] }> {
  const rand = seededRandom(seed);
  const order = [
    ...known.map((e) => ({ email: e, known: true })),
    ...known.map(() => ({ email: unknown(), known: false })),
  ];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const out = { known: [] as number[], unknown: [] as number[] };
  for (const { email, known: isKnown } of order) {
    const c = client();
    await c.get(form.path);
    const t = performance.now();
    const r = await c.post(form.path, form.fields(email));
    const ms = performance.now() - t;
    expect(r.status, `${form.path} ${email}: ${r.body}`).toBe(form.status);
    (isKnown ? out.known : out.unknown).push(ms);
    // Whatever an answer left to do after it is done before the next is timed.
    await new Promise((r) => setTimeout(r, 30));
  }
  return out;
}

describe('no enumeration by timing (docs/dashboard.md)', () => {
  it('sign-up, sign-in and reset: 50 registered and 50 unknown addresses each, their answer times indistinguishable by rank (Mann–Whitney U, p ≥ 0.001)', async () => {
    const forms: Record<string, Form> = {
      'sign-up': { path: '/account/signup', fields: (email) => ({ email, password: PASSWORD }), status: 200 },
      'sign-in': {
        path: '/account/login',
        fields: (email) => ({ email, password: 'not the password' }),
        status: 401,
      },
      reset: { path: '/account/forgot', fields: (email) => ({ email }), status: 200 },
    };
    const found: string[] = [];
    const ps: Record<string, number> = {};
    for (const [i, [name, form]] of Object.entries(forms).entries()) {
      const t = await timeForm(form, 27 + i);
      const { p } = mannWhitneyU(t.known, t.unknown);
      ps[name] = p;
      found.push(
        `${name}: median ${median(t.known).toFixed(2)} ms registered, ${median(t.unknown).toFixed(2)} ms unknown, p = ${p.toPrecision(3)}`,
      );
    }
    // The figures, for the record (docs/dashboard.md quotes a run).
    console.log(found.join('\n'));
    for (const [name, p] of Object.entries(ps))
      expect(p, `${name}\n${found.join('\n')}`).toBeGreaterThanOrEqual(0.001);
  }, 300_000);
});
