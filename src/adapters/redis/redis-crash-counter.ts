import type { Redis } from "ioredis";
import type { CrashCounter } from "../../pipeline/ports.js";

/** Counts survive a week: long enough for any crash loop, short enough to clean up after itself. */
const ttlSeconds = 7 * 24 * 3600;

/** Crash counts per consumed record, under `<prefix>:crash:<group>:<topic/partition/offset>`. */
export function createRedisCrashCounter(
  redis: Redis,
  options: { keyPrefix: string; groupId: string },
): CrashCounter {
  return {
    async record(recordRef) {
      const key = `${options.keyPrefix}:crash:${options.groupId}:${recordRef}`;
      const results = await redis.multi().incr(key).expire(key, ttlSeconds).exec();
      const count = results?.[0]?.[1];
      return typeof count === "number" ? count : 0;
    },
  };
}
