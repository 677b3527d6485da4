import { describe, expect, it } from "vitest";
import {
  lessonEffectiveness,
  summarizeEffectiveness,
} from "../../../../src/domain/feedback/lesson-effectiveness.js";

const publishedAt = new Date("2026-11-01T00:00:00Z");
const after = (days: number) => new Date(publishedAt.getTime() + days * 86_400_000);

describe("lesson effectiveness", () => {
  it("has no data on a fresh lesson that has not recurred", () => {
    expect(lessonEffectiveness({ occurrences: 1, publishedAt, now: after(0.5) })).toEqual({
      recurrencesAfterPublication: 0,
      daysSincePublication: 0.5,
      recurrencesPerWeek: 0,
      verdict: "insufficient_data",
    });
  });

  it("calls a lesson ineffective once the error came back 3 times within a week", () => {
    const fresh = lessonEffectiveness({ occurrences: 3, publishedAt, now: after(1) });
    expect(fresh).toMatchObject({ recurrencesAfterPublication: 2, verdict: "insufficient_data" });
    const third = lessonEffectiveness({ occurrences: 4, publishedAt, now: after(1) });
    // A burst is spread over at least a week, not extrapolated from one day.
    expect(third).toMatchObject({
      recurrencesAfterPublication: 3,
      recurrencesPerWeek: 3,
      verdict: "ineffective",
    });
  });

  it("calls a lesson effective after a quiet week, and at under one recurrence per week later on", () => {
    expect(lessonEffectiveness({ occurrences: 1, publishedAt, now: after(6.9) }).verdict).toBe(
      "insufficient_data",
    );
    expect(lessonEffectiveness({ occurrences: 1, publishedAt, now: after(7) }).verdict).toBe("effective");
    // 5 recurrences in 70 days = 0.5 per week: rare enough.
    expect(lessonEffectiveness({ occurrences: 6, publishedAt, now: after(70) })).toMatchObject({
      recurrencesPerWeek: 0.5,
      verdict: "effective",
    });
  });

  it("stays undecided with too few recurrences to condemn and too many to praise", () => {
    // 2 recurrences in 10 days = 1.4 per week, but fewer than 3 in all.
    expect(lessonEffectiveness({ occurrences: 3, publishedAt, now: after(10) }).verdict).toBe(
      "insufficient_data",
    );
  });

  it("is ineffective exactly at one recurrence per week with enough recurrences", () => {
    expect(lessonEffectiveness({ occurrences: 5, publishedAt, now: after(28) })).toMatchObject({
      recurrencesPerWeek: 1,
      verdict: "ineffective",
    });
  });

  it("never reports negative time when clocks disagree", () => {
    expect(lessonEffectiveness({ occurrences: 1, publishedAt, now: after(-1) }).daysSincePublication).toBe(0);
  });

  it("sums lessons and their recurrences by the verdict of each count, at the boundaries too", () => {
    const now = after(10);
    const summary = summarizeEffectiveness(
      [
        // 3 recurrences in 10 days: 2.1 a week, ineffective (two such lessons).
        { occurrences: 4, publishedAt, lessons: 2 },
        // Quiet for exactly the 7 observation days: effective.
        { occurrences: 1, publishedAt: after(3), lessons: 5 },
        // Quiet for 6.99 days: not yet.
        { occurrences: 1, publishedAt: new Date(after(3).getTime() + 1), lessons: 1 },
        // 2 recurrences: below the 3 needed to call it ineffective, too frequent to call it effective.
        { occurrences: 3, publishedAt, lessons: 1 },
      ],
      now,
    );
    expect(summary).toEqual({
      ineffective: { lessons: 2, recurrences: 6 },
      effective: { lessons: 5, recurrences: 0 },
      insufficient_data: { lessons: 2, recurrences: 2 },
    });
  });
});
