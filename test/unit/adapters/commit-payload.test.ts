import { describe, expect, it } from "vitest";
import { commitPayload, fillOccurrences } from "../../../src/adapters/postgres/commit-payload.js";
import type { OutboundMessage, ReflectionStore, UnitOfWork } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

type Build = (occurrences: number | null) => OutboundMessage[];

/** The processor over in-memory ports, keeping every unit and `buildOutputs` it commits. */
function capturing() {
  const fake = createFakeStore();
  const commits: { unit: UnitOfWork; build: Build }[] = [];
  const store: ReflectionStore = {
    ...fake.store,
    commit: (unit, build) => {
      commits.push({ unit, build });
      return fake.store.commit(unit, build);
    },
  };
  const processor = createOfflineProcessor(
    { store, index: createFakeIndex().index },
    { clock: { now: () => new Date("2026-11-20T10:00:05.000Z") } },
  );
  return { processor, commits };
}

// reflector_commit stores outputs built with no count and fills the count in itself: that must
// give what the processor would have built knowing the count, or a replay would differ.
describe("commit outputs filled with the occurrence count", () => {
  it("match buildOutputs(count) for an insert, an increment and an unstored outcome", async () => {
    const { processor, commits } = capturing();
    await processor.process(taskEvent({ eventId: "e-insert" }));
    await processor.process(taskEvent({ eventId: "e-increment" }));
    await processor.process(
      taskEvent({
        eventId: "e-success",
        outcome: "success",
        error: undefined,
        task: { description: "hi", tier: "inline" },
      }),
    );
    expect(commits.map((c) => c.unit.store?.kind ?? null)).toEqual(["insert", "increment", null]);
    for (const { unit, build } of commits) {
      expect(fillOccurrences(unit, build(null), null)).toEqual(build(null));
      for (const n of [1, 2, 7]) {
        const expected = unit.store ? build(n) : build(null);
        expect(fillOccurrences(unit, build(null), n)).toEqual(expected);
      }
    }
  });

  it("tells the function which output carries the count", async () => {
    const { processor, commits } = capturing();
    await processor.process(taskEvent({ eventId: "e-insert" }));
    await processor.process(taskEvent({ eventId: "e-increment" }));
    const [insert, increment] = commits;
    if (!insert || !increment) throw new Error("expected two commits");
    const insertPayload = commitPayload(insert.unit, "hashing-256", insert.build(null));
    expect(insertPayload).toMatchObject({ store: "insert", outcomeIndex: 0, dedupeOnInsert: true });
    const incrementPayload = commitPayload(increment.unit, "hashing-256", increment.build(null));
    expect(incrementPayload).toMatchObject({ store: "increment", outcomeIndex: 0, dedupeOnInsert: false });
  });
});
