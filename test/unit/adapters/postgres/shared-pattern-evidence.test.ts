import { describe, expect, it } from "vitest";
import { sharePatternEvidence } from "../../../../src/adapters/postgres/shared-pattern-evidence.js";
import type { PatternEvidence } from "../../../../src/pipeline/ports.js";

/** A store whose reads wait until the test answers them, recording what was asked. */
function slowStore() {
  const reads: {
    tenantId: string;
    patterns: string[];
    answer: (e: PatternEvidence) => void;
    fail: (err: Error) => void;
  }[] = [];
  const store = {
    patternEvidence: (tenantId: string, patterns: string[]) =>
      new Promise<Map<string, PatternEvidence>>((resolve, reject) => {
        reads.push({
          tenantId,
          patterns,
          answer: (e) => {
            resolve(new Map(patterns.map((p) => [p, e])));
          },
          fail: reject,
        });
      }),
    other: () => "kept",
  };
  return { store, reads };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("sharePatternEvidence", () => {
  it("answers callers that ask for a pattern while its read runs with that one read", async () => {
    const { store, reads } = slowStore();
    const shared = sharePatternEvidence(store);
    const first = shared.patternEvidence("t", ["timeout on query"]);
    const second = shared.patternEvidence("t", ["timeout on query"]);
    await tick();
    expect(reads).toHaveLength(1);
    reads[0]?.answer({ occurrences: 2, total: 5 });
    expect(await first).toEqual(new Map([["timeout on query", { occurrences: 2, total: 5 }]]));
    expect(await second).toEqual(await first);
    expect(shared.other()).toBe("kept");
  });

  it("reads again once the running read has answered, and keeps tenants and patterns apart", async () => {
    const { store, reads } = slowStore();
    const shared = sharePatternEvidence(store);
    const a = shared.patternEvidence("t", ["p"]);
    const b = shared.patternEvidence("u", ["p"]);
    const c = shared.patternEvidence("t", ["q", "p", "q"]);
    await tick();
    // t/p, u/p and t/q: three reads; the second t/p joined the first.
    expect(reads.map((r) => `${r.tenantId}:${r.patterns.join(",")}`).sort()).toEqual(["t:p", "t:q", "u:p"]);
    reads.forEach((r, i) => {
      r.answer({ occurrences: i, total: 10 });
    });
    const [ta, ub, tc] = await Promise.all([a, b, c]);
    expect(ub.get("p")).not.toEqual(ta.get("p"));
    expect([...tc.keys()]).toEqual(["q", "p"]);
    expect(tc.get("p")).toEqual(ta.get("p"));
    const again = shared.patternEvidence("t", ["p"]);
    await tick();
    expect(reads).toHaveLength(4);
    reads[3]?.answer({ occurrences: 9, total: 9 });
    expect((await again).get("p")).toEqual({ occurrences: 9, total: 9 });
  });

  it("fails every caller of a failed read, and reads again for the next one", async () => {
    const { store, reads } = slowStore();
    const shared = sharePatternEvidence(store);
    const first = shared.patternEvidence("t", ["p"]);
    const second = shared.patternEvidence("t", ["p"]);
    await tick();
    reads[0]?.fail(new Error("postgres away"));
    await expect(first).rejects.toThrow("postgres away");
    await expect(second).rejects.toThrow("postgres away");
    const third = shared.patternEvidence("t", ["p"]);
    await tick();
    expect(reads).toHaveLength(2);
    reads[1]?.answer({ occurrences: 1, total: 1 });
    expect((await third).get("p")).toEqual({ occurrences: 1, total: 1 });
  });
});
