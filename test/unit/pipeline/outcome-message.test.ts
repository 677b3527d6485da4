import { describe, expect, it } from "vitest";
import type { ReflectionOutcome } from "../../../src/domain/contracts/index.js";
import { withOccurrences } from "../../../src/pipeline/outcome-message.js";
import type { OutboundMessage } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

function setup() {
  const store = createFakeStore();
  const worker = () =>
    createOfflineProcessor(
      { store: store.store, index: createFakeIndex().index },
      { clock: { now: () => new Date("2026-11-20T10:00:05.000Z") } },
    );
  // Two processes over one store (two pods): one process writes a signature's first lesson alone.
  return { processor: worker(), other: worker(), store };
}

const outcomeOf = (outputs: OutboundMessage[]) =>
  outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome | undefined;

const message = (role: OutboundMessage["role"], value: Record<string, unknown>): OutboundMessage => ({
  role,
  key: "k",
  id: role,
  type: "t",
  subject: "s",
  time: "2026-11-20T10:00:05.000Z",
  value,
});

// The store keeps the outputs as built before the commit and the count beside them; the pipeline
// applies the count, after the commit and on a replay, so a replay publishes what the first did.
describe("the published outcome carries the count the commit stored", () => {
  it("counts into the outcome, not the loop decision, whichever comes first", () => {
    const decision = message("loopDecision", { decision: "finalize" });
    const outcome = message("reflectionAccepted", { occurrences: 1, deduplicated: false });
    expect(withOccurrences([decision, outcome], 3)).toEqual([
      decision,
      { ...outcome, value: { occurrences: 3, deduplicated: true } },
    ]);
    expect(withOccurrences([outcome, decision], 1)).toEqual([outcome, decision]);
    expect(withOccurrences([decision], 2)).toEqual([decision]);
    expect(withOccurrences([outcome, decision], null)).toEqual([outcome, decision]);
  });

  it("a recurrence's outcome says the stored count, and its replay says the same", async () => {
    const { processor } = setup();
    await processor.process(taskEvent({ eventId: "e-1" }), "in/0/1");
    const second = await processor.process(taskEvent({ eventId: "e-2" }), "in/0/2");
    expect(outcomeOf(second.outputs)).toMatchObject({ occurrences: 2, deduplicated: true });
    const replayed = await processor.process(taskEvent({ eventId: "e-2" }), "in/0/2");
    expect(replayed).toMatchObject({ status: "replayed", outputs: second.outputs });
  });

  it("a new lesson counted more than once was merged into the one another worker stored first", () => {
    const memory = { action: "add", similarity: null, signatureLevel: "message" };
    const outcome = message("reflectionAccepted", { occurrences: 1, deduplicated: false, memory });
    expect(withOccurrences([outcome], 2)).toEqual([
      { ...outcome, value: { occurrences: 2, deduplicated: true, memory: { ...memory, action: "noop" } } },
    ]);
    expect(withOccurrences([outcome], 1)).toEqual([outcome]);
    const reused = message("reflectionAccepted", { occurrences: 1, memory: { ...memory, action: "reuse" } });
    expect(withOccurrences([reused], 3)).toEqual([
      { ...reused, value: { occurrences: 3, memory: reused.value.memory } },
    ]);
  });

  it("two workers that insert the same lesson at once: the later one's outcome, and its replay, say the second was merged into the first, counted twice", async () => {
    const { processor, other, store } = setup();
    const [a, b] = await Promise.all([
      processor.process(taskEvent({ eventId: "e-a" }), "in/0/1"),
      other.process(taskEvent({ eventId: "e-b" }), "in/1/1"),
    ]);
    expect(store.reflections.size).toBe(1);
    const counted = [a, b].map((r) => outcomeOf(r.outputs));
    expect(counted.map((o) => [o?.occurrences, o?.deduplicated])).toEqual([
      [1, false],
      [2, true],
    ]);
    // The later one was filed under the lesson the first stored: it names that one, merged and counted.
    expect(counted.map((o) => o?.memory?.action)).toEqual(["add", "noop"]);
    // One id: a lesson's id comes from its tenant and signature, so both name the stored one.
    expect(new Set(counted.map((o) => o?.reflectionId))).toEqual(new Set(store.reflections.keys()));
    // Its replay (the same record after a crash) publishes the count again, not the outputs as built.
    const later = counted[1]?.sourceEventId === "e-b" ? b : a;
    const replayed = await processor.process(
      taskEvent({ eventId: counted[1]?.sourceEventId }),
      later === b ? "in/1/1" : "in/0/1",
    );
    expect(replayed).toMatchObject({ status: "replayed", outputs: later.outputs });
  });
});
