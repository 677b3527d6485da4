import { describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../../src/adapters/llm/heuristic-generator.js";
import { loadConfig } from "../../../src/config/config.js";
import type { LoopDecision } from "../../../src/domain/contracts/index.js";
import { runsPeriodicReflection, selectForReflection } from "../../../src/domain/select-for-reflection.js";
import type { ReflectionGenerator } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

describe("REFLECTIVE_MEMORY_ENABLED=false: reflection off, guardrails kept", () => {
  it("is mode off in the configuration; true or unset keeps REFLECTOR_MODE", () => {
    const base = { REFLECTOR_EMBEDDINGS: "hashing" };
    expect(loadConfig({ ...base, REFLECTIVE_MEMORY_ENABLED: "false" }).mode).toBe("off");
    expect(loadConfig({ ...base, REFLECTIVE_MEMORY_ENABLED: "true", REFLECTOR_MODE: "lite" }).mode).toBe(
      "lite",
    );
    expect(loadConfig(base).mode).toBe("full");
    expect(runsPeriodicReflection("off")).toBe(false);
    expect(
      selectForReflection({ outcome: "failure", task: { description: "x", tier: "container-full" } }, "off"),
    ).toEqual({ reflect: false, reason: "reflective memory disabled" });
  });

  it("decides a failed loop with no generator call, no lesson and no signature", async () => {
    const store = createFakeStore();
    const index = createFakeIndex();
    let calls = 0;
    const offline = createHeuristicGenerator();
    const counting: ReflectionGenerator = {
      name: offline.name,
      generate: (request) => {
        calls += 1;
        return offline.generate(request);
      },
    };
    const processor = createOfflineProcessor(
      { store: store.store, index: index.index },
      { generator: counting, clock: { now: () => new Date("2026-11-20T10:00:05.000Z") }, mode: "off" },
    );
    const event = taskEvent();
    const result = await processor.process(event);
    expect(result.outputs.map((o) => o.role)).toEqual(["loopDecision"]);
    const decision = result.outputs[0]?.value as LoopDecision;
    // The failure still asks the loop to rerun: the guardrails do not depend on reflection.
    expect(decision).toMatchObject({
      decision: "rerun",
      newLoopId: `${event.loopId}_r1`,
      reason: "task_failed",
    });
    expect(calls).toBe(0);
    expect(store.reflections.size).toBe(0);
    expect(index.signatures.size).toBe(0);
  });
});
