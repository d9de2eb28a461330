/**
 * `fundreturns store backup` and `store restore` on a store of a production's size,
 * for the embedded store and for Redis: how long each takes, how large the backup
 * is, and how long Redis is busy with the dump's longest command and with all of them
 * (SLOWLOG), the figures docs/access.md ("Backups") quotes.
 *
 *   npm run build && npx tsx bench/store-backup.bench.ts [--accounts 5000] [--days 400] [--day-keys 250]
 *     [--dir /tmp/fr-bench-store-backup]
 *
 * The store: ACCOUNTS accounts with two keys each (three changes per account in the
 * access log), this month's count of every account, per-key daily counts of DAY_KEYS
 * keys on each of DAYS days, 1,000 audit entries; in Redis also a burst bucket per
 * account. Each command runs five times; the medians are reported.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { addDays } from '../accounts/daily-usage.js';
import type { AccessChange, AccessStore, DailyCount } from '../accounts/model.js';
import { usageKey } from '../accounts/redis-keys.js';
import { startRedis } from '../accounts/redis-server.test-helper.js';
import { account, key } from '../accounts/store.contract.js';
import { FileAccessStore } from '../accounts/store-file.js';
import { RedisAccessStore } from '../accounts/store-redis.js';
import { gcraKey } from '../server/access/limiter-redis.js';
import { benchArgs } from './setup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'fundreturns.js');
const args = benchArgs();
const ACCOUNTS = Number(args.get('accounts') ?? 5000);
const DAYS = Number(args.get('days') ?? 400);
/** Keys with requests on each day. */
const DAY_KEYS = Number(args.get('day-keys') ?? 250);
const dir = args.get('dir') ?? '/tmp/fr-bench-store-backup';
const RUNS = 5;
/** Which stores to measure: file, redis or both. */
const STORES = (args.get('stores') ?? 'file,redis').split(',');
const MONTH = '2026-11';
const LAST_DAY = '2026-11-23';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Fill a store: accounts and keys, usage, daily counts, audit. Returns the number of daily entries. */
async function fill(
  store: AccessStore,
  setUsage: (counts: Map<string, number>) => Promise<void>,
): Promise<number> {
  const keyIds: string[] = [];
  const usage = new Map<string, number>();
  for (let i = 0; i < ACCOUNTS; i++) {
    const a = account(`acct-${i}`, 'pro');
    const changes: AccessChange[] = [{ op: 'account.create', account: a }];
    for (let k = 0; k < 2; k++) {
      const rec = key(a.id);
      keyIds.push(rec.id);
      changes.push({ op: 'key.create', key: rec });
    }
    for (const c of changes) await store.change(c);
    usage.set(a.id, 1 + (i % 2500));
  }
  await setUsage(usage);
  const daily = new Map<string, Map<string, DailyCount>>();
  let entries = 0;
  for (let d = 0; d < DAYS; d++) {
    const day = addDays(LAST_DAY, -d);
    const keys = new Map<string, DailyCount>();
    for (let j = 0; j < DAY_KEYS; j++) {
      const k = (d * DAY_KEYS + j) % keyIds.length;
      keys.set(keyIds[k], [10 + (k % 90), k % 3]);
    }
    entries += keys.size;
    daily.set(day, keys);
  }
  await store.addDaily(daily);
  for (let i = 0; i < 1000; i++)
    await store.audit({
      at: '2026-11-23T10:00:00.000Z',
      actor: 'cli:bench',
      action: 'account.plan',
      target: `acct_${i}`,
      detail: 'pro',
    });
  return entries;
}

/** `fundreturns ARGS` wall time in ms (node start included), failing on a non-zero exit. */
function timedCli(cliArgs: string[]): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [cli, ...cliArgs], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fundreturns ${cliArgs.join(' ')}: ${r.stderr}`);
  return performance.now() - t;
}

/** What `store backup --json` reports: its own time (after start-up) and the backup's bytes. */
function backupRun(store: string, dest: string): { wall: number; ms: number; bytes: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [cli, 'store', 'backup', dest, '--json', '--store', store], {
    encoding: 'utf8',
  });
  const wall = performance.now() - t;
  if (r.status !== 0) throw new Error(r.stderr);
  const m = JSON.parse(r.stdout) as { ms: number; files: Record<string, { bytes: number }> };
  return { wall, ms: m.ms, bytes: Object.values(m.files).reduce((s, f) => s + f.bytes, 0) };
}

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const rows: string[] = [];
const report = (what: string, runs: Array<{ wall: number; ms: number; bytes: number }>, restore: number[]) =>
  rows.push(
    `| ${what} | ${median(runs.map((r) => r.ms)).toFixed(0)} ms | ${median(runs.map((r) => r.wall)).toFixed(0)} ms | ` +
      `${(runs[0].bytes / 2 ** 20).toFixed(1)} MiB | ${median(restore).toFixed(0)} ms |`,
  );

let entries = 0;
let t = performance.now();
if (STORES.includes('file')) {
  const storeDir = join(dir, 'store');
  const fileStore = await FileAccessStore.open(storeDir, { compactAfterLines: 1_000_000 });
  entries = await fill(fileStore, (u) => fileStore.writeUsage(MONTH, u));
  await fileStore.compact();
  await fileStore.close();
  console.error(`embedded store filled in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const fileRuns = Array.from({ length: RUNS }, (_, i) => backupRun(storeDir, join(dir, `file-b${i}`)));
  const fileRestore = Array.from({ length: RUNS }, (_, i) =>
    timedCli(['store', 'restore', join(dir, 'file-b0'), '--store', join(dir, `file-r${i}`)]),
  );
  report('embedded store', fileRuns, fileRestore);
}

if (STORES.includes('redis')) {
  const source = await startRedis();
  const target = await startRedis();
  try {
    // A long timeout: a loaded machine must not fail the filling.
    const redisStore = new RedisAccessStore(source.url, { timeoutMs: 60_000 });
    await redisStore.connect();
    const c = createClient({ url: source.url });
    c.on('error', (e) => console.error(`bench client: ${e}`));
    await c.connect();
    t = performance.now();
    entries = await fill(redisStore, async (u) => {
      await c.hSet(usageKey(MONTH), Object.fromEntries([...u].map(([id, n]) => [id, String(n)])));
      for (const id of u.keys()) await c.set(gcraKey(id), '1', { PX: 60_000 });
    });
    await redisStore.close();
    console.error(`Redis store filled in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    // Every command the dump sends, with its time in Redis (SLOWLOG at 0 µs): the longest
    // is the longest Redis answers nothing else, the sum its whole work.
    await c.configSet({ 'slowlog-log-slower-than': '0', 'slowlog-max-len': '1000000' });
    const longest: number[] = [];
    const total: number[] = [];
    const redisRuns = [];
    for (let i = 0; i < RUNS; i++) {
      await c.sendCommand(['SLOWLOG', 'RESET']);
      redisRuns.push(backupRun(source.url, join(dir, `redis-b${i}`)));
      const log = (await c.sendCommand(['SLOWLOG', 'GET', '1000000'])) as Array<
        [number, number, number, string[]]
      >;
      const us = log
        .filter((e) => !String(e[3]?.[0]).toUpperCase().startsWith('SLOWLOG'))
        .map((e) => Number(e[2]));
      longest.push(Math.max(...us));
      total.push(us.reduce((a, b) => a + b, 0));
    }
    await c.configSet({ 'slowlog-log-slower-than': '10000' });
    await c.close();
    const target2 = createClient({ url: target.url });
    target2.on('error', (e) => console.error(`bench client: ${e}`));
    await target2.connect();
    const redisRestore: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await target2.flushAll();
      redisRestore.push(timedCli(['store', 'restore', join(dir, 'redis-b0'), '--store', target.url]));
    }
    await target2.close();
    report('Redis', redisRuns, redisRestore);
    rows.push(
      `\nRedis's time on the dump (SLOWLOG): the longest single command ${(median(longest) / 1000).toFixed(1)} ms ` +
        `(the log and its version, one MULTI), all its commands ${(median(total) / 1000).toFixed(1)} ms (medians of ${RUNS}).`,
    );
  } finally {
    await Promise.all([source.stop(), target.stop()]);
  }
}

console.log(
  [
    `Store: ${ACCOUNTS} accounts, ${ACCOUNTS * 2} keys (${ACCOUNTS * 3} changes), this month's count of each, ` +
      `${entries} per-key daily counts over ${DAYS} days, 1,000 audit entries.`,
    '',
    '| store | backup (its own time) | backup (wall, node start included) | size | restore (wall) |',
    '| ----- | --------------------- | ---------------------------------- | ---- | -------------- |',
    ...rows,
  ].join('\n'),
);
