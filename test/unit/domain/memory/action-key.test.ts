import { describe, expect, it } from "vitest";
import type { TraceEvent } from "../../../../src/domain/contracts/index.js";
import { actionKey, sameAction } from "../../../../src/domain/memory/action-key.js";
import { sameFailingStep } from "../../../../src/domain/memory/same-lesson.js";
import { signatureCandidates } from "../../../../src/domain/signature.js";
import { taskEvent } from "../../../support/task-events.js";

const at = (i: number) => `2026-11-20T10:00:0${String(i)}.000Z`;

function booking(userWords: string, args: Record<string, unknown>, tool = "book_reservation") {
  const events: TraceEvent[] = [
    { eventId: "s0", type: "llm_response", timestamp: at(0), actor: "user", content: userWords },
    {
      eventId: "s1",
      type: "tool_call",
      timestamp: at(1),
      actor: "agent",
      toolName: tool,
      content: JSON.stringify(args),
    },
  ];
  return taskEvent({
    error: { category: "task_failure", message: "The final reservation did not match the expected outcome." },
    events,
  });
}

describe("actionKey", () => {
  it("is the tool, its arguments' shape and the identifiers the user gave, not the values the agent chose", () => {
    const a = booking("Hi, I am mia_li_3668 and want the morning flight.", {
      user_id: "mia_li_3668",
      payment_id: "card_1",
    });
    const b = booking("hello, user id mia_li_3668, book me the early one please", {
      user_id: "mia_li_3668",
      payment_id: "card_2",
    });
    expect(actionKey(a, a.events[1])).toBe("book_reservation(payment_id,user_id) for mia_li_3668");
    expect(actionKey(b, b.events[1])).toBe(actionKey(a, a.events[1]));
    const other = booking("I am omar_rossi_1241.", { user_id: "omar_rossi_1241", payment_id: "card_1" });
    expect(actionKey(other, other.events[1])).not.toBe(actionKey(a, a.events[1]));
  });

  it("is null for a step that is not a call with structured arguments", () => {
    const e = booking("hi", {});
    expect(actionKey(e, e.events[0])).toBeNull();
    expect(actionKey(e, undefined)).toBeNull();
  });

  it("files a failing call's step level by its action, so another user's call of the tool is another signature", () => {
    const a = booking("I am mia_li_3668.", { user_id: "mia_li_3668" });
    const b = booking("I am omar_rossi_1241.", { user_id: "omar_rossi_1241" });
    const stepOf = (e: typeof a) => signatureCandidates(e, e.events[1]).find((c) => c.level === "step");
    expect(stepOf(a)?.content).toContain("book_reservation(user_id) for mia_li_3668");
    expect(stepOf(a)?.signature).not.toBe(stepOf(b)?.signature);
  });
});

describe("sameAction", () => {
  it("joins calls of one kind for the same user, even when one names a second booking", () => {
    expect(
      sameAction("cancel(reservation_id) for abc123, mia_li_3668", "cancel(reservation_id) for mia_li_3668"),
    ).toBe(true);
    expect(
      sameAction("cancel(reservation_id) for mia_li_3668", "cancel(reservation_id) for omar_rossi_1241"),
    ).toBe(false);
    expect(sameAction("cancel(reservation_id) for mia_li_3668", "book(user_id) for mia_li_3668")).toBe(false);
    expect(sameAction("cancel(reservation_id)", "cancel(reservation_id) for mia_li_3668")).toBe(true);
  });

  it("keeps lessons of one tool apart when their actions differ", () => {
    const step = (action: string) => ({ actor: "agent", toolName: "cancel", confidence: 0.85, action });
    expect(
      sameFailingStep(
        step("cancel(reservation_id) for mia_li_3668"),
        step("cancel(reservation_id) for omar_rossi_1241"),
      ),
    ).toBe(false);
    expect(
      sameFailingStep(step("cancel(reservation_id) for mia_li_3668"), {
        actor: "agent",
        toolName: "cancel",
        confidence: 0.85,
      }),
    ).toBe(true);
  });
});
