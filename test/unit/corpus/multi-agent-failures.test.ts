import { describe, expect, it } from "vitest";
import { TaskCompletedV1 } from "../../../src/domain/contracts/index.js";
import { bigTrace, multiAgentFailures } from "../../support/corpus/multi-agent-failures.js";

const corpus = multiAgentFailures();
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

function recurrences(traces: typeof corpus) {
  const seen = new Map<string, (typeof corpus)[number]>();
  const repeats: { trace: (typeof corpus)[number]; original: (typeof corpus)[number] }[] = [];
  for (const trace of traces) {
    const original = seen.get(trace.causeId);
    if (original) repeats.push({ trace, original });
    else seen.set(trace.causeId, trace);
  }
  return repeats;
}

describe("multi-agent failure corpus", () => {
  it("has at least 120 failed tasks from at least 30 task families", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(120);
    expect(new Set(corpus.map((t) => t.family)).size).toBeGreaterThanOrEqual(30);
  });

  it("validates every event against TaskCompletedV1", () => {
    const failures = corpus
      .filter((t) => !TaskCompletedV1.safeParse(t.event).success)
      .map((t) => t.event.eventId);
    expect(failures).toEqual([]);
  });

  it("is a failure with the same generic error everywhere, overridable", () => {
    for (const { event } of corpus) {
      expect(event.outcome).toBe("failure");
      expect(event.error).toEqual({
        category: "evaluation_error",
        message: "the final answer was judged incorrect",
      });
      expect(event.task.answer?.length).toBeGreaterThan(0);
    }
    const custom = multiAgentFailures({ tenantId: "tenant-x", errorMessage: "wrong answer" });
    expect(
      custom.every((t) => t.event.tenantId === "tenant-x" && t.event.error?.message === "wrong answer"),
    ).toBe(true);
  });

  it("names an actor on every step and keeps 6–130 steps per task", () => {
    for (const { event } of corpus) {
      expect(event.events.length).toBeGreaterThanOrEqual(6);
      expect(event.events.length).toBeLessThanOrEqual(130);
      expect(event.events.every((step) => typeof step.actor === "string" && step.actor.length > 0)).toBe(
        true,
      );
    }
  });

  it("places the ground truth on a step of the failing actor", () => {
    for (const trace of corpus) {
      const step = trace.event.events[trace.failingStepIndex];
      expect(step, trace.event.eventId).toBeDefined();
      expect(step?.actor).toBe(trace.failingActor);
    }
  });

  it("has long page dumps but respects the step and event size limits", () => {
    const withBigStep = corpus.filter((t) => t.event.events.some((s) => s.content.length >= 20_000));
    expect(withBigStep.length).toBeGreaterThanOrEqual(5);
    for (const { event } of corpus) {
      expect(Math.max(...event.events.map((s) => s.content.length))).toBeLessThanOrEqual(60_000);
      expect(bytes(event)).toBeLessThanOrEqual(400_000);
    }
  });

  it("has 10–20 % true recurrences: same family, same failing actor, different task", () => {
    const repeats = recurrences(corpus);
    const share = repeats.length / corpus.length;
    expect(share).toBeGreaterThanOrEqual(0.1);
    expect(share).toBeLessThanOrEqual(0.2);
    for (const { trace, original } of repeats) {
      expect(trace.family).toBe(original.family);
      expect(trace.failingActor).toBe(original.failingActor);
      expect(trace.event.task.description).not.toBe(original.event.task.description);
      expect(corpus.indexOf(trace)).toBeGreaterThan(corpus.indexOf(original));
    }
  });

  it("has unique ids and increasing timestamps", () => {
    expect(new Set(corpus.map((t) => t.event.eventId)).size).toBe(corpus.length);
    expect(new Set(corpus.map((t) => t.event.loopId)).size).toBe(corpus.length);
    const stepIds = corpus.flatMap((t) => t.event.events.map((s) => s.eventId));
    expect(new Set(stepIds).size).toBe(stepIds.length);
    let previous = 0;
    for (const { event } of corpus) {
      for (const step of event.events) {
        const at = Date.parse(step.timestamp);
        expect(at).toBeGreaterThan(previous);
        previous = at;
      }
      expect(Date.parse(event.occurredAt)).toBeGreaterThan(previous);
      previous = Date.parse(event.occurredAt);
    }
  });

  it("is deterministic", () => {
    expect(multiAgentFailures()).toEqual(corpus);
  });
});

describe("bigTrace", () => {
  const big = bigTrace();

  it("is a 130-step, ~340 KB failing trace with one 80,000-character step", () => {
    expect(big.event.events).toHaveLength(130);
    expect(big.event.events.filter((s) => s.content.length === 80_000)).toHaveLength(1);
    expect(bytes(big.event)).toBeGreaterThan(300_000);
    expect(bytes(big.event)).toBeLessThan(400_000);
    expect(big.event.outcome).toBe("failure");
    expect(big.event.events[big.failingStepIndex]?.actor).toBe(big.failingActor);
  });

  it("is deterministic", () => {
    expect(bigTrace()).toEqual(big);
  });
});
