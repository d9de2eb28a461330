/**
 * Backup and restore of the Redis store (store-redis.ts, limiter-redis.ts): every
 * `fr:` key but the sessions and tokens (`fr:secret:*`) and the sign-in attempt
 * throttles (`fr:throttle:*`): the access log and its version, the plans, each month's usage,
 * each account's burst bucket (`fr:gcra:*`), the per-key daily counts and the audit list.
 *
 * The access log and its version are read in one MULTI, so they always agree (the
 * restored servers replay exactly the changes the version counts). Every other key is
 * read with its time to live in MULTIs of a hundred keys, after a SCAN lists them:
 * each count is whole and of one moment within the dump's time, and Redis is never
 * held by the dump for longer than one such read (the servers' admits, which give up
 * on Redis after 50 ms, go on meanwhile). The dump is written as JSON lines
 * (`redis.jsonl`, one key a line: key, type, milliseconds to live or -1, value),
 * readable and independent of the Redis version, unlike DUMP's payloads.
 *
 * A restore loads the keys in one MULTI (all or nothing), after deleting the `fr:`
 * keys there, sessions included (the attempt counters stay). It is refused while a
 * server is subscribed to the store's changes (a server runs on it), and into a Redis
 * that holds a store unless forced.
 */
import {
  type BackupCounts,
  type BackupManifest,
  BackupStage,
  countDifferences,
  countsOf,
  readBackup,
  storeCounts,
} from './backup.js';
import { applyChange } from './changes.js';
import { type AccessChange, type DailyCount, EMPTY_STATE } from './model.js';
import { redactUrl } from './redact-url.js';
import { makeClient, withDeadline } from './redis-client.js';
import {
  AUDIT_KEY,
  CHANGED_CHANNEL,
  dailyFromFields,
  LOG_KEY,
  PLANS_KEY,
  VERSION_KEY,
} from './redis-keys.js';
import { RedisAccessStore } from './store-redis.js';

export const REDIS_BACKUP_FILE = 'redis.jsonl';
/** Not backed up: sessions and tokens, sign-in attempt counters. */
const TRANSIENT = ['fr:secret:', 'fr:throttle:'] as const;
/** Left as they are by a restore, which deletes every other `fr:` key: the attempt counters stay in force. */
const KEPT = ['fr:throttle:'] as const;
/** Items per command when a restore writes a long list or hash. */
const CHUNK = 1000;
/** A dump or a restore of a large store may take a while; Redis answers nothing else meanwhile. */
const LONG_CALL_MS = 120_000;

/** Keys read in one MULTI by a dump. */
const BATCH = 100;

type KeyType = 'string' | 'list' | 'hash' | 'set' | 'zset';

/** One key as the backup keeps it; a hash's and a sorted set's entries as pairs. */
export interface DumpedKey {
  readonly key: string;
  readonly type: KeyType;
  /** Milliseconds it had to live, or -1 for none. */
  readonly pttl: number;
  readonly value: string | string[] | Array<[string, string]>;
}

function pairs(flat: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** The command that reads a key of `type` whole. */
function readCommand(type: KeyType, key: string): string[] {
  switch (type) {
    case 'string':
      return ['GET', key];
    case 'list':
      return ['LRANGE', key, '0', '-1'];
    case 'hash':
      return ['HGETALL', key];
    case 'set':
      return ['SMEMBERS', key];
    case 'zset':
      return ['ZRANGE', key, '0', '-1', 'WITHSCORES'];
  }
}

const KEY_TYPES: readonly string[] = ['string', 'list', 'hash', 'set', 'zset'];

/** A read's reply as a backup keeps it (a hash's reply may come as a flat list or an object). */
function keptValue(type: KeyType, reply: unknown): DumpedKey['value'] {
  if (type === 'string') return String(reply);
  const flat = Array.isArray(reply)
    ? reply.map(String)
    : Object.entries(reply as Record<string, unknown>)
        .flat()
        .map(String);
  return type === 'hash' || type === 'zset' ? pairs(flat) : flat;
}

/** Every `fr:` key but those starting with one of `skip`, sorted (SCAN: Redis answers others meanwhile). */
async function scanKeys(client: Client, skip: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  let cursor = '0';
  do {
    const r = (await client.sendCommand(['SCAN', cursor, 'MATCH', 'fr:*', 'COUNT', '1000'])) as [
      string,
      string[],
    ];
    cursor = String(r[0]);
    for (const k of r[1]) if (!skip.some((p) => k.startsWith(p))) out.add(k);
  } while (cursor !== '0');
  return [...out].sort();
}

/**
 * Every `fr:` key but the transient ones, sorted: the log and its version in one MULTI,
 * the others BATCH to a MULTI, each with its time to live. A key gone between the
 * listing and its read (a burst bucket expiring) is left out.
 */
async function dumpKeys(client: Client): Promise<DumpedKey[]> {
  const names = await scanKeys(client, TRANSIENT);
  const out: DumpedKey[] = [];
  const [version, log] = (await client
    .multi()
    .addCommand(['GET', VERSION_KEY])
    .addCommand(['LRANGE', LOG_KEY, '0', '-1'])
    .exec()) as unknown as [string | null, string[]];
  if (version !== null) out.push({ key: VERSION_KEY, type: 'string', pttl: -1, value: String(version) });
  if (log.length > 0) out.push({ key: LOG_KEY, type: 'list', pttl: -1, value: log.map(String) });
  const rest = [...names].filter((k) => k !== VERSION_KEY && k !== LOG_KEY);
  for (let i = 0; i < rest.length; i += BATCH) {
    const batch = rest.slice(i, i + BATCH);
    const types = (await Promise.all(batch.map((k) => client.sendCommand(['TYPE', k])))).map(String);
    const kept = batch
      .map((key, j) => ({ key, type: types[j] }))
      .filter(({ key, type }) => {
        if (type === 'none') return false;
        if (!KEY_TYPES.includes(type))
          throw new Error(`Redis key ${key} is a ${type}: not a key fundreturns writes, and not backed up`);
        return true;
      }) as Array<{ key: string; type: KeyType }>;
    if (kept.length === 0) continue;
    const multi = client.multi();
    for (const { key, type } of kept) multi.addCommand(readCommand(type, key)).addCommand(['PTTL', key]);
    const replies = (await multi.exec()) as unknown[];
    kept.forEach(({ key, type }, j) => {
      const pttl = Number(replies[2 * j + 1]);
      // -2: gone since the listing.
      if (pttl !== -2) out.push({ key, type, pttl, value: keptValue(type, replies[2 * j]) });
    });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A backup line's key, or an error naming the line. */
function parseLine(line: string, n: number): DumpedKey {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new Error(`${REDIS_BACKUP_FILE}:${n}: not valid JSON`);
  }
  if (typeof v !== 'object' || v === null)
    throw new Error(`${REDIS_BACKUP_FILE}:${n}: not a key of a fundreturns store`);
  const k = v as DumpedKey;
  const okValue =
    k.type === 'string'
      ? typeof k.value === 'string'
      : k.type === 'list' || k.type === 'set'
        ? Array.isArray(k.value) && k.value.every((x) => typeof x === 'string')
        : (k.type === 'hash' || k.type === 'zset') &&
          Array.isArray(k.value) &&
          k.value.every((p) => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === 'string'));
  if (
    typeof k.key !== 'string' ||
    !k.key.startsWith('fr:') ||
    TRANSIENT.some((p) => k.key.startsWith(p)) ||
    !Number.isSafeInteger(k.pttl) ||
    !okValue
  )
    throw new Error(`${REDIS_BACKUP_FILE}:${n}: not a key of a fundreturns store`);
  return k;
}

/** What the dumped keys hold, as the store would read it. */
function dumpCounts(keys: readonly DumpedKey[]): BackupCounts {
  const byKey = new Map(keys.map((k) => [k.key, k]));
  const log = byKey.get(LOG_KEY);
  const entries = log === undefined ? [] : (log.value as string[]);
  const version = Number(byKey.get(VERSION_KEY)?.value ?? 0);
  if (version !== entries.length)
    throw new Error(
      `${VERSION_KEY} is ${version} but ${LOG_KEY} holds ${entries.length} changes: not one instant`,
    );
  let state = EMPTY_STATE;
  for (const e of entries) state = applyChange(state, JSON.parse(e) as AccessChange);
  const usage = new Map<string, Map<string, number>>();
  const daily = new Map<string, Map<string, DailyCount>>();
  for (const k of keys) {
    const u = /^fr:usage:(\d{4}-\d{2})$/.exec(k.key);
    if (u !== null)
      usage.set(u[1], new Map((k.value as Array<[string, string]>).map(([a, n]) => [a, Number(n)])));
    const d = /^fr:daily:(\d{4}-\d{2}-\d{2})$/.exec(k.key);
    if (d !== null) {
      const counts = dailyFromFields(k.value as Array<[string, string]>);
      if (counts.size > 0) daily.set(d[1], counts);
    }
  }
  const audit = byKey.get(AUDIT_KEY);
  return countsOf(state, usage, daily, audit === undefined ? 0 : (audit.value as string[]).length);
}

type Client = ReturnType<typeof makeClient>;

async function connect(url: string): Promise<Client> {
  const client = makeClient(url);
  client.on('error', () => {});
  try {
    await withDeadline(client.connect(), 5000, () => client.destroy(), `Redis at ${redactUrl(url)}`);
  } catch (e) {
    if (client.isOpen) client.destroy();
    throw new Error(`cannot connect to the store at ${redactUrl(url)}: ${(e as Error).message}`);
  }
  return client;
}

async function close(client: Client): Promise<void> {
  if (client.isReady) await client.close();
  else if (client.isOpen) client.destroy();
}

/** Back up the Redis store at `url` into the new directory `dest`. */
export async function backupRedisStore(url: string, dest: string): Promise<BackupManifest> {
  const stage = await BackupStage.create(dest);
  try {
    const client = await connect(url);
    let keys: DumpedKey[];
    try {
      keys = await dumpKeys(client);
    } finally {
      await close(client);
    }
    if (!keys.some((k) => k.key === LOG_KEY || k.key === VERSION_KEY))
      throw new Error(`no store at ${redactUrl(url)} (no ${LOG_KEY}): nothing to back up`);
    const counts = dumpCounts(keys);
    await stage.add(REDIS_BACKUP_FILE, keys.map((k) => `${JSON.stringify(k)}\n`).join(''));
    return await stage.commit({ store: 'redis', from: redactUrl(url), ...counts });
  } catch (e) {
    await stage.discard();
    throw e;
  }
}

/** The commands that make `k` again (after a DEL), in chunks, then its time to live. */
function writeCommands(k: DumpedKey): string[][] {
  const cmds: string[][] = [];
  const chunked = (verb: string, items: string[], per: number) => {
    for (let i = 0; i < items.length; i += CHUNK * per)
      cmds.push([verb, k.key, ...items.slice(i, i + CHUNK * per)]);
  };
  switch (k.type) {
    case 'string':
      cmds.push(['SET', k.key, k.value as string]);
      break;
    case 'list':
      chunked('RPUSH', k.value as string[], 1);
      break;
    case 'set':
      chunked('SADD', k.value as string[], 1);
      break;
    case 'hash':
      chunked('HSET', (k.value as Array<[string, string]>).flat(), 2);
      break;
    case 'zset':
      chunked(
        'ZADD',
        (k.value as Array<[string, string]>).flatMap(([m, score]) => [score, m]),
        2,
      );
      break;
  }
  if (k.pttl > 0) cmds.push(['PEXPIRE', k.key, String(k.pttl)]);
  return cmds;
}

/**
 * Restore the backup in `backupDir` into the Redis at `url`. Refused while a server is
 * subscribed to the store's changes, and, unless `force`, when the Redis holds a store.
 */
export async function restoreRedisStore(
  backupDir: string,
  url: string,
  opts: { force: boolean },
): Promise<{ manifest: BackupManifest; replaced: number }> {
  const { manifest, files } = await readBackup(backupDir, 'redis');
  const text = files.get(REDIS_BACKUP_FILE);
  if (text === undefined)
    throw new Error(`${backupDir} has no ${REDIS_BACKUP_FILE}: not a backup of a Redis store`);
  const keys = text
    .toString('utf8')
    .split('\n')
    .map((line, i) => (line === '' ? null : parseLine(line, i + 1)))
    .filter((k): k is DumpedKey => k !== null);
  const problems = countDifferences(manifest, dumpCounts(keys));
  if (problems.length > 0)
    throw new Error(`${backupDir} does not read as it was backed up: ${problems.join('; ')}`);

  const where = redactUrl(url);
  const client = await connect(url);
  let replaced: string[];
  try {
    const [, subscribers] = (await client.sendCommand(['PUBSUB', 'NUMSUB', CHANGED_CHANNEL])) as [
      string,
      number,
    ];
    if (Number(subscribers) > 0)
      throw new Error(
        `${subscribers} server connection(s) follow the store at ${where} (subscribed to ${CHANGED_CHANNEL}): ` +
          'stop every server on it before restoring',
      );
    replaced = await scanKeys(client, KEPT);
    // A server that started once records its plans: that alone is not a store.
    const held = replaced.filter((k) => k !== PLANS_KEY);
    if (held.length > 0 && !opts.force)
      throw new Error(
        `the Redis at ${where} holds a store already (${held.length} fr: keys, e.g. ${held.slice(0, 3).join(', ')}): ` +
          'a restore replaces them all. Add --force to restore anyway (take a backup of it first)',
      );
    const multi = client.multi();
    for (let i = 0; i < replaced.length; i += CHUNK)
      multi.addCommand(['DEL', ...replaced.slice(i, i + CHUNK)]);
    for (const k of keys) for (const cmd of writeCommands(k)) multi.addCommand(cmd);
    await withDeadline(multi.exec(), LONG_CALL_MS, () => client.destroy(), `Redis at ${where}`);
  } finally {
    await close(client);
  }
  const store = new RedisAccessStore(url, { timeoutMs: LONG_CALL_MS });
  try {
    await store.connect();
    const restored = countDifferences(manifest, await storeCounts(store, manifest));
    if (restored.length > 0)
      throw new Error(`the restored store at ${where} differs from the backup: ${restored.join('; ')}`);
  } finally {
    await store.close();
  }
  return { manifest, replaced: replaced.length };
}
