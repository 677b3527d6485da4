import { describe, expect, it } from "vitest";
import { match } from "../../../../src/pipeline/stages/match.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, stageDeps } from "./stage-fixtures.js";

/** The same error as `taskEvent()` in a trace about something else entirely. */
const farTrace = () =>
  taskEvent({
    task: { description: "Summarise the quarterly marketing survey for the board" },
    events: [
      {
        eventId: "x1",
        type: "error_event",
        timestamp: "2026-11-20T10:00:30.000Z",
        actor: "Analyst",
        toolName: "survey_api",
        content: "survey export stalled while paging responses",
        error: { message: "survey export stalled", code: "QUERY_TIMEOUT" },
      },
    ],
  });

describe("stage match", () => {
  it("files an event that is not reflected on under nothing, without embedding it", async () => {
    const { deps, stages } = stageDeps();
    const success = taskEvent({
      outcome: "success",
      error: undefined,
      task: { description: "x", tier: "inline" },
    });
    expect(await match(deps, eventState(deps, success))).toBeNull();
    expect(stages).toEqual([]);
  });

  it("takes the first signature when no lesson is stored, and embeds the trace for it", async () => {
    const { deps } = stageDeps();
    const state = eventState(deps, taskEvent());
    const matched = await match(deps, state);
    expect(matched?.matched).toEqual({ candidate: state.facts.candidates[0], known: null, similarity: null });
    expect(matched?.traceVector.length).toBeGreaterThan(0);
  });

  it("reuses the stored lesson of a recurrence, from the cache that came with the processed check", async () => {
    const { deps, fakeStore, seed, stages } = stageDeps();
    await seed(taskEvent());
    const state = eventState(deps, taskEvent());
    const signature = state.facts.candidates[0]?.signature ?? "";
    const cached = await fakeStore.store.findBySignature("tenant-a", signature);
    const matched = await match(deps, { ...state, cached });
    expect(matched?.matched.known?.id).toBe(cached?.id);
    expect(matched?.matched.candidate.level).toBe("message");
    expect(matched?.matched.similarity).toBeGreaterThanOrEqual(deps.memory.reuseMinSimilarity);
    expect(stages).toEqual(["embed"]); // no store read: the cache answered
  });

  it("reads the store when the cache had nothing", async () => {
    const { deps, seed, stages } = stageDeps();
    await seed(taskEvent());
    const matched = await match(deps, eventState(deps, taskEvent()));
    expect(matched?.matched.known).not.toBeNull();
    expect(stages).toEqual(["embed", "store-read"]);
  });

  it("sends a trace far from the lesson's own to a more specific signature", async () => {
    const { deps, seed } = stageDeps();
    await seed(taskEvent());
    const state = eventState(deps, farTrace());
    const matched = await match(deps, state);
    expect(matched?.matched.known).toBeNull();
    expect(matched?.matched.candidate.level).not.toBe("message");
    expect(matched?.matched.candidate).toEqual(state.facts.candidates[1]);
  });

  it("does not reuse a lesson about a call for a run whose failing step is no call", async () => {
    const { deps, fakeStore, seed } = stageDeps();
    await seed(taskEvent());
    const state = eventState(deps, taskEvent());
    const signature = state.facts.candidates[0]?.signature ?? "";
    const stored = await fakeStore.store.findBySignature("tenant-a", signature);
    if (!stored) throw new Error("the seeded lesson is not stored");
    const attribution = stored.reflection.attribution ?? { confidence: 0.9 };
    // The stored lesson is about a call; the new run's failing step is not one.
    const aboutACall = {
      ...stored,
      reflection: {
        ...stored.reflection,
        attribution: { ...attribution, action: "cancel_reservation(reservation_id)" },
      },
    };
    const noCall = { ...state, facts: { ...state.facts, action: null }, cached: aboutACall };
    const matched = await match(deps, noCall);
    expect(matched?.matched.known?.id === stored.id && matched.matched.candidate.level === "message").toBe(
      false,
    );
    // The same run whose failing step is that call reuses it.
    const sameCall = { ...noCall, facts: { ...state.facts, action: "cancel_reservation(reservation_id)" } };
    expect((await match(deps, sameCall))?.matched.known?.id).toBe(stored.id);
  });
});
