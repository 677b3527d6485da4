import { describe, expect, it } from "vitest";
import { Reflection, TaskCompletedV1 } from "../../../src/domain/contracts/index.js";
import { calibrationSet, type CalibrationLabel } from "../../calibration/reflection-calibration.js";
import { bigTrace } from "../../support/corpus/multi-agent-failures.js";

const cases = calibrationSet();
const oversized = bigTrace().event.eventId;

describe("reflection calibration set", () => {
  it("has at least 70 cases with unique ids", () => {
    expect(cases.length).toBeGreaterThanOrEqual(70);
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
  });

  it("has enough cases of every label", () => {
    const count = (label: CalibrationLabel) => cases.filter((c) => c.label === label).length;
    expect(count("good")).toBeGreaterThanOrEqual(25);
    expect(count("vague")).toBeGreaterThanOrEqual(10);
    expect(count("off_topic")).toBeGreaterThanOrEqual(10);
    expect(count("incomplete")).toBeGreaterThanOrEqual(10);
    expect(count("duplicate")).toBeGreaterThanOrEqual(10);
  });

  it("has events that parse with TaskCompletedV1 (except the deliberately oversized trace)", () => {
    const checked = cases.filter((c) => c.event.eventId !== oversized);
    expect(checked.length).toBeLessThan(cases.length);
    const failures = checked.filter((c) => !TaskCompletedV1.safeParse(c.event).success).map((c) => c.id);
    expect(failures).toEqual([]);
  });

  it("has reflections that parse with Reflection", () => {
    const failures = cases.filter((c) => !Reflection.safeParse(c.reflection).success).map((c) => c.id);
    expect(failures).toEqual([]);
  });

  it("points every duplicate at an existing good case, and only duplicates carry duplicateOf", () => {
    const good = new Map(cases.filter((c) => c.label === "good").map((c) => [c.id, c]));
    for (const c of cases) {
      if (c.label !== "duplicate") {
        expect(c.duplicateOf, c.id).toBeUndefined();
        continue;
      }
      expect(c.duplicateOf && good.has(c.duplicateOf), c.id).toBe(true);
      const original = good.get(c.duplicateOf ?? "");
      expect(c.event.eventId).not.toBe(original?.event.eventId);
      expect(c.reflection.reflectionText).not.toBe(original?.reflection.reflectionText);
    }
  });

  it("gives every good case an attribution and every case a reason", () => {
    for (const c of cases) {
      expect(c.why.length, c.id).toBeGreaterThan(10);
      if (c.label === "good" || c.label === "duplicate") {
        expect(c.reflection.attribution, c.id).toBeDefined();
        const step = c.event.events[c.reflection.attribution?.stepIndex ?? -1];
        expect(step?.eventId, c.id).toBe(c.reflection.attribution?.eventId);
      }
    }
  });
});
