import { describe, expect, it } from "vitest";
import { commitPayload } from "../../../src/adapters/postgres/commit-payload.js";
import type { OutboundMessage, ReflectionStore, UnitOfWork } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

/** The processor over in-memory ports, keeping every unit and the outputs it commits. */
function capturing() {
  const fake = createFakeStore();
  const commits: { unit: UnitOfWork; outputs: OutboundMessage[] }[] = [];
  const store: ReflectionStore = {
    ...fake.store,
    commit: (unit, outputs) => {
      commits.push({ unit, outputs });
      return fake.store.commit(unit, outputs);
    },
  };
  const processor = createOfflineProcessor(
    { store, index: createFakeIndex().index },
    { clock: { now: () => new Date("2026-11-20T10:00:05.000Z") } },
  );
  return { processor, commits };
}

describe("the commit function's argument", () => {
  it("sends the function the outputs as built, with nothing about where the count goes", async () => {
    const { processor, commits } = capturing();
    await processor.process(taskEvent({ eventId: "e-insert" }));
    const [insert] = commits;
    if (!insert) throw new Error("expected a commit");
    const payload = commitPayload(insert.unit, "hashing-256", insert.outputs);
    expect(payload).toMatchObject({ store: "insert", outputs: insert.outputs });
    expect(payload).not.toHaveProperty("outcomeIndex");
  });
});
