import { describe, expect, it } from "vitest";
import {
  nearestSameLesson,
  sameFailingStep,
  type MergeCandidate,
  sameCause,
} from "../../../../src/domain/memory/same-lesson.js";

const surfer = { actor: "WebSurfer", toolName: "web_search" };
const planner = { actor: "Orchestrator" };
const candidate = (id: string, embedding: number[], failingStep: MergeCandidate["failingStep"]) => ({
  id,
  embedding,
  qualityScore: 0.8,
  failingStep,
});

describe("same failing step", () => {
  it("agrees when agent and tool are the same, and not when either differs", () => {
    expect(sameFailingStep(surfer, { actor: "WebSurfer", toolName: "web_search" })).toBe(true);
    expect(sameFailingStep(surfer, { actor: "WebSurfer", toolName: "fetch_page" })).toBe(false);
    expect(sameFailingStep(surfer, { actor: "Coder", toolName: "web_search" })).toBe(false);
    expect(sameFailingStep(planner, { actor: "Orchestrator", toolName: "plan" })).toBe(false);
    expect(sameFailingStep({}, {})).toBe(true);
    expect(sameFailingStep(surfer, { actor: " websurfer", toolName: "Web_Search" })).toBe(true);
  });

  it("lets a lesson that names no failing step agree with any", () => {
    expect(sameFailingStep(null, surfer)).toBe(true);
    expect(sameFailingStep(surfer, null)).toBe(true);
  });

  it("lets a guessed step (confidence below 0.5) agree with any, a firm one keep lessons apart", () => {
    const guessBook = { actor: "Booker", toolName: "hotel_book", confidence: 0.3 };
    const guessCancel = { actor: "Booker", toolName: "hotel_cancel", confidence: 0.3 };
    expect(sameFailingStep(guessBook, guessCancel)).toBe(true);
    expect(sameFailingStep({ ...guessBook, confidence: 0.5 }, { ...guessCancel, confidence: 0.9 })).toBe(
      false,
    );
    expect(sameFailingStep({ ...guessBook, confidence: 0.8 }, guessCancel)).toBe(true);
  });
});

describe("nearest same lesson", () => {
  it("is the most similar stored lesson that blames the same step", () => {
    const nearest = nearestSameLesson({ embedding: [1, 0], failingStep: surfer }, [
      candidate("planner", [1, 0], planner), // identical text, another step: not the same lesson
      candidate("far", [0, 1], surfer),
      candidate("near", [0.96, 0.28], surfer),
    ]);
    expect(nearest?.id).toBe("near");
    expect(nearest?.similarity).toBeCloseTo(0.96, 5);
    expect(nearest?.qualityScore).toBe(0.8);
  });

  it("is none when every stored lesson blames another step, however alike the text", () => {
    expect(
      nearestSameLesson({ embedding: [1, 0], failingStep: surfer }, [candidate("planner", [1, 0], planner)]),
    ).toBeNull();
  });

  it("compares text alone when either lesson names no failing step", () => {
    expect(
      nearestSameLesson({ embedding: [1, 0], failingStep: null }, [candidate("planner", [1, 0], planner)])
        ?.id,
    ).toBe("planner");
    expect(
      nearestSameLesson({ embedding: [1, 0], failingStep: surfer }, [candidate("old", [1, 0], null)])?.id,
    ).toBe("old");
  });

  it("skips vectors of another size (another embedder)", () => {
    expect(
      nearestSameLesson({ embedding: [1, 0], failingStep: surfer }, [candidate("other", [1, 0, 0], surfer)]),
    ).toBeNull();
  });
});

describe("same cause, for reuse", () => {
  const write = { actor: "assistant", toolName: "modify_pending_order_items", confidence: 0.86 };
  const inferred = { basis: "first_state_change" as const, attribution: write };

  it("reuses an inferred step's lesson only for the same request", () => {
    expect(sameCause(write, inferred, true)).toBe(true);
    // The same call for another user's request may have gone wrong another way.
    expect(sameCause(write, inferred, false)).toBe(false);
    expect(sameCause(undefined, inferred, true)).toBe(false);
  });

  it("reuses the lesson of a reported error on the same tool, whoever's request and whichever agent a model named", () => {
    const reported = {
      basis: "explicit_error" as const,
      attribution: { ...write, toolName: "postgres_query" },
    };
    expect(sameCause({ actor: "assistant", toolName: "postgres_query" }, reported, false)).toBe(true);
    expect(sameCause(undefined, reported, false)).toBe(true);
    expect(sameCause({ actor: "Coder", toolName: "postgres_query", confidence: 0.9 }, reported, false)).toBe(
      true,
    );
    expect(sameCause({ actor: "assistant", toolName: "http_get", confidence: 0.9 }, reported, false)).toBe(
      false,
    );
  });

  it("never reuses for a failure whose cause nothing in the trace shows", () => {
    const fallback = {
      basis: "structural_fallback" as const,
      attribution: { actor: "assistant", confidence: 0.06 },
    };
    expect(sameCause({ actor: "assistant" }, fallback, true)).toBe(false);
  });
});
