/**
 * The Redis limiter's Lua scripts: gcra.ts's arithmetic in Lua, in the same whole
 * microseconds, run by EVALSHA so that reading, deciding and counting are one atomic
 * step on the server (limiter-redis.ts).
 */

/**
 * Lua: for each of the ARGV[1] entries that follow, four ARGV values each, bind them
 * to `names` (the first a string, the others numbers) and `gk` to the entry's KEYS[i + 1],
 * and run `body`. The loop both scripts below share.
 */
const forEachEntry = (names: readonly [string, string, string, string], body: string): string => `
for i = 1, tonumber(ARGV[1]) do
  local a = 1 + (i - 1) * 4
  local ${names[0]} = ARGV[a + 1]
  local ${names[1]} = tonumber(ARGV[a + 2])
  local ${names[2]} = tonumber(ARGV[a + 3])
  local ${names[3]} = tonumber(ARGV[a + 4])
  local gk = KEYS[i + 1]
${body}
end`;

/**
 * The requests of one event-loop turn, decided in order in one call (see #flush):
 * KEYS[1] = fr:usage:<month> (hash), KEYS[1 + i] = fr:gcra:<account of request i> (TAT in µs).
 * ARGV = n, then per request: account id, now (µs), monthly quota, burst.
 * Returns 3 numbers per request, {code, count, TAT - now in µs}: code 0 admitted, 1 quota
 * exceeded, 2 rate limited; count and TAT are the values after its step. A request sees
 * the steps of those before it in the call (an account asked twice is counted twice).
 */
export const ADMIT_SCRIPT = `
local out = {}
${forEachEntry(
  ['id', 'now', 'monthly', 'burst'],
  `  local t = math.max(1, math.floor(60000000 / burst))
  local count = tonumber(redis.call('HGET', KEYS[1], id) or '0')
  local tat = tonumber(redis.call('GET', gk) or '0')
  if tat < now then tat = now end
  local code = 0
  if count >= monthly then
    code = 1
  elseif tat - now > t * (burst - 1) then
    code = 2
  else
    count = redis.call('HINCRBY', KEYS[1], id, 1)
    tat = tat + t
    redis.call('SET', gk, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
  end
  out[#out + 1] = code
  out[#out + 1] = count
  out[#out + 1] = tat - now`,
)}
return out
`;

/**
 * What a server granted alone during an outage, added to Redis when it answers again:
 * KEYS[1] = fr:usage:<month> (hash), KEYS[1 + i] = fr:gcra:<account i>.
 * ARGV = n, then per account: id, count, burst, at (µs: the last local grant).
 * The count goes into the month's usage; the burst is charged too, as if every one of
 * those requests had come at `at`: the TAT moves to max(TAT, at) + count × interval and
 * never back. That is at least where one shared bucket would have it (each GCRA step
 * adds one interval to max(TAT, now), and no grant came after `at`), so once every
 * server has reconnected the account waits until the burst has paid for them, and the
 * outage cannot hand out a second burst on top of the one the servers gave alone.
 * A count may be negative (a reservation released after its batch was added): only the
 * usage takes it back; the TAT never moves back.
 */
export const RECONCILE_SCRIPT = `
${forEachEntry(
  ['id', 'c', 'burst', 'at'],
  `  redis.call('HINCRBY', KEYS[1], id, c)
  if c > 0 and burst >= 1 then
    local t = math.max(1, math.floor(60000000 / burst))
    local tat = tonumber(redis.call('GET', gk) or '0')
    if tat < at then tat = at end
    tat = tat + c * t
    redis.call('SET', gk, string.format('%.0f', tat), 'PX', math.ceil((tat - at) / 1000))
  end`,
)}
return 0
`;
