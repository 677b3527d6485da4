import { describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../../src/adapters/llm/heuristic-generator.js";
import type { ReflectionOutcome, LoopDecision } from "../../../src/domain/contracts/index.js";
import type { GenerationRequest, ReflectionGenerator } from "../../../src/pipeline/ports.js";
import { computeErrorSignature } from "../../../src/domain/signature.js";
import { createFakeIndex, createFakeStore, createOfflineProcessor } from "../../support/fakes.js";
import { taskEvent } from "../../support/task-events.js";

function setup(generator: ReflectionGenerator = createHeuristicGenerator()) {
  const store = createFakeStore();
  const index = createFakeIndex();
  let calls = 0;
  const counting: ReflectionGenerator = {
    name: generator.name,
    generate: (request) => {
      calls += 1;
      return generator.generate(request);
    },
  };
  const processor = createOfflineProcessor(
    { store: store.store, index: index.index },
    { generator: counting, clock: { now: () => new Date("2026-11-20T10:00:05.000Z") } },
  );
  return { processor, store, index, calls: () => calls };
}

const outcomeOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role !== "loopDecision")?.value as ReflectionOutcome | undefined;
const decisionOf = (outputs: { role: string; value: unknown }[]) =>
  outputs.find((o) => o.role === "loopDecision")?.value as LoopDecision | undefined;

describe("task processor (in-memory ports)", () => {
  it("reflects, stores, decides and returns both outputs with stable ids", async () => {
    const { processor, store, index } = setup();
    const event = taskEvent();
    const result = await processor.process(event);
    expect(result.status).toBe("processed");
    const outcome = outcomeOf(result.outputs);
    expect(outcome).toMatchObject({
      generator: "heuristic",
      stored: true,
      deduplicated: false,
      occurrences: 1,
    });
    expect(outcome?.attempts).toBeGreaterThanOrEqual(1);
    expect(decisionOf(result.outputs)).toMatchObject({ decision: "rerun", newLoopId: `${event.loopId}_r1` });
    expect(store.reflections.size).toBe(1);
    expect(index.signatures.size).toBe(1);
    expect(index.events.has(`${event.tenantId}|${event.eventId}`)).toBe(true);
  });

  it("publishes a committed event id again only for the record that committed it", async () => {
    const { processor, calls } = setup();
    const event = taskEvent();
    const first = await processor.process(event, "in/0/7");
    expect(first.status).toBe("processed");
    const before = calls();
    // The same record after a crash: its outputs may not have committed, so they go out again.
    const redelivered = await processor.process(event, "in/0/7");
    expect(redelivered).toMatchObject({ status: "replayed", outputs: first.outputs });
    // A second record of the same event (a producer's retry, a DLQ replay): nothing at all.
    const duplicate = await processor.process(event, "in/3/12");
    expect(duplicate).toMatchObject({ status: "duplicate", outputs: [] });
    expect(calls()).toBe(before);
  });

  it("publishes nothing when another record commits the event id first (concurrent duplicate)", async () => {
    const { processor, index } = setup();
    const event = taskEvent();
    // Both records pass the processed check before either commits: the Redis mark is missing.
    const [a, b] = await Promise.all([
      processor.process(event, "in/0/1"),
      processor.process(event, "in/2/9"),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual(["duplicate", "processed"]);
    expect([a, b].find((r) => r.status === "duplicate")?.outputs).toEqual([]);
    expect(index.events.size).toBe(1);
  });

  it("replays an already processed event from the store without work", async () => {
    const { processor, calls } = setup();
    const event = taskEvent();
    const first = await processor.process(event);
    const before = calls();
    const again = await processor.process(event);
    expect(again.status).toBe("replayed");
    expect(again.outputs).toEqual(first.outputs);
    expect(calls()).toBe(before);
  });

  it("reuses a known signature at no generator cost, also after Redis is lost", async () => {
    const { processor, index, calls } = setup();
    await processor.process(taskEvent());
    const afterFirst = calls();
    const second = await processor.process(taskEvent());
    expect(outcomeOf(second.outputs)).toMatchObject({
      deduplicated: true,
      occurrences: 2,
      generator: "reused",
      attempts: 0,
    });
    index.clear(); // Redis lost: Postgres answers and the cache refills.
    const third = await processor.process(taskEvent());
    expect(outcomeOf(third.outputs)).toMatchObject({ deduplicated: true, occurrences: 3 });
    expect(calls()).toBe(afterFirst);
    expect(index.signatures.size).toBe(1);
  });

  it("finalizes routine successes without reflecting", async () => {
    const { processor, calls } = setup();
    const result = await processor.process(
      taskEvent({ outcome: "success", error: undefined, task: { description: "say hi", tier: "inline" } }),
    );
    expect(result.outputs.map((o) => o.role)).toEqual(["loopDecision"]);
    expect(decisionOf(result.outputs)?.decision).toBe("finalize");
    expect(calls()).toBe(0);
  });

  it("publishes a rejected reflection without storing it", async () => {
    const vague: ReflectionGenerator = {
      name: "heuristic",
      generate: () =>
        Promise.resolve({
          reflectionText: "It failed.",
          strategyText: null,
          importance: 0.2,
          confidence: 0.2,
          tags: [],
          errorCategory: null,
          patterns: [],
          adjustments: ["do better next time"],
          learning: "be careful",
        }),
    };
    const { processor, store, calls } = setup(vague);
    const result = await processor.process(taskEvent());
    const outcome = outcomeOf(result.outputs);
    expect(result.outputs.find((o) => o.role !== "loopDecision")?.role).toBe("reflectionRejected");
    expect(outcome).toMatchObject({ verdict: "rejected", stored: false, reflectionId: null, attempts: 3 });
    expect(outcome?.violations.length).toBeGreaterThan(0);
    expect(calls()).toBe(3);
    expect(store.reflections.size).toBe(0);
  });

  it("surfaces a store outage as a retryable error and succeeds on retry", async () => {
    const { processor, store } = setup();
    store.failNextCommits(1);
    const event = taskEvent();
    await expect(processor.process(event)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    const result = await processor.process(event);
    expect(result.status).toBe("processed");
    expect(store.processed.size).toBe(1);
  });

  it("self-evaluates an answered task and asks the loop to retry when quality < 0.5", async () => {
    const { processor } = setup();
    const result = await processor.process(
      taskEvent({
        outcome: "partial",
        error: undefined,
        scores: { alignment: 0.9, drift: 0.1 },
        task: {
          description: "Answer a billing question",
          query: "Which plan includes SSO, and how much does it cost per seat per month?",
          answer: "I'm not sure, maybe",
        },
        events: [],
      }),
    );
    const outcome = outcomeOf(result.outputs);
    expect(outcome?.answerEvaluation).toMatchObject({ evaluator: "heuristic", shouldRetry: true });
    expect(outcome?.answerEvaluation?.quality).toBeLessThan(0.5);
    expect(outcome?.reflection.reflectionText).toContain("Self-evaluation of the answer found");
    const decision = decisionOf(result.outputs);
    expect(decision?.decision).toBe("rerun");
    expect(decision?.triggers).toContain("self_evaluation");
  });

  it("keeps a reflection from an evaluation only when it changed behaviour", async () => {
    // The offline claim-check lesson reads the same for every conflicting claim, which the judge
    // does not store; this generator adds the value the verification gave.
    const offline = createHeuristicGenerator();
    const { processor, store } = setup({
      name: "heuristic",
      generate: async (request) => {
        const reflection = await offline.generate(request);
        return {
          ...reflection,
          adjustments: [
            ...reflection.adjustments,
            "add constraint: the entry-into-force date must be 1 August 2024 as EUR-Lex gives, not the draft's 2025",
          ],
        };
      },
    });
    const corrected = (revised: boolean) =>
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
        evaluation: { revised },
        events: [],
      });
    const unchanged = outcomeOf((await processor.process(corrected(false))).outputs);
    expect(unchanged).toMatchObject({
      stored: false,
      reflectionId: null,
      evaluationFinding: { errorType: "conflict", changedBehaviour: false },
    });
    expect(unchanged?.notStoredReason).toMatch(/did not change the agent's behaviour/);
    expect(unchanged?.signature).toBe(
      computeErrorSignature(
        "conflict",
        "Detected conflict: EUR-Lex gives <n> August <n>; the draft said <n>",
      ),
    );
    expect(store.reflections.size).toBe(0);

    const changed = outcomeOf((await processor.process(corrected(true))).outputs);
    expect(changed).toMatchObject({ stored: true, evaluationFinding: { changedBehaviour: true } });
    expect(changed?.reflection.errorCategory).toBe("conflicting_claim");
    expect(store.reflections.size).toBe(1);
  });

  it("tells the generator the tenant's common issues once low-quality results repeat (adaptive prompting)", async () => {
    const requests: GenerationRequest[] = [];
    const vague: ReflectionGenerator = {
      name: "heuristic",
      generate: (request) => {
        requests.push(request);
        return Promise.resolve({
          reflectionText: "It failed.",
          strategyText: null,
          importance: 0.2,
          confidence: 0.2,
          tags: [],
          errorCategory: null,
          patterns: [],
          adjustments: ["do better next time"],
          learning: "be careful",
        });
      },
    };
    const { processor, store } = setup(vague);
    const failure = (n: number) =>
      taskEvent({
        error: {
          category: "tool_error",
          message: `tool ${String(n)} exploded in a new way`,
          type: `t${String(n)}`,
        },
      });
    await processor.process(failure(1));
    expect(requests[0]?.insights).toEqual([]);
    await processor.process(failure(2));
    expect(store.judgements).toHaveLength(2);
    requests.length = 0;
    await processor.process(failure(3));
    expect(requests[0]?.insights).toContain("Not actionable (in 2 recent low-quality results)");
    expect(requests[0]?.insights).toContain("Shallow reflection (in 2 recent low-quality results)");
  });

  it("decides again when the commit reports stale loop state, and generates only once", async () => {
    const { processor, store, calls } = setup();
    const realCommit = store.store.commit.bind(store.store);
    const realContext = store.store.loopContext.bind(store.store);
    let commits = 0;
    let contexts = 0;
    let callsAtFirstCommit = -1;
    // The first commit finds the bias history moved by another family (history 1 → 2 under it).
    store.store.commit = (unit, build) => {
      commits += 1;
      if (commits === 1) callsAtFirstCommit = calls();
      if (commits === 1)
        return Promise.resolve({ committed: false, outputs: [], occurrences: null, staleLoopState: true });
      return realCommit(unit, build);
    };
    store.store.loopContext = async (event) => {
      contexts += 1;
      const context = await realContext(event);
      return { ...context, biasHistory: new Map([["groupthink", contexts === 1 ? 1 : 2]]) };
    };
    const event = taskEvent({ biasTags: [{ tag: "groupthink" }] });
    store.seedBias(event.tenantId, "groupthink", 2);
    const result = await processor.process(event);
    expect(result.status).toBe("processed");
    expect([commits, contexts]).toEqual([2, 2]);
    // Only the decision is redone: no generator call after the stale commit.
    expect(calls()).toBe(callsAtFirstCommit);
    expect(decisionOf(result.outputs)).toMatchObject({ decision: "halt", biasEcho: true });
  });

  it("reads the loop context while it finds the lesson, and a failure before the decision leaves no read unhandled", async () => {
    let contexts = 0;
    let contextsAtGenerate = -1;
    const failing: ReflectionGenerator = {
      name: "heuristic",
      generate: () => {
        contextsAtGenerate = contexts;
        return Promise.reject(new Error("generator down"));
      },
    };
    const { processor, store } = setup(failing);
    store.store.loopContext = () => {
      contexts += 1;
      return Promise.reject(new Error("postgres down"));
    };
    // The generator's failure is the event's; the loop context's rejection is not left unhandled
    // (vitest fails the run on an unhandled rejection).
    await expect(processor.process(taskEvent())).rejects.toThrow("generator down");
    expect(contextsAtGenerate).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
  });
});
