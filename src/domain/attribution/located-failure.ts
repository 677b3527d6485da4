import type { Attribution, TraceEvent } from "../contracts/index.js";
import { evidenceMaxChars } from "./trace-scan.js";

/** Which rule found the step a failure is attributed to (attribute-failure.ts lists them in order). */
export type AttributionBasis =
  | "explicit_error"
  | "message_match"
  | "claim_match"
  | "failure_text"
  | "repetition"
  | "first_state_change"
  | "structural_fallback"
  | "no_steps";

/**
 * The bases that are what the trace reports itself (an error event, the task's own error message, a
 * refuted claim): facts, not inferences, and what says how a step went wrong.
 */
export const reportedBases: ReadonlySet<AttributionBasis> = new Set([
  "explicit_error",
  "message_match",
  "claim_match",
]);

export interface LocatedFailure {
  basis: AttributionBasis;
  /** Index into `event.events`; undefined only when the trace has no steps. */
  stepIndex: number | undefined;
  step: TraceEvent | undefined;
  attribution: Attribution;
  /**
   * Where the evidence rules pointed when their kind was not trusted and the fallback answered:
   * still the step a reader (or a model) should see in full.
   */
  evidenceIndex?: number;
}

/**
 * The failure found at step `index` on `basis`: the step's agent and tool (or, for a tool's
 * output that names neither, those of `toolFrom`, the call that led to it), the confidence and
 * the evidence, cut to `evidenceMaxChars`.
 */
export function locatedAt(
  steps: readonly TraceEvent[],
  basis: AttributionBasis,
  index: number,
  confidence: number,
  evidence: string,
  toolFrom?: TraceEvent,
): LocatedFailure {
  const step = steps[index];
  const actor = step?.actor ?? toolFrom?.actor;
  const toolName = step?.toolName ?? toolFrom?.toolName;
  return {
    basis,
    stepIndex: index,
    step,
    attribution: {
      ...(step ? { eventId: step.eventId, stepIndex: index } : {}),
      ...(actor !== undefined ? { actor } : {}),
      ...(toolName !== undefined ? { toolName } : {}),
      confidence,
      evidence: evidence.slice(0, evidenceMaxChars),
    },
  };
}
