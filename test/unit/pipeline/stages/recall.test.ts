import { describe, expect, it } from "vitest";
import { eventFacts } from "../../../../src/pipeline/event-facts.js";
import { recall } from "../../../../src/pipeline/stages/recall.js";
import { taskEvent } from "../../../support/task-events.js";
import { stageDeps } from "./stage-fixtures.js";

describe("stage recall", () => {
  it("brings the first signature's cached lesson for an event not processed yet, in one index call", async () => {
    const fixture = stageDeps();
    await fixture.seed(taskEvent());
    fixture.stages.length = 0;
    const facts = eventFacts(taskEvent(), "full");
    const recalled = await recall(fixture.deps, facts);
    expect(recalled.processed).toBeNull();
    expect(recalled.cached?.signature).toBe(facts.candidates[0]?.signature);
    expect(fixture.stages).toEqual(["index"]);
  });

  it("finds the stored commit of a processed event", async () => {
    const fixture = stageDeps();
    const event = taskEvent();
    const first = await fixture.seed(event);
    const recalled = await recall(fixture.deps, eventFacts(event, "full"));
    expect(recalled.processed?.outputs).toEqual(first.outputs);
  });

  it("trusts only the store: an index that remembers an event Postgres never committed is a cache gone stale", async () => {
    const fixture = stageDeps();
    const event = taskEvent();
    await fixture.fakeIndex.index.markProcessed(event.tenantId, event.eventId, null);
    expect((await recall(fixture.deps, eventFacts(event, "full"))).processed).toBeNull();
  });
});
