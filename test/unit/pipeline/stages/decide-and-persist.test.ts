import { describe, expect, it } from "vitest";
import type { LoopDecision, ReflectionOutcome } from "../../../../src/domain/contracts/index.js";
import type { UnitOfWork } from "../../../../src/pipeline/ports.js";
import { decideAndPersist } from "../../../../src/pipeline/stages/decide-and-persist.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, remembered, stageDeps } from "./stage-fixtures.js";

function setup() {
  const fixture = stageDeps();
  const units: UnitOfWork[] = [];
  const commit = fixture.deps.store.commit.bind(fixture.deps.store);
  const store = {
    ...fixture.deps.store,
    commit: (unit: UnitOfWork, build: Parameters<typeof commit>[1]) => {
      units.push(unit);
      return commit(unit, build);
    },
  };
  return { ...fixture, deps: { ...fixture.deps, store }, units };
}

describe("stage decide and persist", () => {
  it("commits a new lesson with the decision, and publishes its outcome and the decision carrying it", async () => {
    const { deps, units } = setup();
    const state = await remembered(deps, eventState(deps, taskEvent(), { sourceRecord: "in/0/7" }));
    const { result, loop } = await decideAndPersist(deps, state);
    expect(result.committed).toBe(true);
    const [unit] = units;
    expect(unit).toMatchObject({
      signature: state.memory?.matched.candidate.signature,
      store: { kind: "insert" },
      episode: state.facts.episode,
      judgement: { verdict: state.memory?.judged?.verdict, stored: true, generator: "heuristic" },
      decidedAt: state.now,
      sourceRecord: "in/0/7",
    });
    expect(result.outputs.map((o) => o.role)).toEqual(["reflectionAccepted", "loopDecision"]);
    const outcome = result.outputs[0]?.value as ReflectionOutcome;
    expect(outcome).toMatchObject({ stored: true, occurrences: 1, signature: unit?.signature });
    const decision = result.outputs[1]?.value as LoopDecision;
    expect(decision.decision).toBe(loop.decision);
    expect(decision.lessons.map((l) => l.reflectionId)).toEqual([outcome.reflectionId]);
  });

  it("commits only the decision for an event that leaves nothing in memory", async () => {
    const { deps, units } = setup();
    const success = taskEvent({
      outcome: "success",
      error: undefined,
      task: { description: "x", tier: "inline" },
    });
    const state = await remembered(deps, eventState(deps, success));
    expect(state.memory).toBeNull();
    const { result } = await decideAndPersist(deps, state);
    expect(units[0]).toMatchObject({ signature: null, store: null, judgement: null });
    expect(result.outputs.map((o) => o.role)).toEqual(["loopDecision"]);
  });

  it("names the configured generator on a recalled lesson's outcome, with the count the commit returned", async () => {
    const { deps, seed } = setup();
    await seed(taskEvent());
    const state = await remembered(deps, eventState(deps, taskEvent()));
    const { result } = await decideAndPersist(deps, state);
    expect(result.outputs[0]?.value).toMatchObject({
      generator: "reused",
      occurrences: 2,
      deduplicated: true,
    });
  });
});
