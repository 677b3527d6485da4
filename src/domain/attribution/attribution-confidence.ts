/**
 * How sure each attribution rule is: explicit evidence high, textual cues middling, the fallback
 * a guess. The confidences were measured: how often each basis named the annotated step, on public
 * annotated failure logs for the rules that fire there (bench/attribution.ts), else on a corpus of
 * labelled multi-agent failures written here (docs/architecture.md, "Failure attribution").
 */
export const attributionConfidence = {
  explicitErrorWithTool: 0.9,
  explicitError: 0.8,
  messageMatch: 0.7,
  claimMatch: 0.6,
  ignoredError: 0.6,
  shortcut: 0.55,
  computedBy: 0.5,
  /**
   * The step the answer's value was first stated at: right for 2 of the 10 runs it decided on the
   * tune split of public annotated failure logs (bench/attribution.ts), although 40 of 53 on the
   * corpus written here; the real logs are the yardstick.
   */
  answerSource: 0.2,
  reasoningCue: 0.5,
  emptyResponse: 0.5,
  failureText: 0.45,
  /** An explicit error the trace later worked around, when nothing else points anywhere. */
  recoveredError: 0.42,
  repetition: 0.4,
  /** Subtracted when an orchestrator's report points at an earlier agent step. */
  reportedByOrchestrator: 0.1,
  lastAgentStep: 0.3,
  /**
   * The shape rules (team-rules.ts), each its precision at naming the annotated step on the tune
   * split of public annotated failure logs (bench/attribution.ts): 55 of 64, 16 of 54, 8 of 35.
   */
  firstStateChange: 0.85,
  firstCode: 0.3,
  firstWorkerStep: 0.2,
  lastStep: 0.2,
  noSteps: 0.05,
} as const;
