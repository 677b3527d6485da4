import { callChecksWith } from "../../../../src/domain/heuristic/packs/heuristic-packs.js";
import { describe, expect, it } from "vitest";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { policyBreach } from "../../../../src/domain/heuristic/packs/travel/policy-conditions.js";
import { failedRun, taskEvent, type Step } from "../../../support/task-events.js";

/** The offline generator with the travel pack enabled (REFLECTOR_HEURISTIC_PACKS=travel). */
const travel = { attempt: 1, violations: [], missingFields: [], callChecks: callChecksWith(["travel"]) };
const travelReflection = (event: Parameters<typeof generateHeuristicReflection>[0]) =>
  generateHeuristicReflection(event, travel);

const policy = [
  "# Airline Agent Policy",
  "The current time is 2024-05-15 15:00:00 EST.",
  "## Book flight",
  "- Checked bag allowance: If the booking user is a regular member, 0 free checked bag for each basic economy passenger, 1 free checked bag for each economy passenger, and 2 free checked bags for each business passenger. If the booking user is a gold member, 2 free checked bag for each basic economy passenger, 3 free checked bag for each economy passenger, and 3 free checked bags for each business passenger. Each extra baggage is 50 dollars.",
  "## Cancel flight",
  "- All reservations can be cancelled within 24 hours of booking, or if the airline cancelled the flight. Otherwise, basic economy or economy flights can be cancelled only if travel insurance is bought and the condition is met, and business flights can always be cancelled.",
  "## Refund",
  "- If the user is silver/gold member or has travel insurance or flies business, and complains about cancelled flights in a reservation, the agent can offer a certificate as a gesture after confirming the facts, with the amount being $100 times the number of passengers.",
  "- Do not compensate if the user is regular member and has no travel insurance and flies (basic) economy.",
].join("\n");

const run = (steps: Step[]) =>
  failedRun(
    [["system", "system_event", policy], ...steps],
    "The final database did not match the expected outcome.",
  );

const profile = (membership: string): Step[] => [
  ["agent", "tool_call", '{"user_id":"raj_sanchez_7340"}', "get_user_details"],
  [
    "agent",
    "tool_response",
    `{"name":{"first_name":"Raj"},"membership":"${membership}"}`,
    "get_user_details",
  ],
];
const reservation = (fields: Record<string, unknown>): Step[] => [
  ["agent", "tool_call", '{"reservation_id":"M20IZO"}', "get_reservation_details"],
  [
    "agent",
    "tool_response",
    JSON.stringify({
      reservation_id: "M20IZO",
      user_id: "raj_sanchez_7340",
      cabin: "economy",
      passengers: [{ first_name: "Raj" }],
      created_at: "2024-05-12T09:36:29",
      insurance: "no",
      ...fields,
    }),
    "get_reservation_details",
  ],
];
const cancel: Step = ["agent", "tool_call", '{"reservation_id":"M20IZO"}', "cancel_reservation"];
const asked: Step = [
  "user",
  "llm_response",
  "Please cancel M20IZO, user raj_sanchez_7340: a change of plan.",
];
const breachAtEnd = (steps: Step[], verbs: string[] = []) => {
  const event = run(steps);
  return policyBreach(event, event.events.length - 1, verbs);
};

describe("a write call checked against the conditions the policy states", () => {
  it("finds a cancellation past the window, in a class that needs insurance, without it", () => {
    const breach = breachAtEnd([asked, ...reservation({}), cancel]);
    expect(breach?.sentence).toMatch(/^All reservations can be cancelled within 24 hours of booking/);
    expect(breach?.values).toEqual([
      "`created_at` = `2024-05-12T09:36:29` (77 hours before the policy's current time)",
      "`cabin` = `economy`",
      "`insurance` = `no`",
    ]);
  });

  it("claims nothing when any part of the condition holds or is not seen", () => {
    expect(breachAtEnd([asked, ...reservation({ created_at: "2024-05-15T09:00:00" }), cancel])).toBeNull();
    expect(breachAtEnd([asked, ...reservation({ insurance: "yes" }), cancel])).toBeNull();
    expect(breachAtEnd([asked, ...reservation({ cabin: "business" }), cancel])).toBeNull();
    const airline: Step = ["user", "llm_response", "The airline cancelled my flight, please cancel M20IZO."];
    expect(breachAtEnd([airline, ...reservation({}), cancel])).toBeNull();
    // No record of the reservation was read: nothing is seen.
    expect(breachAtEnd([asked, cancel])).toBeNull();
    // Without the policy's current time the window cannot be measured.
    const noClock = run([asked, ...reservation({}), cancel]);
    const system = noClock.events[0];
    if (system) system.content = system.content.replace(/The current time is [^.]+\./, "");
    expect(policyBreach(noClock, noClock.events.length - 1, [])).toBeNull();
  });

  it("checks a booking's charged bags against the allowance of the user's tier and class", () => {
    const book = (nonfree: number): Step => [
      "agent",
      "tool_call",
      JSON.stringify({
        user_id: "raj_sanchez_7340",
        cabin: "economy",
        passengers: [{ first_name: "Raj" }, { first_name: "Ana" }],
        total_baggages: 5,
        nonfree_baggages: nonfree,
      }),
      "book_reservation",
    ];
    const breach = breachAtEnd([...profile("gold"), book(2)]);
    expect(breach?.sentence).toMatch(/^If the booking user is a gold member/);
    expect(breach?.values).toEqual([
      "`membership` = `gold`",
      "`cabin` = `economy`",
      "2 passengers",
      "`total_baggages` = 5",
      "`nonfree_baggages` = 2",
    ]);
    expect(breach?.required).toBe("3 free per passenger, so `nonfree_baggages` = 5 − 3 × 2 = 0");
    expect(breachAtEnd([...profile("gold"), book(0)])).toBeNull();
    // Regular economy: 1 free each, so 3 of 5 are charged.
    expect(breachAtEnd([...profile("regular"), book(3)])).toBeNull();
    // A tier the policy does not name: nothing to check.
    expect(breachAtEnd([...profile("platinum"), book(2)])).toBeNull();
  });

  it("reads a rule under another action's heading as that action's only", () => {
    const addBags: Step = [
      "agent",
      "tool_call",
      '{"reservation_id":"M20IZO","total_baggages":1,"nonfree_baggages":1}',
      "update_reservation_baggages",
    ];
    expect(breachAtEnd([...profile("regular"), ...reservation({}), addBags], ["updat", "add"])).toBeNull();
  });

  it("finds compensation the policy forbids for the records' tier, insurance and class", () => {
    const send: Step = [
      "agent",
      "tool_call",
      '{"user_id":"raj_sanchez_7340","amount":100}',
      "send_certificate",
    ];
    const verbs = ["compens", "certif", "refund"];
    const breach = breachAtEnd([...profile("regular"), ...reservation({}), send], verbs);
    expect(breach?.sentence).toBe(
      "Do not compensate if the user is regular member and has no travel insurance and flies (basic) economy.",
    );
    expect(breach?.values).toEqual(["`membership` = `regular`", "`insurance` = `no`", "`cabin` = `economy`"]);
    expect(breachAtEnd([...profile("gold"), ...reservation({}), send], verbs)).toBeNull();
    expect(
      breachAtEnd([...profile("regular"), ...reservation({ cabin: "business" }), send], verbs),
    ).toBeNull();
  });

  it("finds an amount that is not the policy's amount per passenger", () => {
    const send = (amount: number): Step => [
      "agent",
      "tool_call",
      `{"user_id":"raj_sanchez_7340","amount":${String(amount)}}`,
      "send_certificate",
    ];
    const verbs = ["compens", "certif", "refund"];
    const breach = breachAtEnd([...profile("gold"), ...reservation({}), send(200)], verbs);
    expect(breach?.values).toEqual(["`amount` = 200", "1 passengers"]);
    expect(breach?.required).toBe("`amount` = $100 × 1 = 100");
    expect(breachAtEnd([...profile("gold"), ...reservation({}), send(100)], verbs)).toBeNull();
  });

  it("runs the travel checks only where the pack is enabled: the default path knows no travel policy", () => {
    const event = run([asked, ...reservation({}), cancel]);
    expect(generateHeuristicReflection(event).tags).not.toContain("policy-condition");
    expect(travelReflection(event).tags).toContain("policy-condition");
  });

  it("writes the lesson about that call: the policy sentence quoted in what was found, the values as identifiers in the learning", () => {
    const r = travelReflection(run([asked, ...reservation({}), cancel]));
    expect(r.reflectionText).toMatch(
      /the policy says "All reservations can be cancelled within 24 hours of booking/,
    );
    // The learning is the generator's words: the policy's sentence (the trace's text) is not in it.
    expect(r.learning).toBe(
      "Before `cancel_reservation`, check the policy's condition for it on the records: here created_at = 2024-05-12T09:36:29, cabin = economy, insurance = no, which did not meet it, and the agent called `cancel_reservation` anyway.",
    );
    expect(r.reflectionText).toMatch(
      /step 4 \(s4\), `cancel_reservation` went ahead instead of applying the policy.s condition/,
    );
    expect(r.tags).toContain("policy-condition");
    expect(r.patterns).toEqual(["cancel_reservation against the policy on created_at, cabin, insurance"]);
  });
});

describe("cue rules where the trace shows no decision to blame", () => {
  it("writes no lesson from the agent's reply to the user ('unable to') in a run with no write", () => {
    const r = travelReflection(
      run([
        ["user", "llm_response", "Could you tell me the total balance of my gift cards?"],
        ["agent", "llm_response", "I'm unable to provide information about the balance of your gift cards."],
        ["user", "llm_response", "Alright, thank you. ###STOP###"],
      ]),
    );
    // A give-up cue was measured to name the decisive step of no run it was tuned on: the fallback
    // answers (the last event, at its measured 0.06), and nothing is claimed.
    expect(r.attribution).toMatchObject({ stepIndex: 3, confidence: 0.06 });
    expect(r.learning).toBe("");
    expect(r.reflectionText).toMatch(/no cause is claimed/);
  });

  it("writes no lesson from a give-up cue, which names the decisive step too rarely to teach", () => {
    const stamp = "2026-11-20T10:00:00.000Z";
    const event = taskEvent({
      outcome: "failure",
      error: { category: "task_failure", message: "The service crashed after the lookup." },
      events: [
        { actor: "Planner", content: "Find the 2019 revenue of the company in the filings." },
        { actor: "Researcher", content: "I could not find the 2019 filing, so I will go on with 2018." },
        { actor: "Writer", content: "The revenue was 4.2 billion." },
      ].map((e, i) => ({ type: "llm_response" as const, timestamp: stamp, ...e, eventId: `s${String(i)}` })),
    });
    const r = travelReflection(event);
    expect(r.learning).toBe("");
    expect(r.adjustments).toEqual([]);
    expect(r.attribution?.confidence).toBeLessThan(0.3);
  });
});

describe("a choice the user's criterion and the agent's own search show was not the cheapest", () => {
  const search: Step[] = [
    [
      "agent",
      "tool_call",
      '{"origin":"ATL","destination":"PHL","date":"2024-05-24"}',
      "search_onestop_flight",
    ],
    [
      "agent",
      "tool_response",
      JSON.stringify([
        [
          {
            flight_number: "HAT110",
            status: "available",
            available_seats: { economy: 9 },
            prices: { economy: 105 },
          },
          {
            flight_number: "HAT132",
            status: "available",
            available_seats: { economy: 3 },
            prices: { economy: 190 },
          },
        ],
        [
          {
            flight_number: "HAT110",
            status: "available",
            available_seats: { economy: 9 },
            prices: { economy: 105 },
          },
          {
            flight_number: "HAT172",
            status: "available",
            available_seats: { economy: 5 },
            prices: { economy: 102 },
          },
        ],
        [
          {
            flight_number: "HAT001",
            status: "available",
            available_seats: { economy: 0 },
            prices: { economy: 10 },
          },
          {
            flight_number: "HAT002",
            status: "available",
            available_seats: { economy: 4 },
            prices: { economy: 10 },
          },
        ],
      ]),
      "search_onestop_flight",
    ],
  ];
  const change = (second: string): Step => [
    "agent",
    "tool_call",
    JSON.stringify({
      reservation_id: "M05KNL",
      cabin: "economy",
      flights: [
        { flight_number: "HAT110", date: "2024-05-24" },
        { flight_number: second, date: "2024-05-24" },
      ],
    }),
    "update_reservation_flights",
  ];
  const ask = (words: string): Step => ["user", "llm_response", words];

  it("names both options and their prices, and the user's words", () => {
    const r = travelReflection(
      run([
        ask("Please move M05KNL to May 24, the cheapest economy flight available."),
        ...search,
        change("HAT132"),
      ]),
    );
    expect(r.learning).toBe(
      "Before `update_reservation_flights`, when the user asks for the cheapest economy option, take the lowest economy price among all search results for that route and date: the agent took HAT110 + HAT132 at 295 while step 3 offered HAT110 + HAT172 at 207.",
    );
    expect(r.patterns).toEqual(["update_reservation_flights not the cheapest economy option searched"]);
  });

  it("claims nothing for the cheapest with seats, another class, or another criterion", () => {
    const lesson = (words: string, second: string) =>
      travelReflection(run([ask(words), ...search, change(second)])).learning;
    // The sold-out option is not cheaper: HAT110 + HAT172 is the cheapest with seats.
    expect(lesson("Change M05KNL to the cheapest economy flight on May 24, please.", "HAT172")).toBe("");
    expect(lesson("Change M05KNL to the second cheapest economy flight on May 24.", "HAT132")).toBe("");
    expect(lesson("Change M05KNL to the cheapest business flight on May 24, please.", "HAT132")).toBe("");
    expect(lesson("Change M05KNL to May 24, the one arriving earliest.", "HAT132")).toBe("");
  });

  it("quotes only a policy sentence under the call's own heading", () => {
    // The reservation id was never given: a lesson, but the cancellation rule is not its policy.
    const learning = travelReflection(
      run([ask("Change it to the cheapest business flight on May 24."), ...search, change("HAT132")]),
    ).learning;
    expect(learning).toMatch(/^Before `update_reservation_flights`, work out `reservation_id`/);
    expect(learning).not.toMatch(/cancelled within 24 hours/);
  });
});
