import { describe, expect, it } from "vitest";
import type { LoopDecision, ReflectionOutcome } from "../../../src/domain/contracts/index.js";
import type { AppliedOutcome, AppliedOutcomeStore } from "../../../src/domain/feedback/applied-outcome.js";
import { filedUnderOf, recordAppliedOutcomes } from "../../../src/pipeline/lesson-outcomes.js";
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

describe("an event delivered again after a crash between its commit and its outcomes", () => {
  it("counts the outcomes from the committed outputs, once, as the first delivery would have", async () => {
    const store = createFakeStore();
    const stored = new Map<string, AppliedOutcome[]>();
    const retrieved = new Map<string, string[]>();
    let crashOnce = false;
    const appliedOutcomes: AppliedOutcomeStore = {
      lessonsCarriedTo: () => Promise.resolve([]),
      lessonsRetrievedBy: (_tenant, loopId) => Promise.resolve(retrieved.get(loopId) ?? []),
      // As the Postgres store: one row per (event, lesson), a second write of an event adds nothing.
      recordApplied: (_tenant, eventId, outcomes) => {
        if (crashOnce) {
          crashOnce = false;
          return Promise.reject(new Error("process killed after the commit"));
        }
        if (!stored.has(eventId)) stored.set(eventId, [...outcomes]);
        return Promise.resolve();
      },
    };
    const processor = createOfflineProcessor(
      { store: store.store, index: createFakeIndex().index },
      { clock: { now: () => now }, appliedOutcomes },
    );
    const first = await processor.process(taskEvent({ eventId: "evt-first", loopId: "loop-first" }));
    const lesson = outcomeOf(first.outputs)?.reflectionId ?? "";
    retrieved.set("loop-ok", [lesson]);
    retrieved.set("loop-fails", [lesson]);

    const ok = taskEvent({ eventId: "evt-ok", loopId: "loop-ok", ...success });
    crashOnce = true;
    await expect(processor.process(ok, "t/0/1")).rejects.toThrow("killed");
    expect(stored.has("evt-ok")).toBe(false);
    // Redelivered: the event is found committed, its outputs go out again, and it counts.
    const again = await processor.process(ok, "t/0/1");
    expect(again.status).toBe("replayed");
    expect(stored.get("evt-ok")).toEqual([{ reflectionId: lesson, result: "helped" }]);

    const fails = taskEvent({
      eventId: "evt-fails",
      loopId: "loop-fails",
      occurredAt: "2026-11-20T10:04:00.000Z",
    });
    crashOnce = true;
    await expect(processor.process(fails, "t/0/2")).rejects.toThrow("killed");
    await processor.process(fails, "t/0/2");
    // The failure is filed under the lesson it retrieved, read from the outcome it committed.
    expect(stored.get("evt-fails")).toEqual([{ reflectionId: lesson, result: "failed_again" }]);
  });

  it("reads the lesson a committed event was filed under only when memory kept one", () => {
    const output = (role: "reflectionAccepted" | "loopDecision", value: Record<string, unknown>) =>
      ({ role, key: "k", id: "i", type: "t", subject: "s", time: "x", value }) as const;
    expect(filedUnderOf([output("loopDecision", { reflectionId: "d" })])).toBeNull();
    expect(filedUnderOf([output("reflectionAccepted", { reflectionId: "r", stored: false })])).toBeNull();
    expect(
      filedUnderOf([
        output("loopDecision", {}),
        output("reflectionAccepted", { reflectionId: "r", stored: true }),
      ]),
    ).toBe("r");
  });
});
