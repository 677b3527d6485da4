import { describe, expect, it } from "vitest";
import { ReflectorError } from "../../../../src/domain/errors.js";
import { defaultGuardrailConfig } from "../../../../src/domain/guardrails/guardrail-config.js";
import { createLoopCompleter } from "../../../../src/pipeline/complete-loop.js";
import { decisionMessage } from "../../../../src/pipeline/decision-message.js";
import type {
  CommitResult,
  LoopContext,
  OutboundMessage,
  UnitOfWork,
} from "../../../../src/pipeline/ports.js";
import { decideAndCommit, maxLoopDecisions } from "../../../../src/pipeline/stages/decide-and-commit.js";
import { createFakeStore } from "../../../support/fakes.js";
import { taskEvent } from "../../../support/task-events.js";
import { now } from "./stage-fixtures.js";

/** A fake store whose first `stale` commits find the bias history moved under the decision. */
function setup(stale: number) {
  const fake = createFakeStore();
  const counts = { commits: 0, contexts: 0 };
  const realCommit = fake.store.commit.bind(fake.store);
  const realContext = fake.store.loopContext.bind(fake.store);
  const store = {
    loopContext: (event: Parameters<typeof realContext>[0]) => {
      counts.contexts += 1;
      return realContext(event);
    },
    commit: (unit: UnitOfWork, outputs: OutboundMessage[]): Promise<CommitResult> => {
      counts.commits += 1;
      if (counts.commits <= stale)
        return Promise.resolve({ committed: false, outputs: [], occurrences: null, staleLoopState: true });
      return realCommit(unit, outputs);
    },
  };
  return { store, counts };
}

function request(event = taskEvent(), prefetched?: Promise<LoopContext>) {
  const units: UnitOfWork[] = [];
  return {
    units,
    request: {
      event,
      answerNeedsRetry: false,
      ...(prefetched ? { prefetched } : {}),
      unitOf: (loop: UnitOfWork["loop"]): UnitOfWork => {
        const unit = {
          event,
          signature: null,
          store: null,
          loop,
          answerEvaluation: null,
          episode: "",
          judgement: null,
          decidedAt: now,
          sourceRecord: null,
        };
        units.push(unit);
        return unit;
      },
      outputsOf: (loop: UnitOfWork["loop"]) => [decisionMessage(event, loop, now)],
    },
  };
}

describe("decide and commit", () => {
  it("commits the first decision from the context read in advance", async () => {
    const { store, counts } = setup(0);
    const event = taskEvent();
    const { request: r, units } = request(event, createFakeStore().store.loopContext(event));
    const { loop, result } = await decideAndCommit({ store, guardrails: defaultGuardrailConfig }, r);
    expect(result).toMatchObject({ committed: true });
    expect(result.outputs[0]?.value).toMatchObject({ decision: loop.decision, loopId: event.loopId });
    expect([counts.contexts, counts.commits, units.length]).toEqual([0, 1, 1]);
  });

  it("decides again from a fresh context when the commit finds the loop state moved", async () => {
    const { store, counts } = setup(2);
    const event = taskEvent();
    const { request: r, units } = request(event, createFakeStore().store.loopContext(event));
    const { result } = await decideAndCommit({ store, guardrails: defaultGuardrailConfig }, r);
    expect(result.committed).toBe(true);
    expect([counts.contexts, counts.commits, units.length]).toEqual([2, 3, 3]);
  });

  it(`gives up as retryable after ${String(maxLoopDecisions)} decisions`, async () => {
    const { store, counts } = setup(Infinity);
    const committing = decideAndCommit({ store, guardrails: defaultGuardrailConfig }, request().request);
    await expect(committing).rejects.toThrow(ReflectorError);
    await expect(committing).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(counts.commits).toBe(maxLoopDecisions);
  });

  it("bounds the HTTP loop completion by the same number of decisions", async () => {
    const { store, counts } = setup(Infinity);
    const completeLoop = createLoopCompleter({
      store,
      guardrails: defaultGuardrailConfig,
      clock: { now: () => now },
    });
    const completion = {
      tenantId: "tenant-a",
      projectId: "p",
      loopId: "loop-1",
      outcome: "failure" as const,
      biasTags: [],
    };
    await expect(completeLoop(completion)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(counts.commits).toBe(maxLoopDecisions);
    expect(counts.contexts).toBe(maxLoopDecisions);
  });
});
