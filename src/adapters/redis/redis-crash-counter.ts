import type { Redis } from "ioredis";
import type { CrashCounter } from "../../pipeline/ports.js";

/** Counts survive a week: long enough for any crash loop, short enough to clean up after itself. */
const ttlSeconds = 7 * 24 * 3600;

/**
 * Crash counts per consumed record, under `<prefix>:crash:<group>:<topic/partition/offset>`, and
 * the records that crashed within the last `windowMs` (a sorted set by time), so the caller can
 * tell one poisonous record from a processor that fails on everything.
 */
export function createRedisCrashCounter(
  redis: Redis,
  options: { keyPrefix: string; groupId: string; windowMs: number; now?: () => number },
): CrashCounter {
  const now = options.now ?? Date.now;
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
  };
}
