/**
 * The auth and limit path per request (target: under 1 µs on one server):
 * AccessGate.admit for a known key (token cache hit) with the shared-memory limiter,
 * against the same call with no gate at all, plus a key the token cache does not
 * hold (hash), and the limiter under two threads at once.
 * Each call gets a freshly made header string, as uWS hands one per request (a
 * string reused across calls keeps its hash and flatters every lookup), and the
 * RateLimit headers are written out as a response would.
 *
 *   npx tsx bench/access.bench.ts
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Bench } from 'tinybench';
import { applyChange } from '../accounts/changes.js';
import { generateKey } from '../accounts/keys.js';
import { type AccessState, EMPTY_STATE } from '../accounts/model.js';
import { KeyCounts, newKeyCountBuffer } from '../server/access/key-counts.js';
import { AccessGate } from '../server/access/key-gate.js';
import { type LimiterShared, LocalLimiter } from '../server/access/limiter-local.js';
import { buildKeyTable, SlotMap } from '../server/access/table.js';
import { type GateDecision, OPEN_GATE } from '../server/http/gate.js';
import { HeaderWriter, NO_HEADERS } from '../server/http/headers.js';

/** Calls each thread makes in the contention case. */
const CONTENTION_CALLS = 2_000_000;

if (!isMainThread) {
  // A worker of the contention case below: admit on one slot, report ns per call.
  const { shared, slot } = workerData as { shared: LimiterShared; slot: number };
  const limiter = new LocalLimiter(shared);
  const account = { id: 'acct', slot };
  const limits = { burst: 1e9, monthly: 1e9 };
  let left = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) left += limiter.admit(account, limits, Date.now()).quotaRemaining;
  };
  run(200_000);
  const t = process.hrtime.bigint();
  run(CONTENTION_CALLS);
  parentPort!.postMessage(Number(process.hrtime.bigint() - t) / CONTENTION_CALLS + (left < 0 ? 1 : 0));
  process.exit(0);
}

/** Accounts with one key each; and one account with more keys than a thread's token cache holds. */
const ACCOUNTS = 1000;
const COLD_KEYS = 20_000;
let state: AccessState = EMPTY_STATE;
const keys: string[] = [];
const coldKeys: string[] = [];
const addKey = (accountId: string): string => {
  const k = generateKey();
  state = applyChange(state, {
    op: 'key.create',
    key: {
      id: k.id,
      account_id: accountId,
      prefix: k.prefix,
      hash: k.hash,
      created_at: new Date().toISOString(),
      revoked_at: null,
      expires_at: null,
    },
  });
  return k.key;
};
for (let a = 0; a <= ACCOUNTS; a++) {
  const id = `acct_${a.toString(16).padStart(12, '0')}`;
  state = applyChange(state, {
    op: 'account.create',
    account: { id, name: `a${a}`, plan: 'business', status: 'active', created_at: new Date().toISOString() },
  });
  if (a < ACCOUNTS) keys.push(addKey(id));
  else for (let k = 0; k < COLD_KEYS; k++) coldKeys.push(addKey(id));
}
const { limiter } = LocalLimiter.create();
const slots = new SlotMap(limiter.slots);
// Limits no benchmark loop reaches, so every call is an admitted one (still
// numbers of a real plan's size class: small integers, as C26's are).
const table = buildKeyTable(state, slots, {
  free: { burst: 1e9, monthly: 1e9 },
  developer: { burst: 1e9, monthly: 1e9 },
  pro: { burst: 1e9, monthly: 1e9 },
  business: { burst: 1e9, monthly: 1e9 },
});
const gate = new AccessGate('http://127.0.0.1:8080', limiter);
gate.setTable(table);
// The same, counting each request per key as a server's threads do (the daily chart).
const counting = new AccessGate(
  'http://127.0.0.1:8080',
  limiter,
  undefined,
  null,
  new KeyCounts(newKeyCountBuffer()),
);
counting.setTable(table);
const headerBytes = keys.map((k) => Buffer.from(`Bearer ${k}`, 'latin1'));
const coldHeaderBytes = coldKeys.map((k) => Buffer.from(`Bearer ${k}`, 'latin1'));
/** A new string each call, like uWS's getHeader. */
const header = (i: number) => headerBytes[i].toString('latin1');
const writer = new HeaderWriter();
/** What a response does with an admitted decision: write its headers. */
const use = (d: GateDecision | Promise<GateDecision>) => {
  if (d instanceof Promise || !d.ok) return 0;
  d.headers?.writeHeaders(writer.start(NO_HEADERS));
  return writer.view().length;
};
let n = 0;
let sink = 0;

const bench = new Bench({ time: 1000 });
bench
  .add('no gate (OPEN_GATE)', () => {
    sink += use(OPEN_GATE.admit(header(n++ % ACCOUNTS)));
  })
  .add('gate: known key (cache hit) + burst + quota + headers', () => {
    sink += use(gate.admit(header(n++ % ACCOUNTS)));
  })
  .add('gate: the same, counted per key (daily counts)', () => {
    sink += use(counting.admit(header(n++ % ACCOUNTS)));
  })
  .add('gate: key not in the token cache (SHA-256)', () => {
    // Cycling through twice the cache's size: every call misses it.
    sink += use(gate.admit(coldHeaderBytes[n++ % COLD_KEYS].toString('latin1')));
  })
  .add('gate: unknown key (401)', () => {
    const d = gate.admit('Bearer fr_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    sink += d instanceof Promise ? 0 : d.ok ? 1 : 0;
  });
await bench.run();
console.log(`${'case'.padEnd(48)}${'ops/s'.padStart(14)}${'mean µs'.padStart(10)}${'p99 µs'.padStart(10)}`);
for (const task of bench.tasks) {
  const r = task.result;
  if (r.state !== 'completed') continue;
  console.log(
    `${task.name.padEnd(48)}${Math.round(r.throughput.mean).toLocaleString('en-US').padStart(14)}` +
      `${(r.latency.mean * 1000).toFixed(3).padStart(10)}${(r.latency.p99 * 1000).toFixed(3).padStart(10)}`,
  );
}
if (sink < 0) console.log(sink);

/**
 * The limiter with two threads admitting at once, on one account (a client whose
 * connections both server threads serve) and on two: the shared slot's cache
 * line moves between the cores on every call.
 */
async function contention(sameSlot: boolean): Promise<number[]> {
  const { shared } = LocalLimiter.create(64);
  const url = new URL(import.meta.url);
  const workers = [0, 1].map(
    (k) =>
      new Worker(
        `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`,
        { eval: true, workerData: { shared, slot: sameSlot ? 5 : 5 + 16 * k } },
      ),
  );
  return Promise.all(workers.map((w) => new Promise<number>((resolve) => w.once('message', resolve))));
}
for (const sameSlot of [true, false]) {
  const ns = await contention(sameSlot);
  console.log(
    `limiter, two threads admitting on ${sameSlot ? 'one account ' : 'two accounts'}: ${ns.map((x) => `${x.toFixed(0)} ns`).join(', ')} per call`,
  );
}
