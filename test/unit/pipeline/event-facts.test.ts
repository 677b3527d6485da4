import { describe, expect, it } from "vitest";
import { attributeFailure, locateFailure } from "../../../src/domain/attribution/attribute-failure.js";
import { findingFromEvaluation } from "../../../src/domain/evaluation/reflection-from-evaluation.js";
import { actionKey } from "../../../src/domain/memory/action-key.js";
import { episodeText } from "../../../src/domain/memory/trace-text.js";
import { signatureCandidates, signatureFor } from "../../../src/domain/signature.js";
import { eventFacts } from "../../../src/pipeline/event-facts.js";
import { taskEvent } from "../../support/task-events.js";

const routineSuccess = () =>
  taskEvent({
    outcome: "success",
    error: undefined,
    task: { description: "List open orders", tier: "inline" },
  });

const correctedSuccess = () =>
  taskEvent({
    outcome: "success",
    error: undefined,
    task: { description: "Answer when the EU AI Act entered into force", tier: "container-light" },
    verificationResults: [
      {
        status: "conflict",
        claimText: "The EU AI Act entered into force on 1 August 2025",
        conflictReason: "EUR-Lex gives 1 August 2024; the draft said 2025",
      },
    ],
    evaluation: { revised: true },
    events: [],
  });

describe("event facts", () => {
  it("locates a failure once and derives the step, the signatures and the episode from it", () => {
    const event = taskEvent();
    const facts = eventFacts(event, "full");
    expect(facts.selection.reflect).toBe(true);
    expect(facts.located).toEqual(locateFailure(event));
    expect(facts.attribution).toEqual(attributeFailure(event));
    const stepIndex = facts.attribution?.stepIndex;
    expect(stepIndex).toBeDefined();
    expect(facts.failingStep).toBe(event.events[stepIndex ?? -1]);
    expect(facts.candidates).toEqual(signatureCandidates(event, facts.failingStep));
    expect(facts.candidates.length).toBeGreaterThan(1);
    expect(facts.episode).toBe(episodeText(event, facts.failingStep));
    expect(facts.action).toBe(actionKey(event, facts.failingStep));
    expect(facts.finding).toBeNull();
  });

  it("orders work under the same signature the consumer used before facts were carried", () => {
    for (const event of [taskEvent(), routineSuccess(), correctedSuccess()]) {
      expect(eventFacts(event, "lite").signature).toBe(signatureFor(event));
      expect(eventFacts(event, "full").signature).toBe(signatureFor(event));
    }
  });

  it("files a success that is not reflected on under no signature, and does not scan its trace", () => {
    const facts = eventFacts(routineSuccess(), "full");
    expect(facts.selection).toMatchObject({ reflect: false });
    expect(facts).toMatchObject({
      located: null,
      attribution: undefined,
      failingStep: undefined,
      action: null,
    });
    expect(facts.candidates).toEqual([]);
  });

  it("keeps the evaluator's finding of a corrected success, which is reflected on without an attribution", () => {
    const event = correctedSuccess();
    expect(eventFacts(event, "lite").candidates).toEqual([]);
    const facts = eventFacts(event, "full");
    expect(facts.selection.reflect).toBe(true);
    expect(facts.candidates[0]?.source).toBe("evaluation");
    expect(facts.finding).toEqual(findingFromEvaluation(event));
    expect(facts.finding).not.toBeNull();
    expect(facts.attribution).toBeUndefined();
    expect(facts.located).not.toBeNull(); // for the generator, which reads where the trace went wrong
  });
});
