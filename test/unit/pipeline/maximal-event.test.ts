import { describe, expect, it } from "vitest";
import { TaskCompletedV1 } from "../../../src/domain/contracts/index.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

/**
 * A valid success of 2,000 steps, each with its own long tool name: the event that once took the
 * processor minutes (quality patterns searched over a lesson that listed every tool) and whose own
 * outcome grew past the topic's limit.
 */
function maximalSuccess() {
  return TaskCompletedV1.parse(
    taskEvent({
      outcome: "success",
      error: undefined,
      task: {
        description: "Sync the partner catalogue",
        goal: "Every partner item is in the catalogue",
        importance: 0.9,
      },
      events: Array.from({ length: 2000 }, (_, i) => ({
        eventId: `e${String(i)}`,
        type: "tool_call" as const,
        timestamp: "2026-11-20T10:00:00.000Z",
        toolName: `change ${String(i)} ${"x".repeat(150)}`,
        content: `change ${String(i)} to ${"y".repeat(100)}`,
      })),
    }),
  );
}

describe("a maximal valid event", () => {
  it("is decided within a second of CPU, with a small outcome", async () => {
    const store = createFakeStore();
    const processor = createOfflineProcessor({ store: store.store, index: createFakeIndex().index });
    const event = maximalSuccess();
    // CPU time, not wall time: what the event costs, whatever else the machine runs meanwhile.
    const started = process.cpuUsage();
    const result = await processor.process(event, "in/0/1");
    const used = process.cpuUsage(started);
    expect(result.generatorCalls).toBeGreaterThan(0);
    expect((used.user + used.system) / 1000).toBeLessThan(1_000);
    expect(JSON.stringify(result.outputs).length).toBeLessThan(100_000);
  });
});
