import { evaluateAnswerHeuristically } from "../../domain/evaluation/answer-evaluation.js";
import type { AnswerEvaluator } from "../../pipeline/ports.js";

/**
 * Offline self-evaluation from what the event states: verification results,
 * hedging, coverage of the question, length. Labelled `heuristic` on every output.
 */
export function createHeuristicAnswerEvaluator(): AnswerEvaluator {
  return { name: "heuristic", evaluate: (event) => Promise.resolve(evaluateAnswerHeuristically(event)) };
}
