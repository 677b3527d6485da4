import { describe, expect, it } from "vitest";
import { countCommittedOutputs, createMetrics } from "../../../src/observability/metrics.js";
import type { OutboundMessage } from "../../../src/pipeline/ports.js";

function output(role: OutboundMessage["role"], value: Record<string, unknown>): OutboundMessage {
  return { role, key: "loop-1", id: "id", type: "t", subject: "s", time: new Date(0).toISOString(), value };
}

async function sample(
  metrics: ReturnType<typeof createMetrics>,
  name: string,
  labels: Record<string, string>,
) {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const found = metric?.values.find((v) =>
    Object.entries(labels).every(([k, val]) => (v.labels as Record<string, unknown>)[k] === val),
  );
  return found?.value ?? 0;
}

describe("countCommittedOutputs", () => {
  it("counts verdicts by generator, decisions by reason, and generator calls only for new lessons", async () => {
    const metrics = createMetrics();
    countCommittedOutputs(
      metrics,
      [
        output("reflectionAccepted", { verdict: "accepted_with_warnings", generator: "heuristic" }),
        output("loopDecision", { decision: "rerun", reason: "alignment_below_threshold" }),
      ],
      2,
    );
    countCommittedOutputs(
      metrics,
      [
        output("reflectionAccepted", { verdict: "accepted", generator: "reused" }),
        output("loopDecision", { decision: "finalize", reason: "thresholds_met" }),
      ],
      0,
    );
    expect(
      await sample(metrics, "reflector_reflections_total", {
        verdict: "accepted_with_warnings",
        generator: "heuristic",
      }),
    ).toBe(1);
    expect(
      await sample(metrics, "reflector_reflections_total", { verdict: "accepted", generator: "reused" }),
    ).toBe(1);
    expect(await sample(metrics, "reflector_generator_calls_total", { generator: "heuristic" })).toBe(2);
    expect(await sample(metrics, "reflector_generator_calls_total", { generator: "reused" })).toBe(0);
    expect(
      await sample(metrics, "reflector_loop_decisions_total", {
        decision: "rerun",
        reason: "alignment_below_threshold",
      }),
    ).toBe(1);
    expect(
      await sample(metrics, "reflector_loop_decisions_total", {
        decision: "finalize",
        reason: "thresholds_met",
      }),
    ).toBe(1);
  });

  it("labels a missing field 'unknown' instead of dropping the count", async () => {
    const metrics = createMetrics();
    countCommittedOutputs(metrics, [output("reflectionRejected", {})], 1);
    expect(
      await sample(metrics, "reflector_reflections_total", { verdict: "unknown", generator: "unknown" }),
    ).toBe(1);
  });
});
