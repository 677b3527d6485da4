import { describe, expect, it } from "vitest";
import type { LoopDecision } from "../../../src/domain/contracts/index.js";
import { defaultGuardrailConfig } from "../../../src/domain/guardrails/guardrail-config.js";
import { createLoopCompleter } from "../../../src/pipeline/complete-loop.js";
import type { OutboundMessage } from "../../../src/pipeline/ports.js";
import { createFakeStore } from "../../support/fakes.js";

const completion = {
  tenantId: "tenant-a",
  projectId: "project",
  loopId: "loop-1",
  outcome: "success" as const,
  alignment: 0.6,
  drift: 0.1,
  biasTags: [],
};

describe("HTTP loop completion", () => {
  it("publishes the stored decision again when a call whose publish failed is retried", async () => {
    const store = createFakeStore();
    const sent: OutboundMessage[][] = [];
    let failNext = true;
    const completeLoop = createLoopCompleter({
      store: store.store,
      guardrails: defaultGuardrailConfig,
      clock: { now: () => new Date("2026-11-23T10:00:00.000Z") },
      publish: (outputs) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error("kafka: not enough replicas"));
        }
        sent.push(outputs);
        return Promise.resolve();
      },
    });

    // The decision is saved, then Kafka refuses it: the caller sees the failure.
    await expect(completeLoop(completion)).rejects.toThrow("not enough replicas");
    expect(sent).toHaveLength(0);

    // The caller retries: the saved decision is returned, not decided again, and it goes out.
    const retried = await completeLoop(completion);
    expect(retried.committed).toBe(false);
    expect(retried.decision).toMatchObject({ loopId: "loop-1", decision: "rerun", rerunCount: 1 });
    expect(sent).toHaveLength(1);
    const [message] = sent[0] ?? [];
    expect(message?.role).toBe("loopDecision");
    expect((message?.value as LoopDecision).decisionId).toBe(retried.decision.decisionId);

    // Each further retry sends the same message (same CloudEvents id), which consumers drop.
    await completeLoop(completion);
    expect(sent).toHaveLength(2);
    expect(sent[1]?.[0]?.id).toBe(sent[0]?.[0]?.id);
  });
});
