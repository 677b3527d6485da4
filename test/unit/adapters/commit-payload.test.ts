import { describe, expect, it } from "vitest";
import { commitPayload, withOccurrences } from "../../../src/adapters/postgres/commit-payload.js";
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

// reflector_commit stores the outputs built with no count and the count beside them; the adapter
// builds what it publishes from the two, after the commit and on a replay. That must give what the
// processor would have built knowing the count, or a replay would differ from the first publish.
describe("outputs built from the template and the stored occurrence count", () => {
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
      expect(withOccurrences(build(null), null)).toEqual(build(null));
      // Only a unit that stores a reflection gets a count back from the commit.
      if (!unit.store) continue;
      for (const n of [1, 2, 7]) expect(withOccurrences(build(null), n)).toEqual(build(n));
    }
    expect(commits.at(-1)?.build(7)).toEqual(commits.at(-1)?.build(null));
  });

  it("counts into the outcome, not the loop decision, whichever comes first", () => {
    const message = (role: OutboundMessage["role"], value: Record<string, unknown>): OutboundMessage => ({
      role,
      key: "k",
      id: role,
      type: "t",
      subject: "s",
      time: "2026-11-20T10:00:05.000Z",
      value,
    });
    const decision = message("loopDecision", { decision: "finalize" });
    const outcome = message("reflectionAccepted", { occurrences: 1, deduplicated: false });
    expect(withOccurrences([decision, outcome], 3)).toEqual([
      decision,
      { ...outcome, value: { occurrences: 3, deduplicated: true } },
    ]);
    expect(withOccurrences([outcome, decision], 1)).toEqual([outcome, decision]);
    expect(withOccurrences([decision], 2)).toEqual([decision]);
  });

  it("sends the function the outputs as built, with nothing about where the count goes", async () => {
    const { processor, commits } = capturing();
    await processor.process(taskEvent({ eventId: "e-insert" }));
    const [insert] = commits;
    if (!insert) throw new Error("expected a commit");
    const payload = commitPayload(insert.unit, "hashing-256", insert.build(null));
    expect(payload).toMatchObject({ store: "insert", outputs: insert.build(null) });
    expect(payload).not.toHaveProperty("outcomeIndex");
  });
});
