import { describe, expect, it } from "vitest";
import { buildReflectionPrompt } from "../../../src/adapters/llm/prompts.js";
import { verdictReasons } from "../../../src/cli/demo-report.js";
import { chatCompletion, findRecording, type ChatBody } from "../../../src/cli/recorded-model-server.js";
import type { ReflectionOutcome, TaskCompleted } from "../../../src/domain/contracts/index.js";
import { exampleRecordings } from "../../support/recorded-answers.js";

/** The chat request the `openai` generator sends for `event`, with this canary and nonce. */
function requestFor(event: TaskCompleted, nonce: string): ChatBody {
  const prompt = buildReflectionPrompt(
    { event, attempt: 1, violations: [], missingFields: [], insights: [], answerEvaluation: null },
    { canary: `canary-${nonce}`, nonce },
    { analysisMinChars: 100, learningMinChars: 50 },
  );
  return {
    model: "recorded-answers",
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user },
    ],
  };
}

describe("the recorded answers' replay", () => {
  const recordings = exampleRecordings();

  it("answers each request with the recording of the trace it carries, whatever its nonce", () => {
    expect(recordings.length).toBeGreaterThanOrEqual(10);
    for (const [i, recording] of recordings.entries())
      for (const nonce of ["a1b2c3", `z${String(i)}`])
        expect(findRecording(recordings, requestFor(recording.event, nonce))?.answer.id).toBe(
          recording.answer.id,
        );
  });

  it("has no answer for a trace nobody recorded, or for a request without trace data", () => {
    const [first] = recordings;
    if (!first) throw new Error("no recordings");
    const other: TaskCompleted = {
      ...first.event,
      task: { ...first.event.task, description: "A task no model was asked about" },
    };
    expect(findRecording(recordings, requestFor(other, "abc"))).toBeUndefined();
    expect(
      findRecording(recordings, {
        model: "m",
        messages: [{ role: "user", content: "Evaluate this answer." }],
      }),
    ).toBeUndefined();
  });

  it("serves the recorded text as it was written, with token estimates", () => {
    const [first] = recordings;
    if (!first) throw new Error("no recordings");
    const body = requestFor(first.event, "abc");
    const completion = chatCompletion(body, first.answer.content);
    expect(completion.choices[0]?.message.content).toBe(first.answer.content);
    expect(completion.usage.completion_tokens).toBe(Math.ceil(first.answer.content.length / 4));
    expect(completion.model).toBe("recorded-answers");
  });
});

describe("the demo's reasons for a verdict", () => {
  const outcome = (over: Partial<ReflectionOutcome>): ReflectionOutcome =>
    ({
      verdict: "accepted",
      violations: [],
      generator: "reused",
      occurrences: 3,
      notStoredReason: null,
      metrics: {
        completeness: 1,
        depthScore: 0.9,
        actionabilityScore: 1,
        patternValidity: 1,
        relevanceScore: 0.8,
        noveltyScore: 0.5,
      },
      ...over,
    }) as ReflectionOutcome;

  it("explains `accepted` by every check against its threshold, and a recalled one by its recurrences", () => {
    const reasons = verdictReasons(outcome({}));
    expect(reasons[0]).toBe(
      "every check passed: completeness 1.00 ≥ 0.9, depth 0.90 ≥ 0.7, actionability 1.00 ≥ 0.8, relevance 0.80 ≥ 0.6, novelty 0.50 ≥ 0.3, patterns proven 1.00 ≥ 0.75",
    );
    expect(reasons[1]).toMatch(/proven by the lesson's own recurrences \(occurrence 3; 3 needed\)/);
    expect(verdictReasons(outcome({ generator: "openai" }))).toHaveLength(1);
  });

  it("explains a warning or a rejection by the judge's violations and why it was not stored", () => {
    const reasons = verdictReasons(
      outcome({
        verdict: "rejected",
        violations: ["Incomplete reflection: 0.50 < 0.9"],
        notStoredReason: "rejected by the quality judge",
      }),
    );
    expect(reasons).toEqual([
      "Incomplete reflection: 0.50 < 0.9",
      "not stored: rejected by the quality judge",
    ]);
  });
});
