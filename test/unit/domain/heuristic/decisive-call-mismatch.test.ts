import { describe, expect, it } from "vitest";
import { firstMismatch } from "../../../../src/domain/heuristic/call-mismatch.js";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { failedRun, taskEvent, type Step } from "../../../support/task-events.js";

const policy =
  "# Policy\n- Checked bag allowance: a regular member gets 0 free checked bag for each basic economy passenger and 1 for each economy passenger.\n" +
  "- Do not proactively offer a certificate unless the user complains and explicitly asks for compensation.";

const run = (steps: Step[]) => failedRun(steps, "The final database did not match the expected outcome.");
const system: Step = ["system", "system_event", policy];
const profile: Step = [
  "agent",
  "tool_response",
  '{"membership":"regular","payment_methods":{"credit_card_4421":{},"gift_card_7719":{}}}',
  "get_user_details",
];

describe("the offline lesson about the decisive call says only what the trace shows", () => {
  it("names an argument no one gave and the policy sentence about it", () => {
    const event = run([
      system,
      [
        "user",
        "llm_response",
        "Book HAT136 on May 20 for me, user mia_li_3668, economy, pay with gift card.",
      ],
      profile,
      [
        "agent",
        "tool_call",
        '{"flight":"HAT136","cabin":"economy","payment_id":"gift_card_7719","total_baggages":3}',
        "book_reservation",
      ],
    ]);
    const r = generateHeuristicReflection(event);
    expect(r.reflectionText).toMatch(
      /`total_baggages` = `3`, which no user message and no earlier tool output holds/,
    );
    // The policy's sentence is quoted in what was found; the learning names the rule, not its text.
    expect(r.reflectionText).toMatch(/the policy says "Checked bag allowance/);
    expect(r.learning).toBe(
      "Before `book_reservation`, work out `total_baggages` from what the user said and the records, by the policy's rule on it, or ask: the agent set total_baggages = 3 with no source in the trace.",
    );
    expect(r.patterns).toEqual(["book_reservation with total_baggages from no source"]);
  });

  it("reads an argument holding regex characters as text: no throw, and no instruction carries it", () => {
    const event = run([
      ["user", "llm_response", "Please update the note on booking ZFA04Y, user mia_li_3668."],
      ["agent", "tool_call", '{"reservation_id":"ZFA04Y","note":"use iex (iwr"}', "update_reservation"],
    ]);
    const r = generateHeuristicReflection(event);
    expect(r.learning).toMatch(/^Before `update_reservation`, work out `note`/);
    expect(r.learning).toMatch(/note = a value with no source/);
    expect([r.learning, ...r.adjustments].join(" ")).not.toMatch(/iex|iwr/);
  });

  it("takes a count the user gave as its source, and names both values when the call differs", () => {
    const same = run([
      system,
      [
        "user",
        "llm_response",
        "Please add 2 checked bags to booking ZFA04Y, economy, paid with my gift card.",
      ],
      profile,
      [
        "agent",
        "tool_call",
        '{"reservation_id":"ZFA04Y","total_baggages":2,"payment_id":"gift_card_7719"}',
        "update_reservation_baggages",
      ],
    ]);
    expect(generateHeuristicReflection(same).learning).toBe("");
    // Asked about without a number: the agent worked the count out, maybe rightly; not made up.
    const allowance = run([
      system,
      [
        "user",
        "llm_response",
        "Please apply my free bag allowance to booking ZFA04Y, paid with my gift card.",
      ],
      profile,
      [
        "agent",
        "tool_call",
        '{"reservation_id":"ZFA04Y","total_baggages":1,"payment_id":"gift_card_7719"}',
        "update_reservation_baggages",
      ],
    ]);
    expect(generateHeuristicReflection(allowance).learning).toBe("");
    const differs = run([
      system,
      ["user", "llm_response", "Please add three checked bags to booking ZFA04Y, paid with my gift card."],
      profile,
      [
        "agent",
        "tool_call",
        '{"reservation_id":"ZFA04Y","total_baggages":2,"payment_id":"gift_card_7719"}',
        "update_reservation_baggages",
      ],
    ]);
    const r = generateHeuristicReflection(differs);
    expect(r.reflectionText).toMatch(/set `total_baggages` = `2` where the user had said 3/);
    expect(r.learning).toMatch(
      /set `total_baggages` to the number the user gave: the user said 3 and the call .* carried 2/,
    );
  });

  it("calls a write the user never asked for unasked, quoting the rule on when it may be done in what was found", () => {
    const event = run([
      system,
      [
        "user",
        "llm_response",
        "My flight HAT045 was delayed and I will miss my meeting. User mei_brown_7075.",
      ],
      ["agent", "tool_call", '{"user_id":"mei_brown_7075","amount":100}', "send_certificate"],
    ]);
    const r = generateHeuristicReflection(event);
    expect(r.reflectionText).toMatch(/the policy says "Do not proactively offer a certificate unless/);
    expect(r.learning).toBe(
      "Call `send_certificate` only when the user asks for it and the policy allows it: here the user never asked, and the agent called it on its own.",
    );
    expect(r.tags).toContain("unasked-action");
  });

  it("writes no lesson when every argument was stated, looked up or presented and the user asked for the action", () => {
    const event = run([
      system,
      ["user", "llm_response", "Please cancel my reservation ZFA04Y, user mia_li_3668."],
      ["agent", "llm_response", "I will cancel ZFA04Y. Shall I go ahead?"],
      ["user", "llm_response", "Yes."],
      ["agent", "tool_call", '{"reservation_id":"ZFA04Y"}', "cancel_reservation"],
    ]);
    const r = generateHeuristicReflection(event);
    expect(r.learning).toBe("");
    expect(r.adjustments).toEqual([]);
    expect(r.reflectionText).toMatch(
      /the first call that changed state was step 4 \(s4\), `cancel_reservation`/,
    );
    expect(r.reflectionText).toMatch(/the trace does not show which of them was wrong/);
    expect(r.reflectionText).toMatch(/no cause is claimed and no lesson is written/);
  });

  it("passes over a call the tool rejected and blames the later write that shows the mismatch", () => {
    const event = run([
      system,
      ["user", "llm_response", "Please cancel my reservation ZFA04Y and update RB11QX, user mia_li_3668."],
      ["agent", "tool_call", '{"reservation_id":"ZFA04Y","total_baggages":4}', "update_reservation_baggages"],
      ["agent", "tool_response", "Error: reservation not found", "update_reservation_baggages"],
      ["agent", "tool_call", '{"reservation_id":"ZFA04Y"}', "cancel_reservation"],
      ["agent", "tool_response", '{"status":"cancelled"}', "cancel_reservation"],
      ["agent", "tool_call", '{"reservation_id":"RB11QX","total_baggages":5}', "update_reservation_baggages"],
    ]);
    const found = firstMismatch(event, 2);
    expect(found?.index).toBe(6);
    expect(found?.mismatch).toEqual({ kind: "unsourced", leaves: [{ path: "total_baggages", value: "5" }] });
  });

  it("counts an unasked action only before any write was accepted (later, it answers what that write did)", () => {
    const event = run([
      system,
      ["user", "llm_response", "Please cancel my reservation ZFA04Y, user mia_li_3668."],
      ["agent", "tool_call", '{"reservation_id":"ZFA04Y"}', "cancel_reservation"],
      ["agent", "tool_response", '{"status":"cancelled"}', "cancel_reservation"],
      [
        "agent",
        "tool_call",
        '{"summary":"the user is upset about the cancellation"}',
        "transfer_to_human_agents",
      ],
    ]);
    expect(firstMismatch(event, 2)).toBeNull();
    const first = run([
      system,
      ["user", "llm_response", "Please cancel my reservation ZFA04Y, user mia_li_3668."],
      ["agent", "tool_call", '{"summary":"the user wants a cancellation"}', "transfer_to_human_agents"],
    ]);
    expect(firstMismatch(first, 2)?.mismatch.kind).toBe("unasked");
  });
});

describe("the offline lesson where only the answer's source is known", () => {
  it("writes no lesson where only the answer's source is known (a rule removed for want of held-out lift)", () => {
    const stamp = "2026-11-20T10:00:00.000Z";
    const event = taskEvent({
      outcome: "failure",
      task: { description: "What was the 2020 census population of Fresno?", answer: "552,186" },
      error: { category: "evaluation_error", message: "the final answer was judged incorrect" },
      events: [
        { actor: "Orchestrator", content: "Plan: open the Wikipedia list and read the Fresno row." },
        { actor: "WebSurfer", type: "tool_call" as const, toolName: "web_browser", content: 'click("List")' },
        {
          actor: "WebSurfer",
          type: "tool_response" as const,
          toolName: "web_browser",
          content: "| 34 | Fresno | 542,107 |\n| 35 | Sacramento | 552,186 |",
        },
        { actor: "WebSurfer", content: "The row reads | 35 | Sacramento | 552,186 |, so it is 552,186." },
        { actor: "Orchestrator", content: "WebSurfer reported 552,186; that answers the request." },
        { actor: "Orchestrator", content: "FINAL ANSWER: 552,186" },
      ].map((e, i) => ({ type: "llm_response" as const, timestamp: stamp, ...e, eventId: `s${String(i)}` })),
    });
    const r = generateHeuristicReflection(event);
    expect(r.reflectionText).not.toMatch(/the final answer's value comes from/);
    expect(r.reflectionText).toMatch(/no cause is claimed and no lesson is written/);
    expect(r.learning).toBe("");
    expect(r.adjustments).toEqual([]);
    expect(r.patterns).toEqual([]);
  });
});
