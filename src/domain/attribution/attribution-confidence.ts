/**
 * Each rule's prior confidence, before the calibration (calibration.ts) replaces it with what was
 * measured on public annotated logs. What the trace reports itself (an error event, the task's
 * message, a refuted claim) keeps its prior: such steps are rare in public logs, so unmeasured.
 */
export const attributionConfidence = {
  explicitErrorWithTool: 0.9,
  explicitError: 0.8,
  messageMatch: 0.7,
  claimMatch: 0.6,
  failureText: 0.45,
  /** An explicit error the trace later worked around, when nothing else points anywhere. */
  recoveredError: 0.42,
  repetition: 0.4,
  /** Subtracted when an orchestrator's report points at an earlier agent step. */
  reportedByOrchestrator: 0.1,
  /**
   * A tool-using agent's first call that changed state (state-change.ts): the rule's precision on
   * the tuned τ-bench airline runs; the calibration replaces it by what was measured.
   */
  firstStateChange: 0.85,
  noSteps: 0.05,
} as const;
