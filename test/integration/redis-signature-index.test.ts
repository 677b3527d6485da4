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

  const lesson = (signature: string): StoredReflection => ({
    id: `r-${signature}`,
    signature,
    reflection: {
      reflectionText: "The agent retried the call without waiting.",
      strategyText: "Wait for the Retry-After before calling again.",
      importance: 0.5,
      confidence: 0.6,
      tags: ["rate-limit"],
      errorCategory: "rate_limit",
      patterns: [],
      adjustments: ["Wait for the Retry-After before calling again."],
      learning: "Wait before retrying.",
    },
    verdict: "accepted",
    qualityScore: 0.7,
    metrics: {
      completeness: 1,
      depthScore: 0.6,
      actionabilityScore: 0.7,
      patternValidity: null,
      relevanceScore: 0.8,
      noveltyScore: 1,
    },
    violations: [],
    occurrences: 1,
    generator: "heuristic",
    attempts: 1,
  });

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

  it("misses on a garbage value, and on another tenant's lesson under a tenant's key", async () => {
    const index = createRedisSignatureIndex(redis, { keyPrefix });
    await index.remember("tenant-a", lesson("same"));
    expect((await index.cached("tenant-a", "same"))?.id).toBe("r-same");
    // Tenant B's identical signature sees nothing of tenant A's lesson.
    expect(await index.cached("tenant-b", "same")).toBeNull();
    const bKey = `${keyPrefix}:sig:tenant-b:same`;
    await redis.set(bKey, (await redis.get(`${keyPrefix}:sig:tenant-a:same`)) ?? "");
    expect((await index.recall("tenant-b", "e1", "same")).cached).toBeNull();
    await redis.set(bKey, JSON.stringify(lesson("same")));
    expect(await index.cached("tenant-b", "same")).toBeNull();
    await redis.set(bKey, "\u0000{garbage");
    expect(await index.recall("tenant-b", "e1", "same")).toEqual({ processed: false, cached: null });
  });
});
