import type { Redis } from "ioredis";
import type { CrashCounter } from "../../pipeline/ports.js";

/** Counts survive a week: long enough for any crash loop, short enough to clean up after itself. */
const ttlSeconds = 7 * 24 * 3600;

/**
 * A delivery counted before the record is processed: its count goes up (and expires in a week);
 * a record delivered again unfinished joins the records crashing now; the window's old entries go;
 * the script answers the delivery count and the records crashing within the window.
 */
const beginScript = `
local deliveries = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
if deliveries > 1 then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
  redis.call('EXPIRE', KEYS[2], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
return {deliveries, redis.call('ZCARD', KEYS[2])}
`;

interface BeginCommand {
  reflectorCrashBegin(
    deliveriesKey: string,
    recentKey: string,
    ttlSeconds: number,
    at: number,
    windowStart: number,
    recordRef: string,
  ): Promise<[number, number]>;
}

/**
 * Crash counts per consumed record, under `<prefix>:crash:<group>:<topic/partition/offset>`, its
 * unfinished deliveries under the same key with `:deliveries`, and
 * the records that crashed within the last `windowMs` (a sorted set by time), so the caller can
 * tell one poisonous record from a processor that fails on everything.
 */
export function createRedisCrashCounter(
  redis: Redis,
  options: { keyPrefix: string; groupId: string; windowMs: number; now?: () => number },
): Required<CrashCounter> {
  const now = options.now ?? Date.now;
  if (!("reflectorCrashBegin" in redis)) {
    redis.defineCommand("reflectorCrashBegin", { numberOfKeys: 2, lua: beginScript });
  }
  const recent = `${options.keyPrefix}:crash:${options.groupId}`;
  return {
    async record(recordRef) {
      const key = `${recent}:${recordRef}`;
      const at = now();
      const results = await redis
        .multi()
        .incr(key)
        .expire(key, ttlSeconds)
        .zadd(recent, at, recordRef)
        .zremrangebyscore(recent, "-inf", at - options.windowMs)
        .zcard(recent)
        .expire(recent, ttlSeconds)
        .exec();
      const crashes = results?.[0]?.[1];
      const crashingRecords = results?.[4]?.[1];
      return {
        crashes: typeof crashes === "number" ? crashes : 0,
        crashingRecords: typeof crashingRecords === "number" ? crashingRecords : 0,
      };
    },
    async begin(recordRef) {
      const at = now();
      // One command (a script), so one round trip, and auto-pipelined with the batch's others.
      const [deliveries, crashingRecords] = await (redis as Redis & BeginCommand).reflectorCrashBegin(
        `${recent}:${recordRef}:deliveries`,
        recent,
        ttlSeconds,
        at,
        at - options.windowMs,
        recordRef,
      );
      return { deliveries, crashingRecords };
    },
    async finish(recordRef) {
      await redis.del(`${recent}:${recordRef}:deliveries`);
    },
  };
}
