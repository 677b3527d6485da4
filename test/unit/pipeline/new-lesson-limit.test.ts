import { describe, expect, it } from "vitest";
import type { ReflectionOutcome } from "../../../src/domain/contracts/index.js";
import { defaultQualityConfig } from "../../../src/domain/quality/quality-config.js";
import { createMemoryVolumeLimit } from "../../../src/pipeline/tenant-limits.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

/**
 * LESSONS_NEW_PER_MINUTE in the pipeline: a tenant flooding distinct failures stores at most its
 * limit of new lessons a minute; past it each reflection is still judged and published with its
 * verdict, not stored, and its outcome says why. Another tenant and recurrences are not touched.
 */
const outcomeOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome;

/** A failure of its own kind (its own table, query and error), so it is a lesson of its own. */
const distinct = (n: number, tenantId = "tenant-a") => {
  const base = taskEvent({ tenantId });
  const table = `table_${String(n)}`;
  return {
    ...base,
    error: {
      category: "timeout_error",
      type: `query_timeout_${String(n)}`,
      code: `QUERY_TIMEOUT_${String(n)}`,
      message: `Query on ${table} exceeded ${String(n)}s limit`,
    },
    events: base.events.map((e) => ({
      ...e,
      toolName: `postgres_${table}`,
      content: e.content.replace("orders", table),
    })),
  };
};

function setup(perMinute: number) {
  const store = createFakeStore();
  const refused: string[] = [];
  const processor = createOfflineProcessor(
    { store: store.store, index: createFakeIndex().index },
    {
      // Every distinct failure here is worth keeping: the only reason not to store one is the limit.
      quality: { ...defaultQualityConfig, storageMinQuality: 0.5 },
      newLessons: {
        limit: createMemoryVolumeLimit({ perMinute }),
        refused: (tenantId) => refused.push(tenantId),
      },
    },
  );
  return { processor, store, refused };
}

describe("new lessons a tenant may store a minute", () => {
  it("stores at most the limit; past it the reflection is published, not stored, and the outcome says why", async () => {
    const { processor, store, refused } = setup(3);
    const outcomes: ReflectionOutcome[] = [];
    for (let n = 1; n <= 6; n += 1) outcomes.push(outcomeOf((await processor.process(distinct(n))).outputs));
    const kept = outcomes.filter((o) => o.stored);
    expect(outcomes.every((o) => o.verdict !== "rejected")).toBe(true);
    expect(kept).toHaveLength(3);
    expect(store.reflections.size).toBe(3);
    const over = outcomes.filter((o) => !o.stored);
    expect(over).toHaveLength(3);
    for (const o of over) {
      expect(o.notStoredReason).toContain("LESSONS_NEW_PER_MINUTE");
      expect(o.reflection.reflectionText.length).toBeGreaterThan(0);
    }
    expect(refused).toEqual(["tenant-a", "tenant-a", "tenant-a"]);
    // Another tenant has its own minute.
    expect(outcomeOf((await processor.process(distinct(7, "tenant-b"))).outputs).stored).toBe(true);
  });

  it("never counts a recurrence of a stored lesson", async () => {
    const { processor, refused } = setup(1);
    expect(outcomeOf((await processor.process(distinct(1))).outputs).stored).toBe(true);
    const again = outcomeOf((await processor.process(distinct(1))).outputs);
    expect(again).toMatchObject({ stored: true, deduplicated: true, occurrences: 2 });
    expect(refused).toEqual([]);
  });
});
