import { describe, expect, it } from "vitest";
import {
  decidingVote,
  effectiveQuality,
  isServed,
  servedMinQuality,
  type FeedbackVote,
} from "../../../../src/domain/feedback/effective-quality.js";

const vote = (feedbackId: string, rating: "up" | "down", at: string): FeedbackVote => ({
  feedbackId,
  rating,
  at: new Date(at),
});

describe("effective quality (feedback override)", () => {
  it("caps at 0.3 on a thumbs-down and leaves lower scores alone", () => {
    expect(effectiveQuality(0.92, "down")).toBe(0.3);
    expect(effectiveQuality(0.2, "down")).toBe(0.2);
  });

  it("raises to at least 0.7 on a thumbs-up and leaves higher scores alone", () => {
    expect(effectiveQuality(0.45, "up")).toBe(0.7);
    expect(effectiveQuality(0.88, "up")).toBe(0.88);
  });

  it("is the judged score without feedback", () => {
    expect(effectiveQuality(0.61, null)).toBe(0.61);
  });

  it("lets the latest vote decide, whatever the counts", () => {
    const votes = [
      vote("a", "up", "2026-11-20T10:00:00Z"),
      vote("b", "up", "2026-11-20T11:00:00Z"),
      vote("c", "down", "2026-11-20T12:00:00Z"),
    ];
    expect(decidingVote(votes)?.feedbackId).toBe("c");
    // Arrival order does not matter: the vote's own time does.
    expect(decidingVote([...votes].reverse())?.feedbackId).toBe("c");
    expect(decidingVote([])).toBeNull();
  });

  it("breaks a tie in time by feedback id, so every replica agrees", () => {
    const at = "2026-11-20T10:00:00Z";
    expect(decidingVote([vote("b", "down", at), vote("a", "up", at)])?.rating).toBe("down");
    expect(decidingVote([vote("a", "up", at), vote("b", "down", at)])?.rating).toBe("down");
  });

  it("withholds a lesson below the serving floor: a thumbs-down always does, a thumbs-up never does", () => {
    expect(servedMinQuality).toBe(0.5);
    expect(isServed(effectiveQuality(0.95, "down"))).toBe(false);
    expect(isServed(effectiveQuality(0.1, "up"))).toBe(true);
    expect(isServed(0.5)).toBe(true);
    expect(isServed(0.49)).toBe(false);
  });
});
