import { callChecksWith } from "../../../../src/domain/heuristic/packs/heuristic-packs.js";
import { describe, expect, it } from "vitest";
import { choiceMiss } from "../../../../src/domain/heuristic/packs/travel/choice-criteria.js";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { failedRun, type Step } from "../../../support/task-events.js";

/** The offline generator with the travel pack enabled (REFLECTOR_HEURISTIC_PACKS=travel). */
const travel = { attempt: 1, violations: [], missingFields: [], callChecks: callChecksWith(["travel"]) };
const travelReflection = (event: Parameters<typeof generateHeuristicReflection>[0]) =>
  generateHeuristicReflection(event, travel);

const run = (steps: Step[]) =>
  failedRun(
    [["system", "system_event", "# Travel desk rules\nHelp customers change their trips."], ...steps],
    "The bookings did not end as the customer wanted.",
  );

/** A flight as a search lists it: economy price, departure and arrival. */
const flight = (number: string, price: number, departs: string, arrives: string, seats = 4) => ({
  flight_number: number,
  scheduled_departure_time_est: departs,
  scheduled_arrival_time_est: arrives,
  status: "available",
  available_seats: { economy: seats },
  prices: { economy: price },
});
const query = '{"origin":"OAK","destination":"BNA","date":"2025-03-09"}';
const direct = (...flights: object[]): Step[] => [
  ["agent", "tool_call", query, "find_nonstop_flights"],
  ["agent", "tool_response", JSON.stringify(flights), "find_nonstop_flights"],
];
const connecting = (...options: object[][]): Step[] => [
  ["agent", "tool_call", query, "find_connecting_flights"],
  ["agent", "tool_response", JSON.stringify(options), "find_connecting_flights"],
];
const searches: Step[] = [
  ...direct(flight("QX10", 240, "13:00:00", "16:00:00"), flight("QX12", 300, "06:30:00", "09:30:00")),
  ...connecting(
    [flight("QX20", 90, "05:00:00", "07:00:00"), flight("QX21", 80, "08:00:00", "11:00:00")],
    [flight("QX22", 100, "11:30:00", "13:30:00"), flight("QX23", 95, "15:00:00", "18:30:00")],
    [flight("QX24", 60, "09:00:00", "10:00:00"), flight("QX25", 50, "12:00:00", "14:00:00", 0)],
  ),
];
const take = (...numbers: string[]): Step => [
  "agent",
  "tool_call",
  JSON.stringify({
    booking_code: "RZ4KD1",
    cabin: "economy",
    flights: numbers.map((n) => ({ flight_number: n, date: "2025-03-09" })),
  }),
  "modify_booking_flights",
];
const user = (words: string): Step => ["user", "llm_response", words];
const missAtEnd = (steps: Step[]) => {
  const event = run(steps);
  return choiceMiss(event, event.events.length - 1);
};

describe("a flight choice checked against the criteria the user stated", () => {
  it("finds an option with a stop when the user asked for nonstop and a nonstop one was listed", () => {
    const miss = missAtEnd([
      user("Please move booking RZ4KD1 to a nonstop flight on March 9."),
      ...searches,
      take("QX20", "QX21"),
    ]);
    expect(miss?.criteria).toEqual(["nonstop"]);
    expect(miss?.breach).toBe("has 1 stop");
    expect(miss?.chosen.flights).toEqual(["QX20", "QX21"]);
    // The nonstop option offered instead: the cheaper of the two.
    expect(miss?.better.map((o) => o.flights)).toEqual([["QX10"]]);
  });

  it("claims nothing for a stop when no nonstop option was listed, or the user then accepts one", () => {
    const onlyConnecting = connecting([
      flight("QX20", 90, "05:00:00", "07:00:00"),
      flight("QX21", 80, "08:00:00", "11:00:00"),
    ]);
    expect(
      missAtEnd([user("A nonstop flight if possible, please."), ...onlyConnecting, take("QX20", "QX21")]),
    ).toBeNull();
    expect(
      missAtEnd([
        user("I want a nonstop flight on March 9."),
        user("On second thought, a one-stop flight is fine too."),
        ...searches,
        take("QX20", "QX21"),
      ]),
    ).toBeNull();
  });

  it("finds an arrival after the user's bound while another option arrives before it", () => {
    const miss = missAtEnd([
      user("I have to arrive before 10am on March 9."),
      ...searches,
      take("QX22", "QX23"),
    ]);
    expect(miss?.criteria).toEqual(["arriving before 10:00"]);
    expect(miss?.breach).toBe("arrives at 18:30");
    expect(miss?.better[0]?.flights).toEqual(["QX12"]);
    expect(miss?.better[0]?.arrives).toBe("09:30");
  });

  it("reads a lower bound on the departure ('not before 11am')", () => {
    const miss = missAtEnd([
      user("I can't leave early: departing not before 11am, please."),
      ...searches,
      take("QX12"),
    ]);
    expect(miss?.criteria).toEqual(["departing after 11:00"]);
    // Of the options leaving after 11:00, the cheaper one is named.
    expect(miss?.better[0]).toMatchObject({ flights: ["QX22", "QX23"], departs: "11:30" });
  });

  it("reads no bound without a verb that says which end of the trip it is on, or with a value missing", () => {
    expect(
      missAtEnd([user("Something before 10am on March 9 would be good."), ...searches, take("QX22", "QX23")]),
    ).toBeNull();
    const noTimes = direct({
      flight_number: "QX12",
      status: "available",
      available_seats: { economy: 3 },
      prices: { economy: 300 },
    });
    // The only option that would arrive before 10am lists no times: no option is seen to meet it.
    expect(
      missAtEnd([user("I must arrive before 10am."), ...noTimes, ...searches.slice(2), take("QX22", "QX23")]),
    ).toBeNull();
    expect(
      missAtEnd([user("I must arrive before 10am."), ...searches, take("QX22", "QX23")])?.better[0]?.flights,
    ).toEqual(["QX12"]);
    // The option taken has no arrival time: nothing is claimed about it.
    expect(missAtEnd([user("I must arrive before 10am."), ...noTimes, take("QX12")])).toBeNull();
  });

  it("finds a slower option when the user asked for the fastest, and not a tie", () => {
    const miss = missAtEnd([
      user("Give me the fastest way to get there."),
      ...searches,
      take("QX22", "QX23"),
    ]);
    expect(miss?.criteria).toEqual(["the shortest travel time"]);
    expect(miss?.chosen.minutes).toBe(420);
    expect(miss?.better[0]).toMatchObject({ flights: ["QX10"], minutes: 180 });
    const tie = direct(
      flight("QX10", 240, "13:00:00", "16:00:00"),
      flight("QX12", 300, "06:30:00", "09:30:00"),
    );
    expect(missAtEnd([user("The quickest flight, please."), ...tie, take("QX12")])).toBeNull();
  });

  it("finds a later departure when the user asked for the earliest flight, but not 'at the earliest'", () => {
    const miss = missAtEnd([user("Put me on the earliest flight that day."), ...searches, take("QX10")]);
    expect(miss?.criteria).toEqual(["the earliest departure"]);
    expect(miss?.better[0]?.flights).toEqual(["QX20", "QX21"]);
    expect(
      missAtEnd([
        user("Call me back tomorrow at the earliest flight desk opening."),
        ...searches,
        take("QX10"),
      ]),
    ).toBeNull();
  });

  it("combines a condition with an ordering: the cheapest nonstop", () => {
    const miss = missAtEnd([
      user("I'd like the cheapest nonstop economy flight."),
      ...searches,
      take("QX12"),
    ]);
    expect(miss?.criteria).toEqual(["the cheapest", "nonstop"]);
    expect(miss?.better[0]).toMatchObject({ flights: ["QX10"], price: 240 });
    // The cheaper connecting options do not count against a nonstop choice.
    expect(
      missAtEnd([user("I'd like the cheapest nonstop economy flight."), ...searches, take("QX10")]),
    ).toBeNull();
  });

  it("claims 'the second cheapest' only when two cheaper options of distinct prices were listed", () => {
    const ask = user("Could you book the second cheapest economy option on March 9?");
    // Economy options with seats: 170, 195, 240, 300 (QX24 + QX25 has no seat).
    const miss = missAtEnd([ask, ...searches, take("QX10")]);
    expect(miss?.criteria).toEqual(["the second cheapest"]);
    expect(miss?.better.map((o) => o.price)).toEqual([170, 195]);
    expect(missAtEnd([ask, ...searches, take("QX22", "QX23")])).toBeNull();
    // Taking the cheapest: unseen options could make it the second, so nothing is claimed.
    expect(missAtEnd([ask, ...searches, take("QX20", "QX21")])).toBeNull();
    // The class is not named: "the second cheapest" may be in another class.
    expect(
      missAtEnd([user("Could you book the second cheapest option?"), ...searches, take("QX10")]),
    ).toBeNull();
  });

  it("takes the user's later words over earlier ones ('instead'), and their pick of a shown option", () => {
    expect(
      missAtEnd([
        user("A nonstop flight, please."),
        user("No nonstop works for me after all; give me the earliest flight instead."),
        ...searches,
        take("QX20", "QX21"),
      ]),
    ).toBeNull();
    const shown: Step = ["agent", "llm_response", "Options: QX10 at $240 (13:00), QX12 at $300 (06:30)."];
    const picked = user("I'll take QX12, thanks.");
    expect(
      missAtEnd([
        user("The cheapest nonstop economy flight, please."),
        ...searches,
        shown,
        picked,
        take("QX12"),
      ]),
    ).toBeNull();
    // A pick among options the agent showed without the better one is not the user's informed choice.
    const partial: Step = ["agent", "llm_response", "Option 1 is QX12 at $300, departing 06:30."];
    const miss = missAtEnd([
      user("The cheapest nonstop economy flight, please."),
      ...searches,
      partial,
      user("Option 1 it is."),
      take("QX12"),
    ]);
    expect(miss?.better[0]?.flights).toEqual(["QX10"]);
  });

  it("writes a lesson naming both options and the values that decide", () => {
    const r = travelReflection(
      run([
        user("Booking RZ4KD1: move me to a nonstop flight arriving before 10am, please."),
        ...searches,
        take("QX20", "QX21"),
      ]),
    );
    expect(r.learning).toBe(
      "Before `modify_booking_flights`, keep only the searched economy options that meet what the user asked (nonstop, arriving before 10:00) and take the one their words pick: the agent took QX20 + QX21 (05:00–11:00, 1 stop), which has 1 stop, while step 3 offered QX12 (06:30–09:30, nonstop).",
    );
    expect(r.patterns).toEqual([
      "modify_booking_flights not the economy option the user's criteria select (nonstop)",
    ]);
  });
});
