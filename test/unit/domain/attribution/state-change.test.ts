import { describe, expect, it } from "vitest";
import { locateByEvidence } from "../../../../src/domain/attribution/attribute-failure.js";
import { firstStateChange, isWriteTool } from "../../../../src/domain/attribution/state-change.js";
import type { TaskCompleted, TraceEvent } from "../../../../src/domain/contracts/index.js";
import { taskEvent } from "../../../support/task-events.js";

const at = "2026-11-20T10:00:00.000Z";
const step = (i: number, fields: Partial<TraceEvent>): TraceEvent => ({
  eventId: `s${String(i)}`,
  type: "llm_response",
  timestamp: at,
  content: "",
  ...fields,
});
const failed = (events: TraceEvent[]): TaskCompleted =>
  taskEvent({
    outcome: "failure",
    error: {
      category: "task_failure",
      message: "The final reservation database did not match the expected outcome.",
    },
    events,
  });

describe("a tool-using agent's first change of state", () => {
  it("tells a tool that changes state by the verb its name starts with", () => {
    for (const name of [
      "book_reservation",
      "cancel_reservation",
      "update_reservation_flights",
      "sendEmail",
      "transfer",
    ])
      expect(isWriteTool(name), name).toBe(true);
    for (const name of [
      "get_user_details",
      "search_direct_flight",
      "settings",
      "updater_status",
      "web_browser",
      undefined,
    ])
      expect(isWriteTool(name), String(name)).toBe(false);
  });

  it("names a tool-using agent's first change of state for an outcome no step explains", () => {
    const event = failed([
      step(0, { actor: "user", content: "Please change my flight to the 10th." }),
      step(1, { actor: "agent", type: "tool_call", toolName: "get_reservation_details", content: "{}" }),
      step(2, {
        actor: "agent",
        type: "tool_response",
        toolName: "get_reservation_details",
        content: "{...}",
      }),
      step(3, {
        actor: "agent",
        type: "tool_call",
        toolName: "update_reservation_flights",
        content: '{"cabin":"business"}',
      }),
      step(4, { actor: "agent", type: "tool_call", toolName: "send_certificate", content: "{}" }),
      step(5, { actor: "agent", content: "Your flight is changed." }),
    ]);
    expect(firstStateChange(event.events)).toBe(3);
    expect(locateByEvidence(event)).toMatchObject({
      basis: "first_state_change",
      attribution: { stepIndex: 3, actor: "agent", toolName: "update_reservation_flights", confidence: 0.85 },
    });
  });
});
