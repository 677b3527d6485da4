import { callChecksWith } from "../../../../src/domain/heuristic/packs/heuristic-packs.js";
import { describe, expect, it } from "vitest";
import { budgetMiss } from "../../../../src/domain/heuristic/packs/travel/budget-cap.js";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { policyBreach } from "../../../../src/domain/heuristic/packs/travel/policy-conditions.js";
import { returnMiss } from "../../../../src/domain/heuristic/packs/travel/round-trip.js";
import { dateMiss } from "../../../../src/domain/heuristic/packs/travel/same-dates.js";
import { failedRun, type Step } from "../../../support/task-events.js";

/** The offline generator with the travel pack enabled (REFLECTOR_HEURISTIC_PACKS=travel). */
const travel = { attempt: 1, violations: [], missingFields: [], callChecks: callChecksWith(["travel"]) };
const travelReflection = (event: Parameters<typeof generateHeuristicReflection>[0]) =>
  generateHeuristicReflection(event, travel);

const policy = [
  "# Rail and air desk",
  "The current time is 2025-03-01 09:00:00 EST.",
  "## Book trip",
  "- Trip protection: offer it at booking; it costs 25 dollars per traveller and allows a full refund if the traveller must cancel given medical or storm reasons.",
  "## Cancel trip",
  "- Ask for the booking code and the reason for cancellation (schedule change, carrier cancelled trip, or other reasons).",
  "- Any booking can be cancelled within 24 hours of booking, or if the carrier cancelled the trip. Otherwise, basic economy or economy trips can be cancelled only if trip protection is bought and the condition is met, and business trips can always be cancelled.",
].join("\n");

const run = (steps: Step[], system = policy) =>
  failedRun(
    [["system", "system_event", system], ...steps],
    "The bookings did not end as the customer wanted.",
  );
const atEnd = <T>(check: (e: ReturnType<typeof run>, i: number) => T, steps: Step[], system?: string) => {
  const event = run(steps, system);
  return check(event, event.events.length - 1);
};
const user = (words: string): Step => ["user", "llm_response", words];

const booking = (fields: Record<string, unknown>): Step[] => [
  ["agent", "tool_call", '{"booking_id":"PX71QA"}', "read_booking"],
  [
    "agent",
    "tool_response",
    JSON.stringify({
      booking_id: "PX71QA",
      traveller_id: "lena_okafor_42",
      cabin: "basic_economy",
      created_at: "2025-02-20T12:00:00",
      trip_protection: "yes",
      ...fields,
    }),
    "read_booking",
  ],
];
const cancel: Step = ["agent", "tool_call", '{"booking_id":"PX71QA"}', "cancel_booking"];
const breach = (steps: Step[], system?: string) =>
  atEnd((e, i) => policyBreach(e, i, ["cancel"]), steps, system);

describe("the protection's condition: the user's reason against the reasons the policy says it covers", () => {
  it("finds a protected cancellation past the window for a listed reason the cover does not name", () => {
    const found = breach([user("Cancel PX71QA please, it is a schedule change."), ...booking({}), cancel]);
    expect(found?.values).toEqual([
      "`created_at` = `2025-02-20T12:00:00` (213 hours before the policy's current time)",
      "`cabin` = `basic_economy`",
      "`trip_protection` = `yes`",
      "the user's reason = schedule change ('Cancel PX71QA please, it is a schedule change.')",
    ]);
    expect(found?.required).toBe(
      "past 24 hours, a basic economy booking with trip protection may be cancelled only for a reason it covers (medical or storm), and schedule change is not one",
    );
    expect(found?.sentence).toMatch(/Otherwise, basic economy .* given medical or storm reasons\.$/);
  });

  it("claims nothing when the reason could be covered, is 'other', or is not stated", () => {
    expect(breach([user("Cancel PX71QA: other reasons."), ...booking({}), cancel])).toBeNull();
    expect(
      breach([user("Cancel PX71QA, a schedule change: my son is in hospital."), ...booking({}), cancel]),
    ).toBeNull();
    expect(
      breach([user("Cancel PX71QA, schedule change because of the storm."), ...booking({}), cancel]),
    ).toBeNull();
    expect(breach([user("Please cancel PX71QA."), ...booking({}), cancel])).toBeNull();
    // Within the window, or business: the protection's condition is not needed.
    expect(
      breach([
        user("Cancel PX71QA, schedule change."),
        ...booking({ created_at: "2025-03-01T02:00:00" }),
        cancel,
      ]),
    ).toBeNull();
    expect(
      breach([user("Cancel PX71QA, schedule change."), ...booking({ cabin: "business" }), cancel]),
    ).toBeNull();
  });

  it("claims nothing when the policy attaches no condition to the protection or names no covered reasons", () => {
    const ask = user("Cancel PX71QA, it is a schedule change.");
    const noCondition = policy.replace(" and the condition is met", "");
    expect(breach([ask, ...booking({}), cancel], noCondition)).toBeNull();
    const noReasons = policy.replace(" given medical or storm reasons", "");
    expect(breach([ask, ...booking({}), cancel], noReasons)).toBeNull();
  });

  it("does not take the reply to the agent's own cancellation for the carrier cancelling", () => {
    const earlier: Step[] = [
      ["agent", "tool_call", '{"booking_id":"ZZ90LM"}', "cancel_booking"],
      ["agent", "tool_response", '{"booking_id":"ZZ90LM","status":"cancelled"}', "cancel_booking"],
    ];
    const found = breach([
      user("Cancel ZZ90LM and PX71QA, a schedule change for both."),
      ...earlier,
      ...booking({ trip_protection: "no" }),
      cancel,
    ]);
    expect(found?.values).toContain("`trip_protection` = `no`");
  });
});

describe("a charge over the cap the user stated", () => {
  const record = (payments: number[]) =>
    JSON.stringify({
      booking_id: "PX71QA",
      payments: payments.map((amount) => ({ payment_id: "card_5521", amount })),
    });
  const change: Step[] = [
    ["agent", "tool_call", '{"booking_id":"PX71QA"}', "read_booking"],
    ["agent", "tool_response", record([310]), "read_booking"],
  ];
  const upgrade = (reply: string): Step[] => [
    [
      "agent",
      "tool_call",
      '{"booking_id":"PX71QA","cabin":"business","payment_id":"card_5521"}',
      "upgrade_booking",
    ],
    ["agent", "tool_response", reply, "upgrade_booking"],
  ];
  const missAt = (steps: Step[]) => {
    const event = run(steps);
    return budgetMiss(event, event.events.length - 2);
  };

  it("finds a new payment in the reply above the user's cap", () => {
    const miss = missAt([
      user("Upgrade PX71QA if it costs no more than $400."),
      ...change,
      ...upgrade(record([310, 620])),
    ]);
    expect(miss).toMatchObject({ cap: 400, charged: 620, from: "reply" });
    expect(miss?.asked).toBe("Upgrade PX71QA if it costs no more than $400.");
  });

  it("claims nothing within the cap, without a cap, or when the agent told the user the amount", () => {
    expect(
      missAt([user("Upgrade PX71QA, up to $700."), ...change, ...upgrade(record([310, 620]))]),
    ).toBeNull();
    expect(missAt([user("Upgrade PX71QA please."), ...change, ...upgrade(record([310, 620]))])).toBeNull();
    const told: Step = ["agent", "llm_response", "The upgrade will cost $620 in total. Shall I go ahead?"];
    expect(
      missAt([
        user("Keep it under $400."),
        ...change,
        told,
        user("Yes, go ahead."),
        ...upgrade(record([310, 620])),
      ]),
    ).toBeNull();
    // No record of the booking before the call: the new payment cannot be told from the old.
    expect(missAt([user("Keep it under $400."), ...upgrade(record([310, 620]))])).toBeNull();
  });

  it("reads a booking's own payments, and a later cap over an earlier one", () => {
    const book: Step = [
      "agent",
      "tool_call",
      JSON.stringify({
        traveller_id: "lena_okafor_42",
        payment_methods: [{ payment_id: "card_5521", amount: 380 }],
      }),
      "book_trip",
    ];
    const at = (steps: Step[]) => atEnd(budgetMiss, steps);
    expect(at([user("My budget is $300 for this."), book])).toMatchObject({
      cap: 300,
      charged: 380,
      from: "call",
    });
    expect(at([user("My budget is $300."), user("Fine, I can go up to $400."), book])).toBeNull();
  });
});

const listed = (from: string, to: string, date: string, number: string): Step[] => [
  ["agent", "tool_call", JSON.stringify({ origin: from, destination: to, date }), "find_nonstop_flights"],
  [
    "agent",
    "tool_response",
    JSON.stringify([{ flight_number: number, origin: from, destination: to, status: "available" }]),
    "find_nonstop_flights",
  ],
];

describe("a round trip that never comes back", () => {
  const book = (back: string): Step => [
    "agent",
    "tool_call",
    JSON.stringify({
      traveller_id: "lena_okafor_42",
      origin: "PDX",
      destination: "AUS",
      flight_type: "round_trip",
      flights: [
        { flight_number: "QX31", date: "2025-04-02" },
        { flight_number: back, date: "2025-04-06" },
      ],
    }),
    "book_trip",
  ];
  const out = listed("PDX", "AUS", "2025-04-02", "QX31");

  it("finds a return leg taken from a search in the outbound direction", () => {
    const miss = atEnd(returnMiss, [...out, ...listed("PDX", "AUS", "2025-04-06", "QX33"), book("QX33")]);
    expect(miss?.legs.map((l) => `${l.flight} ${l.from}-${l.to}`)).toEqual(["QX31 PDX-AUS", "QX33 PDX-AUS"]);
    const r = travelReflection(run([...out, ...listed("PDX", "AUS", "2025-04-06", "QX33"), book("QX33")]));
    expect(r.learning).toBe(
      "Before `book_trip` for a round trip, search the return leg from AUS back to PDX and book a flight that lands at PDX: the agent booked QX31 on 2025-04-02 PDX→AUS, QX33 on 2025-04-06 PDX→AUS.",
    );
  });

  it("claims nothing for a proper return, or a flight no search listed", () => {
    expect(
      atEnd(returnMiss, [...out, ...listed("AUS", "PDX", "2025-04-06", "QX34"), book("QX34")]),
    ).toBeNull();
    expect(atEnd(returnMiss, [...out, book("QX35")])).toBeNull();
  });
});

describe("a leg moved off its date when the user asked for the same dates", () => {
  const reservation: Step[] = [
    ["agent", "tool_call", '{"reservation_id":"KT4W2B"}', "read_reservation"],
    [
      "agent",
      "tool_response",
      JSON.stringify({
        reservation_id: "KT4W2B",
        origin: "PDX",
        destination: "AUS",
        flight_type: "round_trip",
        flights: [
          { origin: "PDX", destination: "DEN", flight_number: "QX40", date: "2025-04-02" },
          { origin: "DEN", destination: "AUS", flight_number: "QX41", date: "2025-04-02" },
          { origin: "AUS", destination: "DEN", flight_number: "QX42", date: "2025-04-06" },
          { origin: "DEN", destination: "PDX", flight_number: "QX43", date: "2025-04-07" },
        ],
      }),
      "read_reservation",
    ],
  ];
  const change = (backDate: string): Step => [
    "agent",
    "tool_call",
    JSON.stringify({
      reservation_id: "KT4W2B",
      flights: [
        { flight_number: "QX50", date: "2025-04-02" },
        { flight_number: "QX51", date: backDate },
      ],
    }),
    "change_reservation_flights",
  ];
  const searches = (backDate: string) => [
    ...listed("PDX", "SAT", "2025-04-02", "QX50"),
    ...listed("SAT", "PDX", backDate, "QX51"),
  ];
  const ask = user("Please move KT4W2B to nonstop flights to SAT and back, on the same dates.");

  it("finds the return moved from the day it leaves to the day it used to land", () => {
    const miss = atEnd(dateMiss, [ask, ...reservation, ...searches("2025-04-07"), change("2025-04-07")]);
    expect(miss).toMatchObject({
      leg: "return",
      was: { date: "2025-04-06", from: "AUS" },
      now: { date: "2025-04-07", flight: "QX51" },
    });
  });

  it("claims nothing on the same dates, without the user's words, or when the user named the new date", () => {
    expect(
      atEnd(dateMiss, [ask, ...reservation, ...searches("2025-04-06"), change("2025-04-06")]),
    ).toBeNull();
    const plain = user("Please move KT4W2B to nonstop flights to SAT and back.");
    expect(
      atEnd(dateMiss, [plain, ...reservation, ...searches("2025-04-07"), change("2025-04-07")]),
    ).toBeNull();
    const named = user("Same dates out, but come back on April 7th.");
    expect(
      atEnd(dateMiss, [named, ...reservation, ...searches("2025-04-07"), change("2025-04-07")]),
    ).toBeNull();
  });
});
