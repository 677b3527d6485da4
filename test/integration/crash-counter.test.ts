import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createRedisCrashCounter } from "../../src/adapters/redis/redis-crash-counter.js";

describe("crash counter (real Redis)", () => {
  const redis = new Redis(inject("redisUrl"));
  const keyPrefix = `test-${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it("counts crashes per record and the distinct records crashing within the window", async () => {
    let now = 1_000_000;
    const counter = createRedisCrashCounter(redis, {
      keyPrefix,
      groupId: "g",
      windowMs: 60_000,
      now: () => now,
    });
    expect(await counter.record("in/0/5")).toEqual({ crashes: 1, crashingRecords: 1 });
    expect(await counter.record("in/0/5")).toEqual({ crashes: 2, crashingRecords: 1 });
    expect(await counter.record("in/1/9")).toEqual({ crashes: 1, crashingRecords: 2 });
    // Another group's counts are its own.
    const other = createRedisCrashCounter(redis, {
      keyPrefix,
      groupId: "h",
      windowMs: 60_000,
      now: () => now,
    });
    expect(await other.record("in/0/5")).toEqual({ crashes: 1, crashingRecords: 1 });
    // Past the window, old crashes no longer count as records crashing now; the record's count stays.
    now += 120_000;
    expect(await counter.record("in/0/5")).toEqual({ crashes: 3, crashingRecords: 1 });
    expect(await redis.ttl(`${keyPrefix}:crash:g:in/0/5`)).toBeGreaterThan(6 * 24 * 3600);
  });

  it("counts unfinished deliveries per record, forgets a finished one, and counts a redelivery as crashing", async () => {
    const counter = createRedisCrashCounter(redis, { keyPrefix, groupId: "d", windowMs: 60_000 });
    expect(await counter.begin("in/0/7")).toEqual({ deliveries: 1, crashingRecords: 0 });
    expect(await counter.begin("in/0/7")).toEqual({ deliveries: 2, crashingRecords: 1 });
    await counter.finish("in/0/7");
    expect(await counter.begin("in/0/7")).toEqual({ deliveries: 1, crashingRecords: 1 });
  });

  it("counts a delivery in one round trip, and the deliveries of a batch in one together", async () => {
    const piped = new Redis(inject("redisUrl"), { enableAutoPipelining: true, lazyConnect: true });
    try {
      await piped.connect();
      const counter = createRedisCrashCounter(piped, { keyPrefix, groupId: "rt", windowMs: 60_000 });
      const stream = (piped as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
      const write = stream.write.bind(stream);
      let writes = 0;
      stream.write = (...args: unknown[]) => {
        writes += 1;
        return write(...args);
      };
      // The first call may load the script (a NOSCRIPT answer, then EVAL): not counted.
      await counter.begin("warm/0/0");
      writes = 0;
      expect(await counter.begin("in/0/1")).toEqual({ deliveries: 1, crashingRecords: 0 });
      expect(writes).toBe(1);
      writes = 0;
      const refs = Array.from({ length: 20 }, (_, i) => `in/1/${String(i)}`);
      const begun = await Promise.all(refs.map((ref) => counter.begin(ref)));
      expect(writes).toBe(1);
      expect(begun.every((b) => b.deliveries === 1)).toBe(true);
      // Their outcomes committed together, their counts go together too.
      writes = 0;
      await Promise.all(refs.map((ref) => counter.finish(ref)));
      expect(writes).toBe(1);
      expect(await counter.begin("in/1/0")).toEqual({ deliveries: 1, crashingRecords: 0 });
      // Delivered again unfinished: counted as crashing, with the same answers as before.
      expect(await counter.begin("in/0/1")).toEqual({ deliveries: 2, crashingRecords: 1 });
      stream.write = write;
      expect(await piped.ttl(`${keyPrefix}:crash:rt:in/0/1:deliveries`)).toBeGreaterThan(6 * 24 * 3600);
      expect(await piped.ttl(`${keyPrefix}:crash:rt`)).toBeGreaterThan(6 * 24 * 3600);
    } finally {
      piped.disconnect();
    }
  });
});
