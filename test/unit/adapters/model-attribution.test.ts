import { describe, expect, it } from "vitest";
import {
  anchorToQuote,
  chooseAttribution,
  modelAttributionPrecision,
  quotePieces,
  readModelAttribution,
} from "../../../src/adapters/llm/model-attribution.js";
import { buildReflectionPrompt, hintMinConfidence } from "../../../src/adapters/llm/prompts.js";
import { attributionConfidence } from "../../../src/domain/attribution/attribution-confidence.js";
import { defaultCalibration, heldOutPrecision } from "../../../src/domain/attribution/calibration.js";
import type { LocatedFailure } from "../../../src/domain/attribution/located-failure.js";
import type { TraceEvent } from "../../../src/domain/contracts/index.js";
import { taskEvent } from "../../support/task-events.js";

describe("which attribution a reflection of a failure carries", () => {
  const model = { stepIndex: 4, actor: "Coder", confidence: 0.9 };

  it("is the offline one only where its kind of evidence held above the model on held-out sources", () => {
    const stateChange = { stepIndex: 7, actor: "agent", confidence: attributionConfidence.firstStateChange };
    const held = {
      ...defaultCalibration,
      heldOut: { first_state_change: { n: 20, exact: 0.9, near: 0.9, agent: 1 } },
    };
    expect(chooseAttribution(model, stateChange, "first_state_change", held)).toBe(stateChange);
    // Measured on too few held-out runs: unproven, so the model's answer stands.
    const few = {
      ...defaultCalibration,
      heldOut: { first_state_change: { n: 3, exact: 1, near: 1, agent: 1 } },
    };
    expect(chooseAttribution(model, stateChange, "first_state_change", few)).toBe(model);
  });

  it("is the model's for every kind of evidence as shipped: none held above the model where nothing was tuned", () => {
    const unsure = { ...model, confidence: 0.1 };
    for (const basis of [
      "explicit_error",
      "message_match",
      "first_state_change",
      "failure_text",
      "repetition",
      "structural_fallback",
    ] as const) {
      expect(heldOutPrecision(basis)).toBeLessThan(modelAttributionPrecision);
      expect(chooseAttribution(unsure, { stepIndex: 2, actor: "WebSurfer", confidence: 0.9 }, basis)).toBe(
        unsure,
      );
    }
  });

  it("is the model's when both name the same step, or the offline rules name none", () => {
    const same = { stepIndex: 4, actor: "Coder", confidence: 0.9 };
    expect(chooseAttribution(model, same, "explicit_error")).toBe(model);
    expect(chooseAttribution(model, { actor: "agent", confidence: 0.9 }, "explicit_error")).toBe(model);
  });

  it("is the reported failing step where the model blames a step no agent of the team produced", () => {
    const event = taskEvent({
      events: [
        {
          eventId: "s0",
          type: "system_event",
          timestamp: "2026-11-20T10:00:00.000Z",
          content: "retry policy: 2 attempts",
        },
        {
          eventId: "s1",
          type: "error_event",
          timestamp: "2026-11-20T10:00:01.000Z",
          toolName: "http_post",
          content: "ECONNRESET",
        },
      ],
    });
    const blamesPolicy = { stepIndex: 0, confidence: 0.8 };
    const reported = { stepIndex: 1, toolName: "http_post", confidence: 0.9 };
    expect(chooseAttribution(blamesPolicy, reported, "explicit_error", undefined, event)).toBe(reported);
    // A step found by inference does not replace it: only what the trace reports.
    expect(chooseAttribution(blamesPolicy, reported, "failure_text", undefined, event)).toBe(blamesPolicy);
  });

  it("is the offline one when the model gives none", () => {
    const offline = { stepIndex: 2, confidence: 0.2 };
    expect(chooseAttribution(undefined, offline, "structural_fallback")).toBe(offline);
  });
});

describe("the model's step read against its quoted evidence", () => {
  const step = (i: number, actor: string, content: string): TraceEvent => ({
    eventId: `s${String(i)}`,
    type: "llm_response",
    timestamp: "2026-11-20T10:00:00.000Z",
    actor,
    content,
  });
  const steps = [
    step(0, "Orchestrator", "Plan: find the 2021 price of the apartment."),
    step(1, "WebSurfer", "I typed 'Mission Bay high-rise 2021' into the search bar."),
    step(2, "Orchestrator", "Please look at the listing page."),
    step(3, "WebSurfer", "The highest price found for a high-rise apartment is $1.08 billion."),
    step(4, "Orchestrator", "FINAL ANSWER: $1.08 billion"),
  ];

  it("cuts a quote into the excerpts a model joins with dots, unquoted and normalised", () => {
    expect(quotePieces("\"I typed 'Mission Bay high-rise' ... The HIGHEST price   found for …\"")).toEqual([
      "i typed 'mission bay high-rise",
      "the highest price found for",
    ]);
    expect(quotePieces("a short one")).toEqual([]);
  });

  it("moves a miscounted step to the named agent's step that holds the quote", () => {
    const quote = "The highest price found for a high-rise apartment";
    expect(anchorToQuote(steps, 2, "WebSurfer", quote)).toBe(3);
    expect(anchorToQuote(steps, 4, "websurfer ", quote)).toBe(3);
  });

  it("keeps the named step when the quote is there, nowhere, or only in another agent's step", () => {
    expect(anchorToQuote(steps, 3, "WebSurfer", "The highest price found for a high-rise")).toBe(3);
    expect(anchorToQuote(steps, 2, "WebSurfer", "words that no step of this trace holds")).toBe(2);
    expect(anchorToQuote(steps, 2, "Orchestrator", "The highest price found for a high-rise")).toBe(2);
    expect(anchorToQuote(steps, 2, undefined, "The highest price found for a high-rise")).toBe(2);
  });

  it("takes the nearest of several steps that hold the quote", () => {
    const twice = [
      ...steps,
      step(5, "WebSurfer", "I typed 'Mission Bay high-rise 2021' into the search bar."),
    ];
    expect(anchorToQuote(twice, 4, "WebSurfer", "I typed 'Mission Bay high-rise 2021'")).toBe(5);
    expect(anchorToQuote(twice, 2, "WebSurfer", "I typed 'Mission Bay high-rise 2021'")).toBe(1);
  });

  it("gives the moved step's event id and tool in the attribution read from an answer", () => {
    const event = taskEvent({ events: steps });
    const read = readModelAttribution(
      {
        stepIndex: 2,
        eventId: "s2",
        actor: "WebSurfer",
        confidence: 0.7,
        evidence: "The highest price found for a high-rise apartment",
      },
      event,
    );
    expect(read).toMatchObject({ stepIndex: 3, eventId: "s3", actor: "WebSurfer", confidence: 0.7 });
  });
});

describe("the rule-based guess in the prompt", () => {
  const request = {
    event: taskEvent(),
    attempt: 1,
    violations: [],
    missingFields: [],
    insights: [],
    answerEvaluation: null,
  };
  const secrets = { canary: "canary-1", nonce: "n0nce" };
  const guidance = { analysisMinChars: 100, learningMinChars: 50 };
  const located = (confidence: number): LocatedFailure => ({
    basis: "failure_text",
    stepIndex: 1,
    step: request.event.events[1],
    attribution: { stepIndex: 1, confidence },
  });

  it("is not shown for a kind of evidence unproven where nothing was tuned, however confident", () => {
    expect(heldOutPrecision("failure_text")).toBeLessThan(hintMinConfidence);
    const confident = buildReflectionPrompt(request, secrets, guidance, { located: located(0.95) });
    expect(confident.user).not.toContain("ruleBasedAttribution");
  });
});
