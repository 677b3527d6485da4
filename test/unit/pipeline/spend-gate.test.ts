import { describe, expect, it } from "vitest";
import { createHeuristicAnswerEvaluator } from "../../../src/adapters/llm/heuristic-answer-evaluator.js";
import { createHeuristicGenerator } from "../../../src/adapters/llm/heuristic-generator.js";
import type { ReflectionOutcome } from "../../../src/domain/contracts/index.js";
import { ReflectorError } from "../../../src/domain/errors.js";
import { evaluateAnswerHeuristically } from "../../../src/domain/evaluation/answer-evaluation.js";
import type { AnswerEvaluator, ReflectionGenerator, SpendGate } from "../../../src/pipeline/ports.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

/**
 * The processor's side of the LLM spend limits: the gate is asked once per event that needs the
 * model, and its answer picks the model or the offline generator and evaluator, which the outcome
 * names. The "model" here is the offline generator under the name `openai`, counted.
 */
function setup(routes: Record<string, "model" | "offline" | "wait">) {
  const calls = { model: 0, evaluator: 0, gate: [] as string[] };
  const offline = createHeuristicGenerator();
  const model: ReflectionGenerator = {
    name: "openai",
    generate: (request) => {
      calls.model += 1;
      return offline.generate(request);
    },
  };
  const modelEvaluator: AnswerEvaluator = {
    name: "openai",
    evaluate: (event) => {
      calls.evaluator += 1;
      const evaluation = evaluateAnswerHeuristically(event);
      return Promise.resolve(evaluation ? { ...evaluation, evaluator: "openai" } : null);
    },
  };
  const gate: SpendGate = {
    admit: (tenantId) => {
      calls.gate.push(tenantId);
      const route = routes[tenantId] ?? "model";
      if (route === "wait") {
        return Promise.reject(new ReflectorError("LLM_BUDGET_EXHAUSTED", `${tenantId} is over budget`));
      }
      return Promise.resolve(route);
    },
    record: () => Promise.resolve(),
  };
  const store = createFakeStore();
  const processor = createOfflineProcessor(
    { store: store.store, index: createFakeIndex().index },
    {
      generator: model,
      answerEvaluator: modelEvaluator,
      spend: {
        gate,
        generator: createHeuristicGenerator(),
        answerEvaluator: createHeuristicAnswerEvaluator(),
      },
    },
  );
  return { processor, calls, store };
}

const outcomeOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome | undefined;

const withAnswer = (tenantId: string) =>
  taskEvent({
    tenantId,
    task: {
      description: "Fetch customer order history",
      goal: "Retrieve all orders for customer analysis",
      query: "How many orders did customer 4411 place?",
      answer: "Probably around 12 orders, I think.",
    },
  });

describe("task processor with a spend gate", () => {
  it("a tenant within budget gets the model for its evaluation and its reflection; the gate is asked once", async () => {
    const { processor, calls } = setup({});
    const result = await processor.process(withAnswer("tenant-b"));
    const outcome = outcomeOf(result.outputs);
    expect(outcome?.generator).toBe("openai");
    expect(outcome?.answerEvaluation?.evaluator).toBe("openai");
    expect(calls.model).toBeGreaterThanOrEqual(1);
    expect(calls.evaluator).toBe(1);
    expect(calls.gate).toEqual(["tenant-b"]);
  });

  it("a tenant over budget (heuristic) gets the offline generator and evaluator, labelled so, and no model call", async () => {
    const { processor, calls, store } = setup({ "tenant-a": "offline" });
    const result = await processor.process(withAnswer("tenant-a"));
    const outcome = outcomeOf(result.outputs);
    expect(outcome?.generator).toBe("heuristic");
    expect(outcome?.answerEvaluation?.evaluator).toBe("heuristic");
    expect(calls.model).toBe(0);
    expect(calls.evaluator).toBe(0);
    const stored = [...store.reflections.values()];
    expect(stored.map((r) => r.generator)).toEqual(["heuristic"]);
  });

  it("a tenant over budget (wait) is held with LLM_BUDGET_EXHAUSTED before anything is written", async () => {
    const { processor, calls, store } = setup({ "tenant-a": "wait" });
    const err = await processor.process(taskEvent({ tenantId: "tenant-a" })).catch((e: unknown) => e);
    expect((err as ReflectorError).code).toBe("LLM_BUDGET_EXHAUSTED");
    expect(calls.model).toBe(0);
    expect(store.reflections.size).toBe(0);
  });

  it("work that needs no model does not ask the gate: a recurrence of a known lesson, a success", async () => {
    const { processor, calls } = setup({ "tenant-a": "wait" });
    const first = taskEvent({ tenantId: "tenant-b" });
    await processor.process(first);
    calls.gate.length = 0;
    // tenant-b's second occurrence of the same failure reuses the lesson.
    const again = await processor.process({ ...first, eventId: `${first.eventId}-2` });
    expect(outcomeOf(again.outputs)?.generator).toBe("reused");
    // tenant-a (over budget, wait) is not held for a success, which needs no reflection.
    const success = await processor.process(
      taskEvent({ tenantId: "tenant-a", outcome: "success", error: undefined, events: [] }),
    );
    expect(success.status).toBe("processed");
    expect(calls.gate).toEqual([]);
  });
});
