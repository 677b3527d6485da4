import { describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../../../src/adapters/llm/heuristic-generator.js";
import type { QualityObserver, ReflectionGenerator } from "../../../../src/pipeline/ports.js";
import type { RejudgedState } from "../../../../src/pipeline/processing-state.js";
import { match } from "../../../../src/pipeline/stages/match.js";
import { reflect } from "../../../../src/pipeline/stages/reflect.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, stageDeps } from "./stage-fixtures.js";

async function newLesson(fixture: ReturnType<typeof stageDeps>, route: "model" | "offline" = "model") {
  const state = eventState(fixture.deps, taskEvent(), { route: () => Promise.resolve(route) });
  const matched = await match(fixture.deps, state);
  if (!matched) throw new Error("a failure is always filed under a signature");
  return { ...matched, rejudged: null } satisfies RejudgedState;
}

describe("stage reflect", () => {
  it("generates, judges and decides storage for a trace no lesson fits, with the failure located once", async () => {
    const fixture = stageDeps();
    const observed: Parameters<QualityObserver["observe"]>[0][] = [];
    const deps = {
      ...fixture.deps,
      observer: { observe: (j: (typeof observed)[number]) => observed.push(j) },
    };
    const state = await newLesson(fixture);
    fixture.stages.length = 0;
    const { judged } = await reflect(deps, state);
    expect(judged).toMatchObject({ generator: "heuristic", storage: { action: "add" } });
    expect(judged?.attempts).toBe(fixture.generated.length);
    expect(fixture.generated[0]?.located).toBe(state.facts.located);
    expect(fixture.generated[0]?.located).not.toBeNull();
    expect(observed).toEqual([
      {
        validation: judged?.validation,
        verdict: judged?.verdict,
        attempts: judged?.attempts,
        // A depth short of the threshold: the loop returned its best effort.
        succeeded: false,
      },
    ]);
    expect(fixture.stages.slice(0, 4)).toEqual(["embed", "reflect", "store-read", "generate"]);
  });

  it("asks no generator for a recalled lesson", async () => {
    const fixture = stageDeps();
    await fixture.seed(taskEvent());
    const matched = await match(fixture.deps, eventState(fixture.deps, taskEvent()));
    if (!matched?.matched.known) throw new Error("the lesson is stored");
    const { judged } = await reflect(fixture.deps, { ...matched, rejudged: null });
    expect(judged).toBeNull();
    expect(fixture.generated).toEqual([]);
  });

  it("writes with the offline generator when the spend gate routes the tenant offline", async () => {
    const model: ReflectionGenerator = {
      name: "openai",
      generate: () => Promise.reject(new Error("no model")),
    };
    const fixture = stageDeps(model);
    const offline = createHeuristicGenerator();
    const deps = { ...fixture.deps, spend: { generator: offline } };
    const { judged } = await reflect(deps, await newLesson(fixture, "offline"));
    expect(judged?.generator).toBe("heuristic");
    expect(fixture.generated).toEqual([]);
    // Routed to the model, the model is asked.
    await expect(reflect(deps, await newLesson(fixture, "model"))).rejects.toThrow("no model");
    expect(fixture.generated).toHaveLength(1);
  });
});
