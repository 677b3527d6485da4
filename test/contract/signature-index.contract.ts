import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SignatureIndex, StoredReflection } from "../../src/pipeline/ports.js";

/**
 * The SignatureIndex port's contract (src/pipeline/ports.ts), one suite for every implementation:
 * the in-memory fake of the unit tests and the Redis index. `make` returns the index under test;
 * each case works in tenants of its own, so a shared backend needs no cleaning between cases.
 */
export function signatureIndexContract(name: string, make: () => SignatureIndex | Promise<SignatureIndex>) {
  const tenant = () => `contract-${randomUUID().slice(0, 8)}`;

  const lesson = (signature: string, occurrences = 1): StoredReflection => ({
    id: `r-${randomUUID()}`,
    signature,
    reflection: {
      reflectionText: "The agent trusted a stale search snippet instead of opening the source page.",
      strategyText: "Open the source page before quoting a figure.",
      importance: 0.4,
      confidence: 0.8,
      tags: ["verification"],
      errorCategory: "unverified_claim",
      patterns: ["answer from search snippet"],
      adjustments: ["add constraint: open the source page"],
      learning: "Confirm figures on the source page.",
    },
    verdict: "accepted",
    qualityScore: 0.9,
    metrics: {
      completeness: 1,
      depthScore: 0.8,
      actionabilityScore: 1,
      patternValidity: 0.75,
      relevanceScore: 0.9,
      noveltyScore: 0.7,
    },
    violations: [],
    occurrences,
    generator: "heuristic",
    attempts: 1,
    sourceVector: [0.6, 0.8, 0],
  });

  describe(`SignatureIndex contract: ${name}`, () => {
    it("knows nothing of an event or a signature it was never told", async () => {
      const index = await make();
      const t = tenant();
      expect(await index.recall(t, "evt-1", "sig-1")).toEqual({ processed: false, cached: null });
      expect(await index.recall(t, "evt-1", null)).toEqual({ processed: false, cached: null });
      expect(await index.cached(t, "sig-1")).toBeNull();
    });

    it("caches a lesson under its signature and hands back an equal copy", async () => {
      const index = await make();
      const t = tenant();
      const stored = lesson("sig-a");
      await index.remember(t, stored);
      expect(await index.cached(t, "sig-a")).toEqual(stored);
      expect(await index.recall(t, "evt-unseen", "sig-a")).toEqual({ processed: false, cached: stored });
      // Without a signature, recall answers for the event only.
      expect((await index.recall(t, "evt-unseen", null)).cached).toBeNull();
      expect(await index.cached(t, "sig-other")).toBeNull();
    });

    it("keeps what it cached when the caller changes the copy it was handed", async () => {
      const index = await make();
      const t = tenant();
      const stored = lesson("sig-a");
      await index.remember(t, stored);
      stored.occurrences = 99;
      const copy = await index.cached(t, "sig-a");
      if (!copy) throw new Error("the lesson was not cached");
      copy.qualityScore = 0;
      expect(await index.cached(t, "sig-a")).toMatchObject({ occurrences: 1, qualityScore: 0.9 });
    });

    it("a later lesson of the same signature replaces the cached one", async () => {
      const index = await make();
      const t = tenant();
      await index.remember(t, lesson("sig-a", 1));
      const newer = lesson("sig-a", 3);
      await index.remember(t, newer);
      expect(await index.cached(t, "sig-a")).toEqual(newer);
    });

    it("marks an event processed, with or without caching its lesson in the same call", async () => {
      const index = await make();
      const t = tenant();
      const stored = lesson("sig-b");
      await index.markProcessed(t, "evt-with", stored);
      await index.markProcessed(t, "evt-without", null);
      expect(await index.recall(t, "evt-with", "sig-b")).toEqual({ processed: true, cached: stored });
      expect(await index.recall(t, "evt-without", null)).toEqual({ processed: true, cached: null });
      expect(await index.recall(t, "evt-other", null)).toEqual({ processed: false, cached: null });
    });

    it("keeps tenants apart, whatever characters their ids and signatures hold", async () => {
      const index = await make();
      const base = tenant();
      // Tenant `x:a` with event / signature `b`, and tenant `x` with `a:b`: distinct, as are `|`.
      for (const separator of [":", "|", "%3A"]) {
        const joined = `${base}${separator}a`;
        await index.markProcessed(joined, "b", lesson("b"));
        expect(await index.recall(base, `a${separator}b`, `a${separator}b`)).toEqual({
          processed: false,
          cached: null,
        });
        expect(await index.recall(joined, "b", "b")).toMatchObject({
          processed: true,
          cached: { signature: "b" },
        });
      }
      const other = tenant();
      expect(await index.recall(other, "b", "b")).toEqual({ processed: false, cached: null });
    });
  });
}
