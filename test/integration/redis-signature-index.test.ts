import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createRedisSignatureIndex } from "../../src/adapters/redis/redis-signature-index.js";
import type { StoredReflection } from "../../src/pipeline/ports.js";

describe("Redis signature index (real Redis, auto-pipelined as the app builds it)", () => {
  const redis = new Redis(inject("redisUrl"), { enableAutoPipelining: true, lazyConnect: true });
  const keyPrefix = `test-${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** Counts the writes to the socket: one per pipeline sent, one per command sent alone. */
  async function socketWrites(work: () => Promise<unknown>): Promise<number> {
    if (redis.status !== "ready") await redis.connect();
    const stream = (redis as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
    const write = stream.write.bind(stream);
    let writes = 0;
    stream.write = (...args: unknown[]) => {
      writes += 1;
      return write(...args);
    };
    try {
      await work();
    } finally {
      stream.write = write;
    }
    return writes;
  }

  const lesson = (signature: string) =>
    ({ id: `r-${signature}`, signature, verdict: "accepted", occurrences: 1 }) as unknown as StoredReflection;

  it("marks the events of one group commit processed in one pipeline, and recalls them in one", async () => {
    const index = createRedisSignatureIndex(redis, { keyPrefix });
    const ids = Array.from({ length: 20 }, (_, i) => `e${String(i)}`);
    // Events whose commit resolved in the same turn of the event loop mark themselves together.
    const marking = await socketWrites(() =>
      Promise.all(ids.map((id) => index.markProcessed("t", id, lesson(`s-${id}`)))),
    );
    expect(marking).toBe(1);
    let recalled: Awaited<ReturnType<typeof index.recall>>[] = [];
    const recalling = await socketWrites(async () => {
      recalled = await Promise.all(ids.map((id) => index.recall("t", id, `s-${id}`)));
    });
    expect(recalling).toBe(1);
    expect(recalled.every((r) => r.processed)).toBe(true);
    expect(recalled.map((r) => r.cached?.id)).toEqual(ids.map((id) => `r-s-${id}`));
    // An event with nothing to cache marks only its id.
    await index.markProcessed("t", "bare", null);
    expect((await index.recall("t", "bare", "s-bare")).processed).toBe(true);
    expect(await redis.ttl(`${keyPrefix}:evt:t:bare`)).toBeGreaterThan(0);
  });
});
