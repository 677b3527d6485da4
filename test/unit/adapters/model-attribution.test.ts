import { describe, expect, it } from "vitest";
import {
  chooseAttribution,
  modelAttributionPrecision,
  offlinePrevailsAtConfidence,
} from "../../../src/adapters/llm/model-attribution.js";
import { buildReflectionPrompt, hintMinConfidence } from "../../../src/adapters/llm/prompts.js";
import type { LocatedFailure } from "../../../src/domain/attribution/attribute-failure.js";
import { taskEvent } from "../../support/task-events.js";

describe("which attribution a reflection of a failure carries", () => {
  const model = { stepIndex: 4, actor: "Coder", confidence: 0.9 };

  it("is the model's, unless a far more precise offline rule named a step", () => {
    expect(offlinePrevailsAtConfidence).toBeGreaterThan(modelAttributionPrecision);
    const middling = { stepIndex: 2, actor: "WebSurfer", confidence: 0.55 };
    expect(chooseAttribution(model, middling)).toBe(model);
    const stateChange = { stepIndex: 7, actor: "agent", confidence: 0.85 };
    expect(chooseAttribution(model, stateChange)).toBe(stateChange);
    expect(chooseAttribution(model, { actor: "agent", confidence: 0.9 })).toBe(model);
  });

  it("is the offline one when the model gives none", () => {
    const offline = { stepIndex: 2, confidence: 0.2 };
    expect(chooseAttribution(undefined, offline)).toBe(offline);
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
    basis: "first_worker_step",
    stepIndex: 1,
    step: request.event.events[1],
    attribution: { stepIndex: 1, confidence },
  });

  it("is shown only when it is more likely right than wrong", () => {
    const weak = buildReflectionPrompt(request, secrets, guidance, { located: located(0.2) });
    expect(weak.user).not.toContain("ruleBasedAttribution");
    const strong = buildReflectionPrompt(request, secrets, guidance, { located: located(hintMinConfidence) });
    expect(strong.user).toContain("ruleBasedAttribution");
  });
});
