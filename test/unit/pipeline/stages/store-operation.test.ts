import { describe, expect, it } from "vitest";
import { stableId } from "../../../../src/domain/stable-id.js";
import type { Judged, ReflectedState } from "../../../../src/pipeline/processing-state.js";
import { match } from "../../../../src/pipeline/stages/match.js";
import { reflect } from "../../../../src/pipeline/stages/reflect.js";
import { storeOperation } from "../../../../src/pipeline/stages/store-operation.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, stageDeps } from "./stage-fixtures.js";

/** A new lesson, judged, for one trace. */
async function judgedState(): Promise<ReflectedState & { judged: Judged }> {
  const { deps } = stageDeps();
  const matched = await match(deps, eventState(deps, taskEvent()));
  if (!matched) throw new Error("a failure is always filed under a signature");
  const reflected = await reflect(deps, { ...matched, rejudged: null });
  if (!reflected.judged) throw new Error("a new trace is reflected on");
  return { ...reflected, judged: reflected.judged };
}

const withStorage = (state: ReflectedState & { judged: Judged }, storage: Judged["storage"]) => ({
  ...state,
  judged: { ...state.judged, storage },
});

describe("stage store operation", () => {
  it("inserts a new lesson under its signature's stable id, with the trace's vector", async () => {
    const state = await judgedState();
    const { memory } = storeOperation(withStorage(state, { action: "add" }));
    const signature = state.matched.candidate.signature;
    expect(memory?.op).toEqual({ kind: "insert", reflection: memory?.created });
    expect(memory?.created).toMatchObject({
      id: stableId("reflection", "tenant-a", signature),
      signatureType: state.matched.candidate.errorType,
      reflection: state.judged.reflection,
      verdict: state.judged.verdict,
      sourceVector: state.traceVector,
    });
  });

  it("merges a near-duplicate into the stored lesson, replacing its text only when better judged", async () => {
    const state = await judgedState();
    const update = storeOperation(withStorage(state, { action: "update", into: "r-1", similarity: 0.97 }));
    expect(update.memory?.op).toMatchObject({
      kind: "merge",
      reflectionId: "r-1",
      signature: state.matched.candidate.signature,
      sourceVector: state.traceVector,
      replacement: { reflection: state.judged.reflection },
    });
    expect(update.memory?.created).toBeNull();
    const noop = storeOperation(withStorage(state, { action: "noop", into: "r-1", similarity: 0.97 }));
    expect(noop.memory?.op).toMatchObject({ kind: "merge", reflectionId: "r-1", replacement: null });
  });

  it("keeps nothing of a lesson memory refuses or the judge rejected", async () => {
    const state = await judgedState();
    expect(storeOperation(withStorage(state, { action: "none", reason: "shallow" })).memory).toMatchObject({
      op: null,
      created: null,
      judged: { storage: { action: "none" } },
    });
    const rejected = { ...state, judged: { ...state.judged, verdict: "rejected" as const } };
    expect(storeOperation(rejected).memory?.op).toBeNull();
  });

  it("counts one more occurrence of a recalled lesson, with its new judgement", async () => {
    const { deps, seed } = stageDeps();
    await seed(taskEvent());
    const matched = await match(deps, eventState(deps, taskEvent()));
    const known = matched?.matched.known;
    if (!matched || !known) throw new Error("the lesson is stored");
    const rejudged = {
      verdict: "accepted" as const,
      qualityScore: 0.9,
      metrics: known.metrics,
      violations: [],
    };
    const { memory } = storeOperation({ ...matched, rejudged, judged: null });
    expect(memory?.op).toEqual({ kind: "increment", reflectionId: known.id, rejudged });
    expect(memory?.created).toBeNull();
  });
});
