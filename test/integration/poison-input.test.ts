import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";

/**
 * Events a careless or hostile producer sends, which Postgres refuses: none of them may stop the
 * partition. Each is decided or dead-lettered with its reason, and the ordinary event behind them
 * (same partition: one partition here) is decided.
 */
describe("poison input on the write path", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { TOPIC_PARTITIONS: "1" } });
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it("dead-letters what Postgres refuses, with the reason, and keeps the partition moving", async () => {
    const tenantId = `t-${h.id}`;
    const base = taskEvent({ tenantId });
    const firstStep = base.events[0];
    if (!firstStep) throw new Error("the sample trace has no steps");
    const poison = [
      // A NUL byte in text: Postgres text and jsonb cannot hold it.
      taskEvent({ tenantId, task: { description: "Fetch orders\u0000 for customer 4411" } }),
      // A rerun number past any integer column.
      taskEvent({ tenantId, loopId: `loop-${h.id}_r3000000000`, rerunOf: `loop-${h.id}` }),
      // A tool name longer than a btree index row can hold.
      taskEvent({
        tenantId,
        events: [{ ...firstStep, toolName: "t".repeat(3_000) }, ...base.events.slice(1)],
      }),
    ];
    const ordinary = taskEvent({ tenantId });
    for (const event of poison) await h.publish(event);
    await h.publish(ordinary);

    await h.waitForOutputs(ordinary.eventId, 2, 90_000);
    for (const event of poison) {
      const decided = h.collected.some((c) => c.value?.sourceEventId === event.eventId);
      const dead = h.on(h.config.topics.deadLetter, (c) => (c.raw?.toString() ?? "").includes(event.eventId));
      // Decided, or dead-lettered with a reason: never stuck.
      expect(decided || dead.length === 1).toBe(true);
      const reasons = dead.map((d) => d.headers["reflector.error.message"] ?? "");
      expect(reasons.every((r) => /\S/.test(r))).toBe(true);
    }
    const ready = (await h.app.metrics.ready.get()).values[0]?.value;
    expect(ready).toBe(1);
  }, 120_000);
});
