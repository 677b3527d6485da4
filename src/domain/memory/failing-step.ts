import type { TaskCompleted, TraceEvent } from "../contracts/index.js";
import { classifyFailure } from "../heuristic/classify-failure.js";

/** The step where a failed trace went wrong, when the trace shows one. */
export function failingStepOf(event: TaskCompleted): TraceEvent | undefined {
  if (event.outcome === "success") return undefined;
  return classifyFailure(event).failingStep;
}
