import { describe, expect, it } from "vitest";
import type { Reflection, TaskCompleted } from "../../../../src/domain/contracts/index.js";
import { lessonSpecificity } from "../../../../src/domain/quality/lesson-specificity.js";
import { defaultQualityConfig as config } from "../../../../src/domain/quality/quality-config.js";
import { textFacts, traceFacts } from "../../../../src/domain/quality/trace-facts.js";
import {
  decideVerdict,
  storageProblem,
  validateReflection,
} from "../../../../src/domain/quality/validate-reflection.js";
import { taskEvent } from "../../../support/task-events.js";

/** A tool-using support agent's failed booking, in the shape of the public airline logs. */
const step = (
  i: number,
  actor: string,
  type: TaskCompleted["events"][number]["type"],
  content: string,
  toolName?: string,
): TaskCompleted["events"][number] => ({
  eventId: `step-${String(i)}`,
  type,
  timestamp: `2026-11-20T10:00:${String(10 + i)}.000Z`,
  actor,
  content,
  ...(toolName ? { toolName } : {}),
});
const run: TaskCompleted = taskEvent({
  task: { description: "Airline customer service. The user opened with: book me JFK to SEA on May 20th." },
  outcome: "failure",
  error: {
    category: "task_failure",
    message: "The final reservation database did not match the expected outcome.",
  },
  events: [
    step(0, "system", "system_event", "Policy: ask the user for the number of checked bags before booking."),
    step(1, "user", "llm_response", "Book me JFK to SEA on May 20th, economy, one way."),
    step(
      2,
      "agent",
      "tool_call",
      '{"origin":"JFK","destination":"SEA","date":"2024-05-20"}',
      "search_direct_flight",
    ),
    step(3, "agent", "tool_response", '[{"flight_number":"HAT136","price":152}]', "search_direct_flight"),
    step(
      4,
      "agent",
      "tool_call",
      '{"user_id":"mia_li_3668","flights":[{"flight_number":"HAT136"}],"total_baggages":3,"nonfree_baggages":1}',
      "book_reservation",
    ),
    step(
      5,
      "agent",
      "tool_response",
      "Error: payment amount does not add up, total price is 305, but paid 255",
      "book_reservation",
    ),
    step(6, "agent", "tool_response", '{"payment_methods":{"credit_card_4421":{}}}', "get_user_details"),
  ],
});
const facts = traceFacts(run);

const lesson = (strategyText: string, adjustments: string[], learning = strategyText) => ({
  strategyText,
  adjustments,
  learning,
});

/** A read-back lesson that names the tool and its arguments and nothing of what went wrong. */
const template = lesson(
  "Before `book_reservation`, check `flights`, `total_baggages`, `nonfree_baggages` against what the user asked and confirm them with the user.",
  [
    "add constraint: before calling book_reservation, read back flights, total_baggages, nonfree_baggages to the user and wait for an explicit yes",
    "change the source of flights, total_baggages for book_reservation from the agent's choice to values the user stated",
  ],
);

describe("lesson specificity", () => {
  it("finds nothing in a lesson that names only the tool and its argument names", () => {
    expect(facts.fields).toEqual(
      new Set([
        "origin",
        "destination",
        "date",
        "flight_number",
        "price",
        "user_id",
        "flights",
        "total_baggages",
        "nonfree_baggages",
        "payment_methods",
      ]),
    );
    expect(lessonSpecificity(template, facts).specifics).toEqual([]);
  });

  it("counts a condition with a value, a value or quoted text the run shows, and a rule in words", () => {
    const rule = lesson("Ask for bags.", [
      "add constraint: default total_baggages = 0 unless the user names a count",
    ]);
    expect(lessonSpecificity(rule, facts).specifics).toEqual([expect.stringContaining("total_baggages = 0")]);
    const quoted = lesson("Ask for bags.", [
      "add constraint: on 'total price is 305' re-check the bag fields",
    ]);
    expect(lessonSpecificity(quoted, facts).specifics).toEqual(['"total price is 305"']);
    const value = lesson("Ask for bags.", ["add constraint: a fare of HAT136 plus bag fees is the total"]);
    expect(lessonSpecificity(value, facts).specifics).toEqual(["HAT136"]);
    const words = lesson("Ask for bags.", ["add constraint: nonfree_baggages must be 0 for this cabin"]);
    expect(lessonSpecificity(words, facts).specifics).toHaveLength(1);
    // A key with a digit is data used as a key, not a name of the interface.
    const paying = lesson("Ask first.", ["add constraint: ask before charging credit_card_4421"]);
    expect(lessonSpecificity(paying, facts).specifics).toEqual(["credit_card_4421"]);
  });

  it("does not count what the task statement says, or a capital that starts a sentence", () => {
    // JFK and SEA are in the task statement; "Error" opens a sentence.
    const restated = lesson("Error answers need a second look. Book JFK to SEA only after asking.", [
      "add constraint: before book_reservation from JFK to SEA, confirm the bags",
    ]);
    expect(lessonSpecificity(restated, facts).specifics).toEqual([]);
    // Inside a sentence, a capitalised word of the run is a name.
    const named = lesson("Ask first.", [
      "add constraint: read the Error text the tool returns before paying",
    ]);
    expect(lessonSpecificity(named, facts).specifics).toEqual(["Error"]);
    // A value the run shows counts even when the user's message also holds it (not the statement).
    const withStatement = traceFacts({ ...run, task: { description: "Airline customer service." } });
    const stated = lesson("Ask first.", [
      "add constraint: before book_reservation from JFK, confirm the bags",
    ]);
    expect(lessonSpecificity(stated, withStatement).specifics).toEqual(["JFK"]);
  });

  it("makes a generic lesson not actionable and not stored, and asks for a rewrite", () => {
    const reflection: Reflection = {
      reflectionText:
        "At step 4 the agent called book_reservation with total_baggages 3 and nonfree_baggages 1 although the user never " +
        "mentioned bags, because it assumed a default; the tool answered 'total price is 305, but paid 255' at step 5.",
      importance: 0.7,
      confidence: 0.8,
      tags: [],
      errorCategory: null,
      patterns: [],
      ...template,
    };
    const evidence = { patternEvidence: new Map(), relevance: 1, novelty: 1, trace: facts };
    const generic = validateReflection(reflection, evidence, config);
    expect(generic.metrics.actionabilityScore).toBe(0);
    expect(generic.violations.join(" ")).toMatch(/A generic lesson/);
    expect(generic.retryable).toBe(true);
    expect(storageProblem(decideVerdict(generic, config), generic, config)).toMatch(
      /below the storage minimum/,
    );

    const specific = validateReflection(
      {
        ...reflection,
        adjustments: [...template.adjustments, "set total_baggages = 0 unless the user gives a count"],
      },
      evidence,
      config,
    );
    expect(specific.metrics.actionabilityScore).toBe(1);
    expect(storageProblem(decideVerdict(specific, config), specific, config)).toBeNull();
  });

  it("judges no lesson generic without a run to compare it with, nor in the literal reading", () => {
    const reflection = {
      ...template,
      reflectionText: "x".repeat(80),
      importance: 0.5,
      confidence: 0.5,
      tags: [],
      errorCategory: null,
      patterns: [],
    };
    const noRun = validateReflection(
      reflection,
      { patternEvidence: new Map(), relevance: 1, novelty: 1, trace: textFacts("") },
      config,
    );
    expect(noRun.violations.join(" ")).not.toMatch(/A generic lesson/);
    const literal = validateReflection(
      reflection,
      { patternEvidence: new Map(), relevance: 1, novelty: 1, trace: facts },
      { ...config, depth: { ...config.depth, mode: "literal" } },
    );
    expect(literal.metrics.actionabilityScore).toBe(1);
  });
});
