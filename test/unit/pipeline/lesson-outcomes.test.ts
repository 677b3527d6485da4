import { describe, expect, it } from "vitest";
import type { LoopDecision, ReflectionOutcome } from "../../../src/domain/contracts/index.js";
import type { AppliedOutcome, AppliedOutcomeStore } from "../../../src/domain/feedback/applied-outcome.js";
import { recordAppliedOutcomes } from "../../../src/pipeline/lesson-outcomes.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

const outcomeOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome | undefined;
const decisionOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role === "loopDecision")?.value as LoopDecision | undefined;

const now = new Date("2026-11-20T10:00:05.000Z");
const success = { outcome: "success" as const, error: undefined };

/**
 * A later task that retrieved lessons for its loop id (`POST /api/v1/lessons/for-task`) counts for
 * or against them as a rerun counts for the lessons its decision carried.
 */
function withRetrievals() {
  const store = createFakeStore();
  const recorded: { eventId: string; outcomes: AppliedOutcome[] }[] = [];
  const carried = new Map<string, string[]>();
  const retrieved = new Map<string, string[]>();
  const asked: { loopId: string; at: Date }[] = [];
  const appliedOutcomes: AppliedOutcomeStore = {
    lessonsCarriedTo: (_tenant, loopId) => Promise.resolve(carried.get(loopId) ?? []),
    lessonsRetrievedBy: (_tenant, loopId, at) => {
      asked.push({ loopId, at });
      return Promise.resolve(retrieved.get(loopId) ?? []);
    },
    recordApplied: (_tenant, eventId, outcomes) => {
      recorded.push({ eventId, outcomes: [...outcomes] });
      return Promise.resolve();
    },
  };
  const processor = createOfflineProcessor(
    { store: store.store, index: createFakeIndex().index },
    { clock: { now: () => now }, appliedOutcomes },
  );
  return { processor, recorded, carried, retrieved, asked, appliedOutcomes };
}

describe("a later task that retrieved lessons counts for or against them", () => {
  it("counts helped for every lesson retrieved for the loop when the task succeeds", async () => {
    const { processor, recorded, retrieved, asked } = withRetrievals();
    const first = await processor.process(taskEvent({ eventId: "evt-first", loopId: "loop-first" }));
    const lesson = outcomeOf(first.outputs)?.reflectionId ?? "";
    expect(lesson).not.toBe("");
    expect(recorded).toEqual([]);

    retrieved.set("loop-later", [lesson, "other-lesson"]);
    await processor.process(taskEvent({ eventId: "evt-later", loopId: "loop-later", ...success }));
    expect(recorded).toEqual([
      {
        eventId: "evt-later",
        outcomes: [
          { reflectionId: lesson, result: "helped" },
          { reflectionId: "other-lesson", result: "helped" },
        ],
      },
    ]);
    expect(asked.at(-1)).toEqual({ loopId: "loop-later", at: now });
  });

  it("counts failed again only for the retrieved lesson its failure is filed under", async () => {
    const { processor, recorded, retrieved } = withRetrievals();
    const first = await processor.process(taskEvent({ eventId: "evt-first", loopId: "loop-first" }));
    const lesson = outcomeOf(first.outputs)?.reflectionId ?? "";
    retrieved.set("loop-later", ["unrelated-lesson", lesson]);
    // The same failure again, in a new task (not a rerun) that had retrieved the lesson.
    await processor.process(
      taskEvent({ eventId: "evt-later", loopId: "loop-later", occurredAt: "2026-11-20T10:03:00.000Z" }),
    );
    expect(recorded).toEqual([
      { eventId: "evt-later", outcomes: [{ reflectionId: lesson, result: "failed_again" }] },
    ]);
  });

  it("counts nothing for a failure of another kind, or for a task that retrieved nothing", async () => {
    const { processor, recorded, retrieved } = withRetrievals();
    const first = await processor.process(taskEvent({ eventId: "evt-first", loopId: "loop-first" }));
    retrieved.set("loop-other", [outcomeOf(first.outputs)?.reflectionId ?? ""]);
    await processor.process(
      taskEvent({
        eventId: "evt-other",
        loopId: "loop-other",
        task: { description: "Upload the nightly report to the archive bucket" },
        error: {
          category: "tool_error",
          type: "permission_denied",
          message: "write access denied to bucket",
        },
        events: [
          {
            eventId: "u1",
            type: "tool_call",
            timestamp: "2026-11-20T10:00:00.000Z",
            toolName: "s3_put_object",
            content: "PUT s3://reports-archive/2026-11-19.csv",
          },
          {
            eventId: "u2",
            type: "error_event",
            timestamp: "2026-11-20T10:00:01.000Z",
            toolName: "s3_put_object",
            content: "AccessDenied: write access denied to bucket reports-archive",
          },
        ],
      }),
    );
    await processor.process(taskEvent({ eventId: "evt-none", loopId: "loop-none", ...success }));
    expect(recorded).toEqual([{ eventId: "evt-other", outcomes: [] }]);
  });

  it("counts a lesson both carried by the rerun decision and retrieved for the rerun once", async () => {
    const { processor, recorded, carried, retrieved } = withRetrievals();
    const first = await processor.process(taskEvent({ eventId: "evt-first", loopId: "loop-first" }));
    const decision = decisionOf(first.outputs);
    const lesson = decision?.lessons[0]?.reflectionId ?? "";
    carried.set("loop-first", [lesson]);
    retrieved.set(decision?.newLoopId ?? "", [lesson]);
    await processor.process(
      taskEvent({
        eventId: "evt-rerun",
        loopId: decision?.newLoopId ?? "",
        rerunOf: "loop-first",
        ...success,
      }),
    );
    expect(recorded).toEqual([
      { eventId: "evt-rerun", outcomes: [{ reflectionId: lesson, result: "helped" }] },
    ]);
  });

  it("reads no retrievals from a store that keeps none", async () => {
    const recorded: AppliedOutcome[][] = [];
    const store: AppliedOutcomeStore = {
      lessonsCarriedTo: () => Promise.resolve([]),
      recordApplied: (_t, _e, outcomes) => {
        recorded.push([...outcomes]);
        return Promise.resolve();
      },
    };
    const out = await recordAppliedOutcomes(store, taskEvent({ ...success }), null, now);
    expect(out).toEqual([]);
    expect(recorded).toEqual([]);
  });
});
