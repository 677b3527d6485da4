import { Writable } from "node:stream";
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/observability/logger.js";
import { createQualityMetrics } from "../../../src/observability/quality-metrics.js";
import { createReflectionLog, violationKind } from "../../../src/observability/reflection-log.js";
import type { ReflectionGenerator } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

interface Line {
  level: number;
  msg: string;
  event?: string;
  [key: string]: unknown;
}

function capture() {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { lines, logger: createLogger("info", sink) };
}

function quality() {
  const registry = new Registry();
  const score = new Histogram({
    name: "reflector_reflection_quality_score",
    help: "q",
    registers: [registry],
  });
  return { registry, observer: createQualityMetrics(registry, score) };
}

const runs = async (registry: Registry) =>
  (await registry.getSingleMetric("reflector_improvement_loop_runs_total")?.get())?.values
    .filter((v) => v.value > 0)
    .map((v) => ({ ...v.labels, value: v.value }));

const pause = () => new Promise((resolve) => setImmediate(resolve));

describe("the reflection lifecycle, in metrics and logs", () => {
  it("counts a loop that kept a shallow reflection as a failed loop, not a success", async () => {
    // The offline generator's lesson for the default timeout: depth 0.6 < 0.7, published with
    // warnings (not rejected) and stored, so not asked again. The loop did not reach the thresholds.
    const { registry, observer } = quality();
    const processor = createOfflineProcessor(
      { store: createFakeStore().store, index: createFakeIndex().index },
      { observer },
    );
    const result = await processor.process(taskEvent());
    expect(result.verdict).toBe("accepted_with_warnings");
    expect(await runs(registry)).toEqual([
      { result: "failure", verdict: "accepted_with_warnings", value: 1 },
    ]);
  });

  it("logs the named events of one reflection, in order, with the enforcer's and the loop's lines", async () => {
    const { lines, logger } = capture();
    const processor = createOfflineProcessor(
      { store: createFakeStore().store, index: createFakeIndex().index },
      { lifecycle: createReflectionLog(logger) },
    );
    const event = taskEvent({ tenantId: "acme" });
    await processor.process(event);
    await pause();
    const named = lines.map((l) => l.event);
    expect(named[0]).toBe("reflection_generation_started");
    expect(named.filter((e) => e === "reflection_attempt_judged").length).toBeGreaterThanOrEqual(1);
    expect(named.slice(-4)).toEqual([
      "reflection_generated",
      "reflection_improvement_failed",
      "reflection_verdict",
      "reflection_stored",
    ]);
    expect(lines[0]).toMatchObject({
      tenantId: "acme",
      projectId: event.projectId,
      eventId: event.eventId,
      loopId: event.loopId,
      outcome: "timeout",
      eventCount: 2,
    });
    const attempts = lines.filter((l) => l.event === "reflection_attempt_judged");
    expect(attempts[0]?.msg).toMatch(
      /^Attempt 1 failed validation: score=0\.\d\d\. Violations: Shallow reflection/,
    );
    expect(lines.find((l) => l.event === "reflection_generated")).toMatchObject({
      generator: "heuristic",
      hasStrategy: true,
      improvementLoop: "failure",
    });
    expect(lines.find((l) => l.event === "reflection_improvement_failed")?.msg).toMatch(
      /^Failed to generate quality reflection after 1 of 3 attempts .*Returning best effort\.$/,
    );
    const verdict = lines.find((l) => l.event === "reflection_verdict");
    expect(verdict?.msg).toMatch(/^Reflection accepted WITH WARNINGS: quality_score=0\.\d\d\. Issues: /);
    expect(verdict?.level).toBe(40);
    expect(lines.at(-1)).toMatchObject({ event: "reflection_stored", msg: "reflection_stored" });
    expect(typeof lines.at(-1)?.reflectionId).toBe("string");
    // A log line names what failed, never what the trace said.
    expect(JSON.stringify(lines)).not.toContain("canceling statement due to statement timeout");
  });

  it("logs a generation that failed at error level, and lets the failure through", async () => {
    const { lines, logger } = capture();
    const broken: ReflectionGenerator = {
      name: "openai",
      generate: () => Promise.reject(new Error("model endpoint unreachable")),
    };
    const processor = createOfflineProcessor(
      { store: createFakeStore().store, index: createFakeIndex().index },
      { generator: broken, lifecycle: createReflectionLog(logger) },
    );
    await expect(processor.process(taskEvent())).rejects.toThrow("model endpoint unreachable");
    await pause();
    expect(lines.at(-1)).toMatchObject({
      event: "reflection_generation_failed",
      level: 50,
      err: { message: "model endpoint unreachable" },
    });
  });

  it("names a violation by its kind only", () => {
    expect(violationKind("Unproven pattern 'timeout on postgres_query': confidence=0.00 < 0.75")).toBe(
      "Unproven pattern",
    );
    expect(violationKind("Shallow reflection: depth=0.60 < 0.7. Need root cause")).toBe("Shallow reflection");
  });
});
