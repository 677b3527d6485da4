import { describe, expect, it } from "vitest";
import { checkSourceIds, parseSourceIds, splitRefusal } from "../../../../src/domain/memory/lesson-split.js";

describe("naming the sources to split out of a lesson", () => {
  it("reads a comma-separated list, trimmed, in order", () => {
    expect(parseSourceIds(" evt-1, real-tau-bench-airline-task-0-trial-2 ,evt-3")).toEqual({
      ids: ["evt-1", "real-tau-bench-airline-task-0-trial-2", "evt-3"],
    });
  });

  it("refuses an empty list, an empty item, a repeated id, a control character and too many ids, naming each", () => {
    expect(parseSourceIds(" , ")).toEqual({ error: "name at least one source event id" });
    expect(parseSourceIds("evt-1,,evt-2")).toEqual({ error: "source 2 of the list is empty" });
    expect(parseSourceIds("evt-1,evt-2,evt-1")).toEqual({ error: "event id evt-1 is named twice" });
    expect(checkSourceIds(["evt-1", "bad\u0007id"])).toEqual({
      error: 'not an event id: "bad\\u0007id" (1 to 200 characters, no control characters)',
    });
    expect(checkSourceIds(["x".repeat(201)])).toHaveProperty("error");
    const many = Array.from({ length: 101 }, (_, i) => `evt-${String(i)}`);
    expect(checkSourceIds(many)).toEqual({ error: "at most 100 sources per split (got 101)" });
    expect(checkSourceIds([])).toEqual({ error: "name at least one source event id" });
  });

  it("says why a split was refused, and nothing when it went through", () => {
    const id = "6f1c2d3e-4a5b-4c6d-8e7f-901234567890";
    expect(splitRefusal({ status: "not_found" }, id)).toBe(`no lesson ${id} for this tenant`);
    expect(splitRefusal({ status: "not_sources", missing: ["evt-9"] }, id)).toBe(
      `not sources of lesson ${id}: evt-9 (list them with its sources)`,
    );
    expect(splitRefusal({ status: "all_sources", sources: 2 }, id)).toMatch(
      /names all 2 sources .* name fewer$/,
    );
    expect(
      splitRefusal(
        {
          status: "split",
          lessonId: id,
          newLessonId: null,
          moved: ["evt-1"],
          remaining: 1,
          signaturesMoved: [],
        },
        id,
      ),
    ).toBeNull();
  });
});
