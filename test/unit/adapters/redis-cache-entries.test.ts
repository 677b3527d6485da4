import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import {
  cacheEntry,
  createRedisSignatureIndex,
  decodeVector,
  encodeVector,
  readCacheEntry,
  signatureKey,
} from "../../../src/adapters/redis/redis-signature-index.js";
import type { StoredReflection } from "../../../src/pipeline/ports.js";
import { createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

/** The three commands the index uses, over a Map: enough to see what it writes and reads back. */
function fakeRedis() {
  const data = new Map<string, string>();
  const redis = {
    get: (key: string) => Promise.resolve(data.get(key) ?? null),
    mget: (...keys: string[]) => Promise.resolve(keys.map((k) => data.get(k) ?? null)),
    set: (key: string, value: string) => {
      data.set(key, value);
      return Promise.resolve("OK");
    },
  };
  return { redis: redis as unknown as Redis, data };
}

const lesson = (id: string, signature: string): StoredReflection => ({
  id,
  signature,
  reflection: {
    reflectionText: "The agent called the refund tool before the order was loaded.",
    strategyText: "Load the order before calling the refund tool.",
    importance: 0.6,
    confidence: 0.7,
    tags: ["ordering"],
    errorCategory: "tool_misuse",
    patterns: ["refund before lookup"],
    adjustments: ["Load the order before calling the refund tool."],
    learning: "Load the order first.",
  },
  verdict: "accepted",
  qualityScore: 0.8,
  metrics: {
    completeness: 1,
    depthScore: 0.7,
    actionabilityScore: 0.8,
    patternValidity: null,
    relevanceScore: 0.9,
    noveltyScore: 1,
  },
  violations: [],
  occurrences: 3,
  generator: "heuristic",
  attempts: 1,
  sourceVector: null,
});

describe("Redis signature cache entries", () => {
  it("give a tenant back its own lesson, and a second tenant with the identical signature nothing", async () => {
    const { redis } = fakeRedis();
    const index = createRedisSignatureIndex(redis, { keyPrefix: "p" });
    await index.markProcessed("tenant-a", "e1", lesson("r-a", "sig-1"));
    expect((await index.recall("tenant-a", "e2", "sig-1")).cached?.id).toBe("r-a");
    expect((await index.cached("tenant-a", "sig-1"))?.occurrences).toBe(3);
    expect(await index.recall("tenant-b", "e2", "sig-1")).toEqual({ processed: false, cached: null });
    expect(await index.cached("tenant-b", "sig-1")).toBeNull();
  });

  it("treat another tenant's lesson found under a tenant's key as a miss, so its id is never counted for it", async () => {
    const { redis, data } = fakeRedis();
    const index = createRedisSignatureIndex(redis, { keyPrefix: "p" });
    // Tenant A's lesson under tenant B's key: as an entry for A, and bare (without its tenant).
    data.set(signatureKey("p", "tenant-b", "sig-1"), cacheEntry("tenant-a", lesson("r-a", "sig-1")));
    expect((await index.recall("tenant-b", "e1", "sig-1")).cached).toBeNull();
    data.set(signatureKey("p", "tenant-b", "sig-1"), JSON.stringify(lesson("r-a", "sig-1")));
    expect((await index.recall("tenant-b", "e1", "sig-1")).cached).toBeNull();
    expect(await index.cached("tenant-b", "sig-1")).toBeNull();
    // Another signature's lesson under this signature's key.
    data.set(signatureKey("p", "tenant-b", "sig-1"), cacheEntry("tenant-b", lesson("r-b", "sig-2")));
    expect(await index.cached("tenant-b", "sig-1")).toBeNull();
  });

  it("treat a corrupt or foreign value as a miss rather than failing the event", async () => {
    const { redis, data } = fakeRedis();
    const index = createRedisSignatureIndex(redis, { keyPrefix: "p" });
    const key = signatureKey("p", "t", "sig-1");
    const good = JSON.parse(cacheEntry("t", lesson("r-1", "sig-1"))) as StoredReflection & {
      cachedFor: string;
    };
    const bad = [
      "{not json",
      "null",
      '"a string"',
      "[]",
      "42",
      JSON.stringify({ cachedFor: "t" }),
      JSON.stringify({ ...good, verdict: "rejected" }),
      JSON.stringify({ ...good, id: 7 }),
      JSON.stringify({ ...good, qualityScore: 12 }),
      JSON.stringify({ ...good, occurrences: 0 }),
      JSON.stringify({ ...good, reflection: { reflectionText: "no other field" } }),
      JSON.stringify({ ...good, metrics: { completeness: "high" } }),
      JSON.stringify({ ...good, sourceVector: ["x"] }),
    ];
    for (const value of bad) {
      data.set(key, value);
      expect(await index.cached("t", "sig-1"), value).toBeNull();
      expect((await index.recall("t", "e", "sig-1")).cached, value).toBeNull();
    }
    data.set(key, JSON.stringify(good));
    expect(await index.cached("t", "sig-1")).toEqual(lesson("r-1", "sig-1"));
  });

  it("carry the source vector as base64, exactly, and still read one written as a JSON array", () => {
    // Values a float32 holds exactly (the embedders' output; Postgres keeps them as real[]).
    const vector = Array.from(Float32Array.from([0.25, -0.061127868, 1e-7, 3, -0.5]));
    const stored = { ...lesson("r-1", "s"), sourceVector: vector };
    const raw = cacheEntry("t", stored);
    expect(raw).not.toContain("0.061127868");
    expect(JSON.parse(raw)).toMatchObject({ sourceVectorF32: encodeVector(vector, 32) });
    expect(JSON.parse(raw)).not.toHaveProperty("sourceVector");
    expect(readCacheEntry(raw, "t", "s")).toEqual(stored);
    // Any other value goes as float64, so what is read back is what was written.
    const precise = { ...stored, sourceVector: [0.6, 0.8, 0] };
    expect(JSON.parse(cacheEntry("t", precise))).toHaveProperty("sourceVectorF64");
    expect(readCacheEntry(cacheEntry("t", precise), "t", "s")).toEqual(precise);
    // An older entry, the vector as numbers.
    expect(readCacheEntry(JSON.stringify({ ...stored, cachedFor: "t" }), "t", "s")).toEqual(stored);
    // Without a vector, or with null, the entry reads back as written.
    const { sourceVector: _v, ...withoutVector } = stored;
    expect(readCacheEntry(cacheEntry("t", withoutVector), "t", "s")).toEqual(withoutVector);
    expect(readCacheEntry(cacheEntry("t", lesson("r-1", "s")), "t", "s")).toEqual(lesson("r-1", "s"));
  });

  it("treat an entry whose encoded vector is broken as a miss", () => {
    const good = JSON.parse(cacheEntry("t", { ...lesson("r-1", "s"), sourceVector: [1, 2] })) as Record<
      string,
      unknown
    >;
    for (const bad of [
      { ...good, sourceVectorF32: "not base64!" },
      { ...good, sourceVectorF32: Buffer.from([1, 2, 3]).toString("base64") },
      { ...good, sourceVectorF32: encodeVector([1, Number.POSITIVE_INFINITY], 32) },
      { ...good, sourceVectorF32: 7 },
      { ...good, sourceVector: [1, 2] },
      { ...good, sourceVectorF64: encodeVector([1, 2], 64) },
      { ...good, sourceVectorF32: undefined, sourceVectorF64: encodeVector([1, 2], 32).slice(0, 8) + "AAAA" },
    ]) {
      expect(readCacheEntry(JSON.stringify(bad), "t", "s"), JSON.stringify(bad)).toBeNull();
    }
    expect(decodeVector(encodeVector([], 32), 32)).toEqual([]);
  });

  it("keep fields of an entry that the schema does not name", () => {
    const stored = { ...lesson("r-1", "s"), extra: ["kept"] } as StoredReflection;
    expect(readCacheEntry(cacheEntry("t", stored), "t", "s")).toEqual(stored);
  });

  it("read back what the processor caches, and keep two tenants' identical failures apart", async () => {
    const { redis, data } = fakeRedis();
    const fake = createFakeStore();
    const processor = createOfflineProcessor({
      store: fake.store,
      index: createRedisSignatureIndex(redis, { keyPrefix: "p" }),
    });
    const a1 = await processor.process(taskEvent({ tenantId: "tenant-a" }), null);
    const a2 = await processor.process(taskEvent({ tenantId: "tenant-a" }), null);
    const b1 = await processor.process(taskEvent({ tenantId: "tenant-b" }), null);
    const outcome = (r: typeof a1) =>
      r.outputs
        .map((o) => o.value as { reflectionId?: string; occurrences?: number })
        .find((v) => v.reflectionId);
    expect(outcome(a1)?.reflectionId).toBeTruthy();
    // Tenant A's second failure is a new occurrence of its lesson; tenant B's is a lesson of its own.
    expect(outcome(a2)).toMatchObject({ reflectionId: outcome(a1)?.reflectionId, occurrences: 2 });
    expect(outcome(b1)?.reflectionId).not.toBe(outcome(a1)?.reflectionId);
    expect(outcome(b1)?.occurrences).toBe(1);
    const entries = [...data].filter(([key]) => key.startsWith("p:sig:"));
    expect(entries.length).toBeGreaterThanOrEqual(2);
    for (const [key, raw] of entries) {
      const [, , tenant = "", signature = ""] = key.split(":");
      expect(readCacheEntry(raw, tenant, signature), key).not.toBeNull();
    }
  });
});
