import { describe, expect, it } from "vitest";
import type { AnswerEvaluation } from "../../../../src/domain/evaluation/answer-evaluation.js";
import type { AnswerEvaluator } from "../../../../src/pipeline/ports.js";
import { evaluateAnswer } from "../../../../src/pipeline/stages/evaluate-answer.js";
import { untimed } from "../../../../src/pipeline/stage-timer.js";
import { taskEvent } from "../../../support/task-events.js";
import { eventState, stageDeps } from "./stage-fixtures.js";

function evaluator(name: AnswerEvaluator["name"], asked: string[]): AnswerEvaluator {
  return {
    name,
    evaluate: () => {
      asked.push(name);
      return Promise.resolve({ evaluator: name, shouldRetry: true } as unknown as AnswerEvaluation);
    },
  };
}

function setup() {
  const asked: string[] = [];
  const routes: string[] = [];
  const { deps: base } = stageDeps();
  const deps = {
    answerEvaluator: evaluator("openai", asked),
    spend: { answerEvaluator: evaluator("heuristic", asked) },
    timer: untimed,
  };
  const state = (event = taskEvent(), route: "model" | "offline" = "offline") =>
    eventState(base, event, {
      route: () => {
        routes.push(route);
        return Promise.resolve(route);
      },
    });
  return { deps, state, asked, routes };
}

const answered = () =>
  taskEvent({ task: { description: "Answer the question", query: "When?", answer: "In 2024." } });

describe("stage evaluate answer", () => {
  it("evaluates nothing for an event that is not reflected on, and asks no gate", async () => {
    const { deps, state, asked, routes } = setup();
    const success = taskEvent({
      outcome: "success",
      error: undefined,
      task: { description: "x", tier: "inline" },
    });
    expect((await evaluateAnswer(deps, state(success))).answerEvaluation).toBeNull();
    expect([asked, routes]).toEqual([[], []]);
  });

  it("judges an answer with the offline evaluator when the tenant's work is routed offline", async () => {
    const { deps, state, asked, routes } = setup();
    const { answerEvaluation } = await evaluateAnswer(deps, state(answered()));
    expect(answerEvaluation?.evaluator).toBe("heuristic");
    expect([asked, routes]).toEqual([["heuristic"], ["offline"]]);
    await evaluateAnswer(deps, state(answered(), "model"));
    expect(asked).toEqual(["heuristic", "openai"]);
  });

  it("does not ask the gate when there is no answer to judge", async () => {
    const { deps, state, asked, routes } = setup();
    await evaluateAnswer(deps, state(taskEvent()));
    expect([asked, routes]).toEqual([["openai"], []]);
  });
});
