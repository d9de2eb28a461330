/**
 * The auth and limit path per request (issue 4 target: under 1 µs on one server):
 * AccessGate.admit for a known key (token cache hit) with the shared-memory limiter,
 * against the same call with no gate at all, plus the first sight of a key (hash).
 * Each call gets a freshly made header string, as uWS hands one per request (a
 * string reused across calls keeps its hash and flatters every lookup), and the
 * RateLimit headers are written out as a response would.
 *
 *   npx tsx bench/access.bench.ts
 */
import { Bench } from 'tinybench';
import { AccessGate } from '../server/access/gate.js';
import { generateKey } from '../server/access/keys.js';
import { LocalLimiter } from '../server/access/limiter-local.js';
import { type AccessState, applyChange, EMPTY_STATE } from '../server/access/model.js';
import { buildKeyTable, SlotMap } from '../server/access/table.js';
import { type GateDecision, OPEN_GATE } from '../server/gate.js';
import { HeaderWriter, NO_HEADERS } from '../server/http/headers.js';

const ACCOUNTS = 1000;
let state: AccessState = EMPTY_STATE;
const keys: string[] = [];
for (let a = 0; a < ACCOUNTS; a++) {
  const id = `acct_${a.toString(16).padStart(12, '0')}`;
  state = applyChange(state, {
    op: 'account.create',
    account: { id, name: `a${a}`, plan: 'business', status: 'active', created_at: new Date().toISOString() },
  });
  const k = generateKey();
  keys.push(k.key);
  state = applyChange(state, {
    op: 'key.create',
    key: {
      id: k.id,
      account_id: id,
      prefix: k.prefix,
      hash: k.hash,
      created_at: new Date().toISOString(),
      revoked_at: null,
      expires_at: null,
    },
  });
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
const headerBytes = keys.map((k) => Buffer.from(`Bearer ${k}`, 'latin1'));
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
  .add('gate: first sight of a key (SHA-256)', () => {
    gate.setTable(table);
    sink += use(gate.admit(header(n++ % ACCOUNTS)));
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
