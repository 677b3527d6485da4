import { describe, expect, it } from "vitest";
import { jsonSchemaFor } from "../../../src/domain/contracts/json-schema.js";
import {
  LoopDecisionV1,
  type LoopDecision,
  type ReflectionOutcome,
} from "../../../src/domain/contracts/index.js";
import type { AppliedOutcome, AppliedOutcomeStore } from "../../../src/domain/feedback/applied-outcome.js";
import type { LoopDecisionResult } from "../../../src/domain/guardrails/decide-loop.js";
import { lessonPrompt } from "../../../src/domain/lessons/lesson-prompt.js";
import { decisionValue, rerunLessons } from "../../../src/pipeline/decision-message.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

const outcomeOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome | undefined;
const decisionOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role === "loopDecision")?.value as LoopDecision | undefined;

function setup() {
  const store = createFakeStore();
  const index = createFakeIndex();
  const processor = createOfflineProcessor(
    { store: store.store, index: index.index },
    { clock: { now: () => new Date("2026-11-20T10:00:05.000Z") } },
  );
  return { processor, store };
}

describe("a rerun decision carries the lesson for its failure", () => {
  it("carries the lesson just written, with a prompt built from its strategy and adjustments", async () => {
    const { processor } = setup();
    const result = await processor.process(taskEvent());
    const outcome = outcomeOf(result.outputs);
    const decision = decisionOf(result.outputs);
    expect(decision?.decision).toBe("rerun");
    expect(outcome?.stored).toBe(true);
    expect(decision?.lessons).toHaveLength(1);
    const lesson = decision?.lessons[0];
    expect(lesson?.reflectionId).toBe(outcome?.reflectionId);
    expect(lesson?.strategyText).toBe(outcome?.reflection.strategyText);
    expect(lesson?.adjustments).toEqual(outcome?.reflection.adjustments);
    expect(lesson?.prompt).toContain(outcome?.reflection.strategyText ?? "(none)");
    expect(LoopDecisionV1.parse(decision)).toEqual(decision);
  });

  it("carries the recalled lesson when the same failure comes back", async () => {
    const { processor } = setup();
    const first = await processor.process(taskEvent());
    const again = await processor.process(
      taskEvent({ eventId: "evt-again", loopId: "loop-again", occurredAt: "2026-11-20T10:01:00.000Z" }),
    );
    const recalled = outcomeOf(again.outputs);
    expect(recalled?.deduplicated).toBe(true);
    const decision = decisionOf(again.outputs);
    expect(decision?.decision).toBe("rerun");
    expect(decision?.lessons.map((l) => l.reflectionId)).toEqual([outcomeOf(first.outputs)?.reflectionId]);
  });

  it("carries nothing when the decision is not a rerun", async () => {
    const { processor } = setup();
    const result = await processor.process(
      taskEvent({ outcome: "success", error: undefined, task: { description: "say hi", tier: "inline" } }),
    );
    expect(decisionOf(result.outputs)).toMatchObject({ decision: "finalize", lessons: [] });
    const halted = { decision: "halt" } as LoopDecisionResult;
    expect(rerunLessons(halted, [{ reflectionId: "r", strategyText: "s", adjustments: [] }])).toEqual([]);
  });

  it("decodes an older decision without the field as carrying no lessons", () => {
    const event = taskEvent();
    const loop = {
      decision: "rerun",
      rootLoopId: event.loopId,
      newLoopId: "n",
      rerunCount: 0,
      maxReruns: 3,
      reason: "r",
      reasonDetail: "d",
      triggers: [],
      fatigue: 0,
      fatigueIncreased: false,
      biasEcho: false,
      repeatedTags: [],
      forceFinalize: false,
      overriddenBy: null,
      alignment: null,
      drift: null,
    } as unknown as LoopDecisionResult;
    const { lessons: _dropped, ...older } = decisionValue(event, loop, new Date());
    expect(LoopDecisionV1.parse(older).lessons).toEqual([]);
  });

  it("leaves the field out of the published schema, which stays as first registered and admits it", () => {
    const schema = jsonSchemaFor("loop-decision.v1") as {
      properties: object;
      additionalProperties?: unknown;
    };
    expect(Object.keys(schema.properties)).not.toContain("lessons");
    expect(Object.keys(schema.properties)).toContain("decidedAt");
    // Open to fields it does not name: a decision with lessons is valid under it.
    expect(schema.additionalProperties).toBeUndefined();
  });
});

describe("lessonPrompt", () => {
  it("states the strategy and the adjustments, and falls back to the learning", () => {
    const text = lessonPrompt({ strategyText: "Ask before  booking.", adjustments: ["a", " ", "b"] });
    expect(text).toContain("Ask before booking.");
    expect(text).toContain('- "a"\n- "b"');
    expect(lessonPrompt({ strategyText: null, adjustments: [], learning: "Verify totals." })).toContain(
      "Verify totals.",
    );
  });

  it("keeps at most six adjustments and 2,000 characters", () => {
    const many = Array.from({ length: 10 }, (_, i) => `step ${String(i)} ${"x".repeat(400)}`);
    const text = lessonPrompt({ strategyText: "s", adjustments: many });
    expect(text).not.toContain("step 6");
    expect(text.length).toBeLessThanOrEqual(2000);
  });
});

describe("a rerun's outcome counts for or against the lessons it carried", () => {
  function withOutcomes() {
    const store = createFakeStore();
    const index = createFakeIndex();
    const recorded: { eventId: string; outcomes: AppliedOutcome[] }[] = [];
    const decisions = new Map<string, string[]>();
    const appliedOutcomes: AppliedOutcomeStore = {
      lessonsCarriedTo: (_tenant, loopId) => Promise.resolve(decisions.get(loopId) ?? []),
      recordApplied: (_tenant, eventId, outcomes) => {
        recorded.push({ eventId, outcomes: [...outcomes] });
        return Promise.resolve();
      },
    };
    const processor = createOfflineProcessor(
      { store: store.store, index: index.index },
      { clock: { now: () => new Date("2026-11-20T10:00:05.000Z") }, appliedOutcomes },
    );
    const run = async (event: ReturnType<typeof taskEvent>) => {
      const result = await processor.process(event);
      const decision = decisionOf(result.outputs);
      if (decision)
        decisions.set(
          event.loopId,
          decision.lessons.map((l) => l.reflectionId),
        );
      return decision;
    };
    return { run, recorded };
  }

  it("counts helped when the rerun that carried the lesson succeeds", async () => {
    const { run, recorded } = withOutcomes();
    const first = await run(taskEvent());
    const lesson = first?.lessons[0]?.reflectionId;
    expect(lesson).toBeDefined();
    await run(
      taskEvent({
        eventId: "evt-rerun",
        loopId: first?.newLoopId ?? "",
        rerunOf: first?.loopId ?? "",
        outcome: "success",
        error: undefined,
        occurredAt: "2026-11-20T10:02:00.000Z",
      }),
    );
    expect(recorded).toEqual([
      { eventId: "evt-rerun", outcomes: [{ reflectionId: lesson, result: "helped" }] },
    ]);
  });

  it("counts failed again when the rerun fails the same way, and nothing for events that are not reruns", async () => {
    const { run, recorded } = withOutcomes();
    const first = await run(taskEvent());
    expect(recorded).toEqual([]);
    await run(
      taskEvent({
        eventId: "evt-rerun-fails",
        loopId: first?.newLoopId ?? "",
        rerunOf: first?.loopId ?? "",
        occurredAt: "2026-11-20T10:02:00.000Z",
      }),
    );
    expect(recorded).toEqual([
      {
        eventId: "evt-rerun-fails",
        outcomes: [{ reflectionId: first?.lessons[0]?.reflectionId, result: "failed_again" }],
      },
    ]);
  });
});
