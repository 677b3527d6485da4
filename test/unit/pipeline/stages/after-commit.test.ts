import { describe, expect, it } from "vitest";
import type { AppliedOutcomeStore } from "../../../../src/domain/feedback/applied-outcome.js";
import type { PersistedState } from "../../../../src/pipeline/processing-state.js";
import { afterCommit, cachedAfterCommit } from "../../../../src/pipeline/stages/after-commit.js";
import { decideAndPersist } from "../../../../src/pipeline/stages/decide-and-persist.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, remembered, stageDeps } from "./stage-fixtures.js";

async function persisted(
  fixture: ReturnType<typeof stageDeps>,
  event = taskEvent(),
): Promise<PersistedState> {
  const state = await remembered(fixture.deps, eventState(fixture.deps, event));
  return decideAndPersist(fixture.deps, state);
}

function appliedStore(carried: string[]) {
  const asked: string[] = [];
  const recorded: string[] = [];
  const store: AppliedOutcomeStore = {
    lessonsCarriedTo: (_tenantId, loopId) => {
      asked.push(loopId);
      return Promise.resolve(carried);
    },
    recordApplied: (_tenantId, eventId) => {
      recorded.push(eventId);
      return Promise.resolve();
    },
  };
  return { store, asked, recorded };
}

describe("stage after commit", () => {
  it("marks the event processed and caches the new lesson with the count the commit returned", async () => {
    const fixture = stageDeps();
    const state = await persisted(fixture);
    const { event } = state.facts;
    await afterCommit(fixture.deps, state);
    expect(fixture.fakeIndex.events.has(`${event.tenantId}|${event.eventId}`)).toBe(true);
    const signature = state.memory?.matched.candidate.signature ?? "";
    const cached = await fixture.fakeIndex.index.cached(event.tenantId, signature);
    expect(cached).toMatchObject({ id: state.memory?.created?.id, signature, occurrences: 1 });
  });

  it("caches a recalled lesson under the signature it was found by, with its new judgement", async () => {
    const fixture = stageDeps();
    await fixture.seed(taskEvent());
    const state = await remembered(fixture.deps, eventState(fixture.deps, taskEvent()));
    const memory = state.memory;
    if (!memory?.matched.known) throw new Error("the lesson is stored");
    const rejudged = {
      verdict: "accepted" as const,
      qualityScore: 0.91,
      metrics: memory.matched.known.metrics,
      violations: [],
    };
    expect(cachedAfterCommit({ ...memory, rejudged })).toMatchObject({
      id: memory.matched.known.id,
      signature: memory.matched.candidate.signature,
      verdict: "accepted",
      qualityScore: 0.91,
    });
  });

  it("caches nothing for a merge: the lesson it changed is stored under another signature", () => {
    const merge = {
      kind: "merge" as const,
      reflectionId: "r-1",
      signature: "s",
      sourceVector: null,
      replacement: null,
    };
    const matched = {
      candidate: {
        signature: "s",
        errorType: "e",
        content: "c",
        source: "error" as const,
        level: "message" as const,
      },
      known: null,
      similarity: null,
    };
    expect(cachedAfterCommit({ matched, judged: null, rejudged: null, op: merge, created: null })).toBeNull();
  });

  it("counts the carried lessons of a rerun, and asks nothing for a first run", async () => {
    const fixture = stageDeps();
    const applied = appliedStore(["r-1"]);
    const deps = { ...fixture.deps, appliedOutcomes: applied.store };
    const first = await persisted(fixture);
    await afterCommit(deps, first);
    expect(applied.asked).toEqual([]);
    const rerun = taskEvent({ rerunOf: first.facts.event.loopId, outcome: "success", error: undefined });
    const state = await persisted(fixture, rerun);
    await afterCommit(deps, state);
    expect(applied.asked).toEqual([first.facts.event.loopId]);
    expect(applied.recorded).toEqual([rerun.eventId]);
  });
});
