import type { Redis } from "ioredis";
import type { CrashCounter } from "../../pipeline/ports.js";

/** Counts survive a week: long enough for any crash loop, short enough to clean up after itself. */
const ttlSeconds = 7 * 24 * 3600;

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
      const key = `${recent}:${recordRef}:deliveries`;
      const at = now();
      const counted = await redis.multi().incr(key).expire(key, ttlSeconds).exec();
      const deliveries = counted?.[0]?.[1];
      const n = typeof deliveries === "number" ? deliveries : 0;
      // A record delivered again unfinished stalled or killed a process: it counts as crashing.
      const recentMulti = redis.multi();
      if (n > 1) recentMulti.zadd(recent, at, recordRef);
      const results = await recentMulti
        .zremrangebyscore(recent, "-inf", at - options.windowMs)
        .zcard(recent)
        .exec();
      const crashingRecords = results?.[results.length - 1]?.[1];
      return { deliveries: n, crashingRecords: typeof crashingRecords === "number" ? crashingRecords : 0 };
    },
    async finish(recordRef) {
      await redis.del(`${recent}:${recordRef}:deliveries`);
    },
  };
}
