import { raw2NextJobData } from 'bullmq';

/**
 * BullMQ's own `moveToActive` script, as the installed BullMQ ships it: the take-ahead runs exactly the script a
 * fetch runs, so it follows BullMQ upgrades instead of copying its logic. Undefined when this BullMQ no longer ships
 * it under that name: the worker then fetches the plain way rather than fail to start.
 */
const moveToActive = ((): { content: string; keys: number } | undefined => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('bullmq/dist/cjs/scripts/moveToActive-11') as { moveToActive?: { content: string; keys: number } })
      .moveToActive;
  } catch {
    return undefined;
  }
})();

/**
 * The script a take-ahead sends: BullMQ's `moveToActive` with its two client-side arguments made server-side, because
 * the command waits in Redis behind a blocking wait and runs seconds after it was written:
 * - ARGV[2], "now", becomes Redis's clock when the script runs (it stamps `processedOn` and decides which delayed jobs
 *   are due); written by the client it would be as old as the wait;
 * - ARGV[3], the options BullMQ packs with msgpack, is packed here from the token and lock duration, so the worker
 *   needs no msgpack encoder of its own. No limiter: the invocations queue has none.
 * After it, the queue's base marker ("jobs waiting": member "0" of KEYS[11]) is removed when nothing is left waiting
 * (KEYS[1] wait, KEYS[3] prioritized). BullMQ re-adds it on every take so that another worker looks for more; left
 * behind with nothing to take, it would wake the next blocking wait at once for nothing. A job added later writes it
 * again; delayed jobs keep their own member.
 *
 * A take is idempotent by its token, because its answer can be lost after it ran: the connection drops between the
 * two, and ioredis then sends the unanswered take again on the new connection (or rejects it, when the connection was
 * closed on purpose). So each take records `<token> <job id>` under its worker's key (ARGV[5], `takeRecordKey`), for as
 * long as the lock lasts: a worker has one take in flight at a time, so one key per worker holds the only take
 * whose answer can be missing. A take sent again with the recorded token answers with the same job, while the lock is
 * still its own, instead of locking a second one and leaving the first locked with nobody to run it until the lock
 * lapsed. A worker whose take was rejected reads the record to hand that job back (`handBackWhenTaken`).
 */
export const TAKE_AHEAD_SCRIPT = `local __token = ARGV[3]
local __record = ARGV[5]
local __earlier = redis.call('GET', __record)
if __earlier then
  local __space = string.find(__earlier, ' ', 1, true)
  if __space and string.sub(__earlier, 1, __space - 1) == __token then
    local __id = string.sub(__earlier, __space + 1)
    local __jobKey = ARGV[1] .. __id
    if redis.call('GET', __jobKey .. ':lock') == __token then
      return {redis.call('HGETALL', __jobKey), __id, 0, 0}
    end
    return {0, 0, 0, 0}
  end
end
local __now = redis.call('TIME')
ARGV[2] = __now[1] .. string.format('%03d', math.floor(tonumber(__now[2]) / 1000))
ARGV[3] = cmsgpack.pack({token = __token, lockDuration = tonumber(ARGV[4])})
local function __moveToActive()
${moveToActive?.content ?? ''}
end
local __taken = __moveToActive()
if type(__taken[2]) == 'string' then
  redis.call('SET', __record, __token .. ' ' .. __taken[2], 'PX', tonumber(ARGV[4]))
end
if redis.call('LLEN', KEYS[1]) == 0 and redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[11], '0')
end
return __taken`;

/**
 * The arguments of `TAKE_AHEAD_SCRIPT`: BullMQ's 11 `moveToActive` keys, from its key map of the queue (`keys`, as
 * `Worker.keys` holds it), then its ARGV (the key prefix, "now" to be replaced in Redis, the token, the lock duration)
 * and the worker's take record.
 */
export function takeAheadArgs(
  keys: Record<string, string>,
  token: string,
  lockDurationMs: number,
  workerId: string,
): string[] {
  return [
    keys.wait,
    keys.active,
    keys.prioritized,
    keys.events,
    keys.stalled,
    keys.limiter,
    keys.delayed,
    keys.paused,
    keys.meta,
    keys.pc,
    keys.marker,
    keys[''],
    '0',
    token,
    String(lockDurationMs),
    takeRecordKey(keys[''], workerId),
  ];
}

/** Where a worker's take-aheads record the job they locked (`base` is the queue's key prefix, `<prefix>:<queue>:`). */
export function takeRecordKey(base: string, workerId: string): string {
  return `${base}take:${workerId}`;
}

/** The job the take with `token` locked, from its worker's record (`<token> <job id>`), if it is that take's. */
export function recordedTake(record: string | null, token: string): string | undefined {
  const space = record?.indexOf(' ') ?? -1;
  return record && space > 0 && record.slice(0, space) === token ? record.slice(space + 1) : undefined;
}

export const TAKE_AHEAD_KEYS = 11;

/**
 * Whether the installed BullMQ's `moveToActive` still reads its arguments the way the take-ahead rewrites them; if a
 * BullMQ upgrade changes that, the worker fetches the plain way instead of running a script it no longer matches.
 */
export function takeAheadSupported(): boolean {
  return (
    moveToActive !== undefined &&
    moveToActive.keys === TAKE_AHEAD_KEYS &&
    /ARGV\[2\]\s+timestamp/.test(moveToActive.content) &&
    moveToActive.content.includes('cmsgpack.unpack(ARGV[3])')
  );
}

/** A job a take-ahead moved to active and locked with `token`, decoded the way BullMQ decodes a fetch. */
export interface TakenJob {
  token: string;
  jobData: unknown;
  id: string;
}

/** The take's raw answer, if it found a job (an empty take carries only delay information BullMQ re-reads itself). */
export function decodeTake(raw: unknown, token: string): TakenJob | undefined {
  if (!Array.isArray(raw)) return undefined;
  const [jobData, id] = raw2NextJobData(raw) as [unknown, unknown];
  return jobData && typeof id === 'string' ? { token, jobData, id } : undefined;
}
