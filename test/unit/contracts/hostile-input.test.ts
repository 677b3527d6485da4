import { describe, expect, it } from "vitest";
import { TaskCompletedV1 } from "../../../src/domain/contracts/index.js";
import { taskEvent } from "../../support/task-events.js";

const base = taskEvent();
const step = base.events[0];
if (!step) throw new Error("the sample trace has no steps");
const parse = (raw: unknown) => TaskCompletedV1.safeParse(raw);
const issues = (raw: unknown) => {
  const result = parse(raw);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < levels; i += 1) value = { next: value };
  return value;
}

describe("the task-completed contract on hostile input", () => {
  it("keeps free text Postgres cannot store, made storable: NUL and lone surrogates become U+FFFD", () => {
    const result = parse({
      ...base,
      task: { description: "Fetch orders\u0000 for \ud800 customer" },
      events: [{ ...step, content: "out\u0000put \udc00 end" }],
    });
    expect(result.success).toBe(true);
    expect(result.data?.task.description).toBe("Fetch orders\ufffd for \ufffd customer");
    expect(result.data?.events[0]?.content).toBe("out\ufffdput \ufffd end");
  });

  it("keeps terminal escapes in a step's output: they are part of real traces", () => {
    const content = "\u001b[31mError\u001b[0m: exit 1";
    expect(parse({ ...base, events: [{ ...step, content }] }).data?.events[0]?.content).toBe(content);
  });

  it("refuses control characters and lone surrogates in names and ids", () => {
    expect(issues({ ...base, loopId: "loop\u0000one" })).toEqual(["loopId: contains a control character"]);
    expect(issues({ ...base, tenantId: "tenant\ud800" })).toEqual([
      "tenantId: is not well-formed Unicode (a lone surrogate)",
    ]);
    expect(issues({ ...base, events: [{ ...step, toolName: "t".repeat(3_000) }] })).toEqual([
      "events.0.toolName: Too big: expected string to have <=200 characters",
    ]);
  });

  it("refuses rerun numbers no loop family reaches", () => {
    expect(issues({ ...base, loopId: "loop-1_r3000000000", rerunOf: "loop-1" })).toEqual([
      "loopId: rerun number 3000000000 is beyond 100000",
    ]);
    expect(parse({ ...base, loopId: "loop-1_r3", rerunOf: "loop-1_r2" }).success).toBe(true);
  });

  it("refuses a rerun number of 13 digits or more too (one reading of `_r<n>` everywhere)", () => {
    expect(issues({ ...base, loopId: "loop-1_r9999999999999", rerunOf: "loop-1" })).toEqual([
      "loopId: rerun number 9999999999999 is beyond 100000",
    ]);
    expect(issues({ ...base, loopId: "loop-1_r2", rerunOf: `loop-1_r${"9".repeat(150)}` })).toEqual([
      `rerunOf: rerun number ${"9".repeat(20)}… (150 digits) is beyond 100000`,
    ]);
    // Leading zeros do not make a small number large.
    expect(parse({ ...base, loopId: "loop-1_r0000000000000000003", rerunOf: "loop-1_r2" }).success).toBe(
      true,
    );
  });

  it("refuses deep and huge open maps without recursing or overflowing the stack", () => {
    expect(issues({ ...base, events: [{ ...step, metadata: nested(5_000) }] })).toEqual([
      "events.0.metadata: nests deeper than 10 levels",
    ]);
    const flat = { items: Array.from({ length: 1_000_000 }, (_, i) => i) };
    expect(issues({ ...base, error: { ...base.error, context: flat } })).toEqual([
      "error.context: is larger than 65536 bytes as JSON",
    ]);
  });
});

describe("the feedback contract on hostile input", () => {
  const vote = {
    schemaVersion: 1,
    feedbackId: "f-1",
    tenantId: "tenant-a",
    reflectionId: "00000000-0000-4000-8000-000000000000",
    rating: "down",
    occurredAt: "2026-11-20T10:00:00.000Z",
  };

  it("makes a comment with a NUL byte storable, and refuses one in an id", async () => {
    const { ReflectionFeedbackV1 } = await import("../../../src/domain/contracts/index.js");
    expect(ReflectionFeedbackV1.parse({ ...vote, comment: "bad\u0000lesson" }).comment).toBe(
      "bad\ufffdlesson",
    );
    expect(ReflectionFeedbackV1.safeParse({ ...vote, feedbackId: "f\u0000" }).success).toBe(false);
    expect(ReflectionFeedbackV1.safeParse({ ...vote, userId: "u\ud800" }).success).toBe(false);
  });
});
