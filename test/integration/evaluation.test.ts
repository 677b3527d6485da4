import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopDecisionV1, ReflectionOutcomeV1 } from "../../src/domain/contracts/index.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";

let h: Harness;
let tenantId: string;

beforeAll(async () => {
  h = await startHarness();
  tenantId = `tenant-${h.id}`;
});

afterAll(async () => {
  await h.close();
});

async function outcomeAndDecision(eventId: string) {
  const outputs = await h.waitForOutputs(eventId, 2);
  const t = h.config.topics;
  const outcome = outputs.find((o) => o.topic === t.reflectionAccepted || o.topic === t.reflectionRejected);
  const decision = outputs.find((o) => o.topic === t.loopDecision);
  return {
    outcome: ReflectionOutcomeV1.parse(outcome?.value),
    decision: LoopDecisionV1.parse(decision?.value),
  };
}

describe("self-evaluation and reflections from evaluations, on the real services", () => {
  it("stores the answer's self-evaluation, feeds it to the decision, and records the judgement", async () => {
    const event = taskEvent({
      tenantId,
      outcome: "partial",
      error: undefined,
      scores: { alignment: 0.9, drift: 0.1 },
      task: {
        description: "Answer a billing question from the pricing page",
        query: "Which plan includes SSO, and how much does it cost per seat per month?",
        answer: "I'm not sure, maybe the bigger one",
      },
    });
    await h.publish(event);
    const { outcome, decision } = await outcomeAndDecision(event.eventId);
    expect(outcome.answerEvaluation).toMatchObject({ evaluator: "heuristic", shouldRetry: true });
    expect(decision).toMatchObject({ decision: "rerun" });
    expect(decision.triggers).toContain("self_evaluation");

    const evaluation = await h.pool.query<{ quality: number; should_retry: boolean; issues: string[] }>(
      "SELECT quality, should_retry, issues FROM answer_evaluations WHERE tenant_id = $1 AND event_id = $2",
      [tenantId, event.eventId],
    );
    expect(evaluation.rows[0]?.should_retry).toBe(true);
    expect(evaluation.rows[0]?.quality).toBeCloseTo(outcome.answerEvaluation?.quality ?? -1, 2);
    expect(evaluation.rows[0]?.issues).toEqual(outcome.answerEvaluation?.issues);

    const judgement = await h.pool.query<{ verdict: string; quality_score: number; stored: boolean }>(
      "SELECT verdict, quality_score, stored FROM reflection_judgements WHERE tenant_id = $1 AND event_id = $2",
      [tenantId, event.eventId],
    );
    expect(judgement.rows[0]).toMatchObject({ verdict: outcome.verdict, stored: outcome.stored });
    expect(judgement.rows[0]?.quality_score).toBeCloseTo(outcome.qualityScore, 3);
  });

  it("persists a reflection from an evaluation only when the agent changed its answer", async () => {
    const corrected = (revised: boolean) =>
      taskEvent({
        tenantId,
        outcome: "success",
        error: undefined,
        task: { description: "State when the EU AI Act entered into force", tier: "container-light" },
        verificationResults: [
          {
            status: "conflict",
            claimText: "The EU AI Act entered into force on 1 August 2025",
            conflictReason: "EUR-Lex (Art. 113) gives 1 August 2024; the draft said 2025",
          },
        ],
        evaluation: { revised, critique: "Draft date contradicted EUR-Lex; corrected before sending." },
      });
    const kept = corrected(false);
    await h.publish(kept);
    const first = (await outcomeAndDecision(kept.eventId)).outcome;
    expect(first).toMatchObject({
      stored: false,
      reflectionId: null,
      evaluationFinding: { errorType: "conflict", changedBehaviour: false },
    });
    const changed = corrected(true);
    await h.publish(changed);
    const second = (await outcomeAndDecision(changed.eventId)).outcome;
    expect(second).toMatchObject({ stored: true, evaluationFinding: { changedBehaviour: true } });
    expect(second.signature).toBe(first.signature);
    const rows = await h.pool.query<{ signature_type: string }>(
      "SELECT signature_type FROM reflections WHERE tenant_id = $1 AND signature = $2",
      [tenantId, second.signature],
    );
    expect(rows.rows).toEqual([{ signature_type: "conflict" }]);
  });
});
