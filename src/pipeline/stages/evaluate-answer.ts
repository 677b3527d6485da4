import { hasAnswerToJudge } from "../../domain/evaluation/answer-evaluation.js";
import type { AnswerEvaluator } from "../ports.js";
import type { EventState } from "../processing-state.js";
import type { StageTimer } from "../stage-timer.js";

export interface EvaluateAnswerDeps {
  answerEvaluator: AnswerEvaluator;
  /** The evaluator that stands in when the spend gate routes the tenant's work offline. */
  spend?: { answerEvaluator: AnswerEvaluator };
  timer: StageTimer;
}

/**
 * Stage "evaluate answer": the self-evaluation of the agent's answer. Judging an answer costs
 * what a reflection costs, so it follows the same selection: events filed under no signature are
 * not evaluated, and the spend gate is asked only when there is an answer to judge.
 */
export async function evaluateAnswer(deps: EvaluateAnswerDeps, state: EventState): Promise<EventState> {
  const { event, candidates } = state.facts;
  if (candidates.length === 0) return { ...state, answerEvaluation: null };
  const evaluator = async () =>
    deps.spend && hasAnswerToJudge(event) && (await state.route()) === "offline"
      ? deps.spend.answerEvaluator
      : deps.answerEvaluator;
  const answerEvaluation = await deps.timer.time("evaluate-answer", async () =>
    (await evaluator()).evaluate(event),
  );
  return { ...state, answerEvaluation };
}
