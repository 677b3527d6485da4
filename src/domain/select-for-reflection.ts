import type { TaskCompleted } from "./contracts/index.js";
import { findingFromEvaluation } from "./evaluation/reflection-from-evaluation.js";

/** `off`: reflective memory disabled (REFLECTIVE_MEMORY_ENABLED=false): nothing is reflected on. */
export type ReflectionMode = "lite" | "full" | "off";

/**
 * The `lite` and `full` modes (docs/specification.md#modes-lite-and-full), for a stream processor.
 * "On demand" is the agent's own event: every `agent.task.completed` is a request for a reflection,
 * so both modes reflect per event, and neither needs a separate "please reflect" flag. What `lite`
 * gives up is everything Reflector would do on its own initiative: reflections on successes
 * (`selectForReflection`) and the periodic dreaming job (`runsPeriodicReflection`). Pruning is
 * storage housekeeping, not reflection, and runs in both modes.
 */
export function runsPeriodicReflection(mode: ReflectionMode): boolean {
  return mode === "full";
}

export interface Selection {
  reflect: boolean;
  reason: string;
}

/**
 * Selective reflection (docs/specification.md#selective-reflection): reflecting costs an LLM call,
 * so trivial successes are finalized without one. Every non-success is reflected on. In `lite` mode
 * successes never are; in `full` mode a success is worth a reflection when it ran at the
 * `container-full` tier or its importance is above `minSuccessImportance`.
 */
export function selectForReflection(
  event: Pick<TaskCompleted, "outcome" | "task" | "verificationResults" | "evaluation" | "scores">,
  mode: ReflectionMode,
  minSuccessImportance = 0.7,
): Selection {
  // Reflective memory off: no reflection, no signature, no lesson; the loop's decision still comes.
  if (mode === "off") return { reflect: false, reason: "reflective memory disabled" };
  if (event.outcome !== "success") return { reflect: true, reason: `outcome ${event.outcome}` };
  if (mode === "lite") return { reflect: false, reason: "lite mode reflects on failures only" };
  // From here on `full` mode: a success is reflected on only when it holds a lesson worth a call.
  // A success the evaluator had to correct (a conflict, an unverified claim, a big
  // quality gain) carries a lesson even though the task did not fail.
  const finding = findingFromEvaluation(event);
  if (finding) return { reflect: true, reason: `success with evaluation finding ${finding.errorType}` };
  const { tier, importance } = event.task;
  if (tier === "inline" || tier === "oracle-only")
    return { reflect: false, reason: `success at tier ${tier}` };
  if (tier === "container-full") return { reflect: true, reason: "success at tier container-full" };
  if (importance !== undefined && importance > minSuccessImportance) {
    return { reflect: true, reason: `success with importance ${importance} > ${minSuccessImportance}` };
  }
  return { reflect: false, reason: "routine success" };
}
